"""pytest-extractbench: benchmark and regression-test LLM structured-data extraction.

The scoring core is importable without pytest::

    from pytest_extractbench import score_sample
    score = score_sample('{"name": "John Smith"}', {"name": "John Smith", "age": 35}, schema)
    score.f1["partial"], score.eqs
"""

from __future__ import annotations

from .core import aliases as _aliases

_aliases.install()  # the flat layout's module names (pytest_extractbench.metrics, ...) still import

from .dataset.samples import BUNDLED, Dataset, DatasetProblem, Sample
from .dataset.sources import load_dataset
from .gating.sla import SLA_TIERS, GateCheck, eqs_band, evaluate_sla, recommendation
from .analysis.metrics import metrics_by_model, model_metrics
from .analysis.performance import Prices, performance_metrics
from .dataset.records import SampleRecord
from .scoring import (
    EqsWeights,
    FieldCounts,
    FieldResult,
    SampleScore,
    ScoringOptions,
    StatsOptions,
    parse_output,
    score_sample,
)
from .analysis.stats import (
    Interval,
    bootstrap_ci,
    cohens_d,
    compare_paired,
    interpret_cohens_d,
    paired_permutation_test,
    paired_ttest,
    wilcoxon_test,
)
from .gating.subsets import SubsetConfig, load_subsets

__version__ = "0.1.0"

# One whole run from Python; imported on first use, so `import pytest_extractbench` stays light.
_LAZY = {
    "evaluate": "pytest_extractbench.run.api",
    "load_run": "pytest_extractbench.run.result",
    "RunResult": "pytest_extractbench.run.result",
    "ModelResponse": "pytest_extractbench.dataset.responses",
    "UsageProblem": "pytest_extractbench.core.errors",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_extractbench' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "BUNDLED",
    "Dataset",
    "DatasetProblem",
    "EqsWeights",
    "FieldCounts",
    "FieldResult",
    "GateCheck",
    "Interval",
    "ModelResponse",
    "Prices",
    "RunResult",
    "SLA_TIERS",
    "Sample",
    "SampleRecord",
    "SampleScore",
    "ScoringOptions",
    "StatsOptions",
    "SubsetConfig",
    "UsageProblem",
    "bootstrap_ci",
    "cohens_d",
    "compare_paired",
    "eqs_band",
    "evaluate",
    "evaluate_sla",
    "interpret_cohens_d",
    "load_dataset",
    "load_run",
    "load_subsets",
    "metrics_by_model",
    "model_metrics",
    "paired_permutation_test",
    "paired_ttest",
    "parse_output",
    "performance_metrics",
    "recommendation",
    "score_sample",
    "wilcoxon_test",
]
