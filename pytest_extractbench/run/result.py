"""What a finished run gives back: metrics per model, records, gate verdicts and where its files are.

:func:`load_run` reads a run directory (metrics.json + samples.jsonl) back into the same object, so a
notebook can look at a run that pytest made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analysis import catalog
from ..core import rundoc
from ..core.errors import ExtractbenchError
from ..core.files import METRICS_FILE, SAMPLES_FILE
from ..dataset.records import SampleRecord, TrackRecord
from ..gating.regression import CheckResult
from ..gating.sla import GateCheck
from ..scoring import ScoringOptions
from ..scoring.result import FieldResult


class UnknownMetric(ExtractbenchError, KeyError):
    """:meth:`RunResult.metric` was asked for a name that is no metric (the message lists the known ones)."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""


@dataclass
class RunResult:
    """One run's outcome. ``metrics[model]`` is the ``models.<model>`` object of metrics.json.

    The same types whether :func:`~.api.evaluate` made it or :func:`load_run` read it: ``metrics`` and
    ``run_level`` hold JSON's types (as metrics.json reads back), ``checks`` and ``requirements`` GateChecks,
    ``regressions`` CheckResults. Only ``comparison`` (the in-memory RunComparison) is None once read back:
    ``run_level["baseline_comparison"]`` holds it in both."""

    run_dir: Path
    track: str = "extraction"
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    run_level: dict[str, Any] = field(default_factory=dict)  # comparison, baselines: metrics.json's other sections
    records: list[SampleRecord | TrackRecord] = field(default_factory=list)
    checks: dict[str, list[GateCheck]] = field(default_factory=dict)
    requirements: dict[str, list[GateCheck]] = field(default_factory=dict)  # --extractbench-require, per model
    regressions: list[CheckResult] = field(default_factory=list)  # the baseline checks that failed
    comparison: Any = None  # the RunComparison with --extractbench-compare (made by this process only)
    saved_baseline: Path | None = None
    report_files: list[Path] = field(default_factory=list)
    report_errors: list[str] = field(default_factory=list)
    # files the disk refused (full, over quota, read-only), each "<path>: not written: <reason>": the run failed
    write_errors: list[str] = field(default_factory=list)
    document: rundoc.MetricsDocument | dict[str, Any] = field(default_factory=dict)  # metrics.json as written

    @property
    def models(self) -> list[str]:
        return list(self.metrics)

    @property
    def sla_passed(self) -> bool:
        """Every model meets the SLA tier (a threshold that does not apply does not fail it; one that could not be
        measured does, unless the run lets it warn)."""
        return all(check.passed is not False for checks in self.checks.values() for check in checks)

    @property
    def requirements_passed(self) -> bool:
        """Every threshold given with --extractbench-require holds, or does not apply to the run (one that could not
        be measured fails, unless the run lets it warn)."""
        return all(check.passed is not False for checks in self.requirements.values() for check in checks)

    @property
    def gate_passed(self) -> bool:
        """The SLA tier, the required thresholds and the baseline regression checks all pass: what decides the
        exit status."""
        return self.sla_passed and self.requirements_passed and not self.regressions

    def metric(self, name: str, model: str | None = None) -> Any:
        """One entry of one model's metrics (the only model when there is one): a metrics.json name
        (``extraction_quality_score``, ``num_samples``, ``performance``) or a short alias as
        ``--extractbench-compare-fail`` takes it (``eqs``, ``f1``, ``validity``, ``hallucination``...).
        A catalog metric this run did not measure is None; a name that is neither raises :class:`UnknownMetric`
        listing the known ones."""
        if model is None:
            if len(self.metrics) != 1:
                raise ValueError(f"this run has {len(self.metrics)} models: name one of {sorted(self.metrics)}")
            model = next(iter(self.metrics))
        entries = self.metrics[model]
        key = name.strip().lower().replace("-", "_")
        key = catalog.aliases().get(key, key)
        if key in entries:
            return entries[key]
        if catalog.get(key) is not None:  # known, not measured by this run (the judge's grade without a judge)
            return None
        known = sorted({*entries, *catalog.aliases()})
        raise UnknownMetric(f"unknown metric {name!r}; known: {', '.join(known)}")

    def to_pandas(self, level: str = "sample") -> Any:
        """The per-sample results as a pandas DataFrame: one row per (model, sample), the columns of
        samples.csv; ``level="field"`` gives one row per (model, sample, field) with its category, score,
        expected and predicted values. pandas is optional: ``pip install pandas``."""
        try:
            import pandas
        except ImportError:
            raise ImportError(
                "RunResult.to_pandas() needs pandas, which is not installed: pip install pandas"
            ) from None
        if level == "sample":
            from ..report.rows import sample_row

            return pandas.DataFrame([sample_row(rundoc.expand(record.to_dict())) for record in self.records])
        if level == "field":
            rows = []
            for record in self.records:
                score = getattr(record, "score", None)
                for result in getattr(score, "fields", ()):
                    rows.append({"model": record.model, "sample_id": record.sample_id, **result._asdict()})
            return pandas.DataFrame(rows, columns=["model", "sample_id", *FieldResult._fields])
        raise ValueError(f"level must be 'sample' or 'field', not {level!r}")

    def __repr__(self) -> str:
        verdict = "passed" if self.gate_passed else "FAILED"
        return f"RunResult({self.track}, models={self.models}, {len(self.records)} records, gate {verdict}, {self.run_dir})"


def gate_results(
    document: rundoc.MetricsDocument,
) -> tuple[dict[str, list[GateCheck]], dict[str, list[GateCheck]], list[CheckResult]]:
    """The SLA checks and required thresholds per model, and the failed baseline checks, of a metrics document."""
    models = document["models"]
    checks = {
        model: [GateCheck(**c) for c in (section.get("sla") or {}).get("checks", [])]
        for model, section in models.items()
    }
    required = {
        model: [GateCheck(**c) for c in section["requirements"].get("checks", [])]
        for model, section in models.items()
        if isinstance(section.get("requirements"), dict)
    }
    comparison = document.get("baseline_comparison")  # its checks filled by rundoc.complete when it is there
    regressions = [CheckResult.from_dict(c) for c in (comparison["checks"] if comparison else []) if c["failed"]]
    return checks, required, regressions


def load_run(run_dir: str | Path) -> RunResult:
    """Read a run directory written by pytest --extractbench, ``extractbench run`` or :func:`evaluate`."""
    path = Path(run_dir)
    document, samples = rundoc.read_run(path)  # RunDocError (a UsageProblem) names the file and what is wrong
    # a record's EQS and F1 derive from its fields with the run's options (weights, thresholds): use the recorded ones
    recorded = document["run"]["options"].get("scoring")
    scoring = ScoringOptions.from_dict(recorded) if isinstance(recorded, dict) else ScoringOptions()
    records: list[SampleRecord | TrackRecord] = [
        TrackRecord.from_dict(dict(data)) if "track" in data else SampleRecord.from_dict(dict(data), scoring)
        for data in rundoc.iter_samples(samples)
    ]
    checks, required, regressions = gate_results(document)
    return RunResult(
        run_dir=path,
        track=document["track"],
        metrics=document["models"],
        run_level={k: v for k, v in document.items() if k not in rundoc.DOCUMENT_KEYS},
        records=records,
        checks=checks,
        requirements=required,
        regressions=regressions,
        report_files=[
            p
            for p in sorted(path.iterdir())
            if p.name not in (METRICS_FILE, SAMPLES_FILE) and p.is_file() and p.suffix in (".html", ".md", ".csv")
        ],
        document=document,
    )
