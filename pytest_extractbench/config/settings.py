"""The run's :class:`Settings`, built from the resolved option values by the option table (no pytest here).

Every option is declared once in :data:`.table.OPTIONS` with its target field; :mod:`.layers` resolves each from
its sources (``--extractbench-NAME`` on the command line beats the ``EXTRACTBENCH_NAME`` environment variable,
which beats the ``--extractbench-config`` YAML file, which beats ``extractbench_NAME`` in
``[tool.pytest.ini_options]``, which beats the default). Settings fields that group options (``scoring``,
``live``, ...) are dataclasses built here from their targets; a group's class is its field's default factory.
Secrets never come from options: API keys are read from environment variables only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis.performance import Prices
from ..dataset.sources import DataOptions
from ..live.options import LiveOptions
from ..report.outputs import ReportOptions
from ..scoring import ScoringOptions
from ..tracks.base import TrackSettings
from .file import json_value, redact
from .table import OPTIONS, OPTIONS_BY_NAME, OptionSpec

if TYPE_CHECKING:
    from ..dataset.predictions import PredictionsSpec
    from ..gating.regression import CompareFailCheck
    from ..gating.requirements import Requirement
    from ..gating.subsets import SubsetConfig

__all__ = ["OPTIONS", "OPTIONS_BY_NAME", "OptionSpec", "Settings", "effective_config"]


class _Group(dict[str, Any]):
    """The fields of one settings group, by name (nested groups are _Group too)."""


def _build(cls: Any, node: _Group, **extra: Any) -> Any:
    """``cls`` from ``node``: nested groups become the dataclass their field's default factory makes."""
    by_name = {f.name: f for f in fields(cls)}
    kwargs = {
        name: _build(by_name[name].default_factory, value) if isinstance(value, _Group) else value
        for name, value in node.items()
    }
    return cls(**kwargs, **extra)


def effective_config(values: dict[str, Any], sources: dict[str, str], from_file: Any = None) -> dict[str, Any]:
    """What metrics.json records as ``run.config``: each option's value and source, secrets redacted."""
    options = {name: {"value": redact(json_value(values[name]), name), "source": sources[name]} for name in values}
    record: dict[str, Any] = {"options": options, "config_file": None}
    if from_file is not None:
        record["config_file"] = {
            "path": str(from_file.path),
            "not_applied": {k: redact(json_value(v), k) for k, v in from_file.pending.items()},
            "notes": list(from_file.notes),
        }
    return record


@dataclass(frozen=True)
class Settings:
    """The effective configuration of one run."""

    enabled: bool = False
    models: tuple[str, ...] = ()
    dataset: str = "bundled"
    predictions: tuple[PredictionsSpec, ...] = ()
    output: Path | None = None
    sla: str = "minimum"
    report_only: bool = False  # items report failures; only a failed gate makes the exit code non-zero
    sample_min_eqs: float | None = None
    scoring: ScoringOptions = field(default_factory=ScoringOptions)
    rootdir: Path = field(default_factory=Path.cwd)
    subsets: SubsetConfig | None = None
    save: str | None = None
    compare: str | None = None
    compare_fail: tuple[CompareFailCheck, ...] = ()
    baseline_min_unchanged: float = 0.5  # a regression check needs this share of the baseline's samples unchanged
    sample_regression_delta: float = 0.05  # an EQS drop past this puts a sample in the regressed bucket
    require: tuple[Requirement, ...] = ()  # a threshold on any catalog metric
    unmeasured: str = "fail"  # what a threshold that could not be measured does: fail the gate, or warn
    verdict_thresholds: tuple[float, float] = (0.01, -0.02)
    prices: Prices = field(default_factory=Prices)
    live: LiveOptions = field(default_factory=LiveOptions)
    report: ReportOptions = field(default_factory=ReportOptions)
    tracks: TrackSettings = field(default_factory=TrackSettings)
    data: DataOptions = field(default_factory=DataOptions)
    config: dict[str, Any] = field(default_factory=dict)  # the effective configuration, as recorded

    @property
    def offline(self) -> bool:
        return bool(self.predictions)

    @classmethod
    def from_values(
        cls, values: Mapping[str, Any], *, enabled: bool, rootdir: Path, record: dict[str, Any] | None = None
    ) -> Settings:
        """Build settings from resolved option values: each table entry fills its target field."""
        tree = _Group()
        for spec in OPTIONS:
            if spec.target is None:
                continue
            *groups, leaf = spec.target.split(".")
            node = tree
            for group in groups:
                node = node.setdefault(group, _Group())
            node[leaf] = spec.settings_value(values)
        settings: Settings = _build(cls, tree, enabled=enabled, rootdir=rootdir, config=record or {})
        return settings

    def to_dict(self) -> dict[str, Any]:
        """The effective configuration as recorded in metrics.json (holds no secrets)."""
        return {
            "models": list(self.models),
            "dataset": self.dataset,
            "predictions": [{"path": str(p.path), "model": p.model} for p in self.predictions],
            "output": str(self.output) if self.output else None,
            "sla": self.sla,
            "report_only": self.report_only,
            "sample_min_eqs": self.sample_min_eqs,
            "scoring": self.scoring.to_dict(),
            "subsets": self.subsets.as_dict() if self.subsets else None,
            "save": self.save,
            "compare": self.compare,
            "compare_fail": [str(check) for check in self.compare_fail],
            "baseline_min_unchanged": self.baseline_min_unchanged,
            "sample_regression_delta": self.sample_regression_delta,
            "require": [str(requirement) for requirement in self.require],
            "unmeasured": self.unmeasured,
            "verdict_thresholds": list(self.verdict_thresholds),
            "prices": self.prices.to_dict(),
            "live": self.live.to_dict(),
            "report": self.report.as_dict(),
            "tracks": self.tracks.to_dict(),
            "data": self.data.as_dict(),
        }
