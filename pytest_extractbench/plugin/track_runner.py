"""A non-extraction track inside a benchmark session: run its items, aggregate, write, summarize.

Kept apart from :mod:`pytest_extractbench.plugin.session` so the extraction path stays as it was;
the session delegates to a :class:`TrackRunner` when ``--extractbench-track`` is not extraction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..analysis.consistency import aggregate_consistency, consistency
from ..dataset.records import TrackRecord
from ..dataset.responses import ModelResponse
from ..scoring import budget
from ..scoring.sample import SCORING_ERROR
from ..core import files
from ..report import terminal
from ..tracks.base import Track

if TYPE_CHECKING:
    from .items import SampleItem
    from .session import BenchSession


class TrackRunner:
    """The track-specific half of :class:`~pytest_extractbench.plugin.session.BenchSession`."""

    def __init__(self, bench: BenchSession, track: Track | None) -> None:
        assert track is not None
        self.bench = bench
        self.track = track

    def run_item(self, item: SampleItem) -> TrackRecord:
        """Read (or request) the sample's runs, score the first, measure consistency over all."""
        bench, track, sample = self.bench, self.track, item.sample
        responses = bench.item_responses(item.model, sample)
        found = None
        try:
            # Any failure or overrun while scoring is this sample's scoring_error, never a lost sample.
            with budget.time_budget(budget.ITEM_BUDGET_S):
                predictions = [track.read_response(sample, r) for r in responses]  # type: ignore[arg-type]
                result = track.score(sample, predictions[0], bench.settings.scoring)  # type: ignore[arg-type]
                if len(predictions) > 1:
                    found = consistency([track.consistency_value(p) for p in predictions], parsed=self._parsed())
        except Exception as exc:  # noqa: BLE001 - see above
            result = self._scoring_error(sample, budget.failure_reason(exc))
        record = TrackRecord(
            model=item.model,
            sample_id=sample.id,
            track=track.name,
            result=result,
            meta=_plain_meta(sample.meta),
            response=responses[0].as_dict(),
            passed=bool(result["passed"]),
            failure=result["failure"],
            consistency=found,
            details=track.failure_lines(result) + self.track.expected_lines(sample) if not result["passed"] else [],
        )
        bench.config.hook.pytest_extractbench_sample_scored(config=bench.config, record=record)
        return record

    def _scoring_error(self, sample: Any, reason: str) -> dict[str, Any]:
        """The result of a sample whose scoring failed: scored as no output, failed, with the reason."""
        try:
            result = dict(self.track.score(sample, self.track.read_response(sample, ModelResponse()),
                                           self.bench.settings.scoring))
        except Exception:  # noqa: BLE001 - a track that cannot score "no output" either
            result = {}
        result.update(passed=False, failure=f"scoring failed ({SCORING_ERROR}): {reason}", scoring_error=reason)
        return result

    def _parsed(self) -> bool:
        return self.track.compare_parsed

    # -- the controller ---------------------------------------------------------------------------

    def metrics(self) -> dict[str, dict[str, Any]]:
        grouped: dict[str, list[TrackRecord]] = {}
        for record in sorted(self.bench.track_records, key=lambda r: r.sort_key):
            grouped.setdefault(record.model, []).append(record)
        out: dict[str, dict[str, Any]] = {}
        for model in sorted(grouped):
            records = grouped[model]
            section: dict[str, Any] = {
                "track": self.track.name,
                "num_samples": len(records),
                "passed_samples": sum(r.passed for r in records),
                self.track.name: self.track.aggregate([r.result for r in records]),
                "failed_samples": [r.sample_id for r in records if not r.passed],
            }
            runs = [r.consistency for r in records if r.consistency]
            if runs:
                section["consistency"] = aggregate_consistency(runs)
            out[model] = section
        return out

    def finish(self) -> None:
        bench = self.bench
        if not bench.track_records:
            return
        bench.metrics = self.metrics()
        info = bench.run_info()
        info["num_records"] = len(bench.track_records)
        ordered = sorted(bench.track_records, key=lambda r: r.sort_key)
        files.write_jsonl(bench.run_dir / files.SAMPLES_FILE, (r.to_dict() for r in ordered))
        files.write_json(
            bench.run_dir / files.METRICS_FILE,
            {"format_version": 1, "track": self.track.name, "run": info, "models": bench.metrics},
        )
        bench.config.hook.pytest_extractbench_run_finished(config=bench.config, metrics=bench.metrics)

    def summary_lines(self) -> list[str]:
        bench = self.bench
        if not bench.metrics:
            return ["no sample was scored"] + terminal.problem_lines(bench.problems)
        dataset = bench.dataset
        lines = [f"track {self.track.name} ({self.track.description}); dataset {terminal.safe(dataset.name)}: "
                 f"{len(dataset.samples)} samples; results in {bench.run_dir}"]  # fmt: skip
        for model, metrics in bench.metrics.items():
            lines.append(f"model {terminal.safe(model)}: {metrics['num_samples']} samples, "
                         f"{metrics['passed_samples']} passed")  # fmt: skip
            lines.extend(self.track.summary_lines(metrics[self.track.name]))
            lines.extend(terminal.calibration_consistency_lines(metrics))
        if bench.unscored:
            lines.append(f"{len(bench.unscored)} item(s) ended without a score: " + ", ".join(sorted(bench.unscored)[:5]))
        lines.extend(terminal.problem_lines(bench.problems))
        return lines


def _plain_meta(meta: Any) -> dict[str, Any]:
    return {k: v for k, v in dict(meta).items() if k != "features"} | (
        {"features": list(meta["features"])} if "features" in meta else {}
    )
