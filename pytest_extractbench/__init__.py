"""pytest-extractbench: benchmark and regression-test LLM structured-data extraction.

The scoring core is importable without pytest::

    from pytest_extractbench import score_sample
    score = score_sample('{"name": "John Smith"}', {"name": "John Smith", "age": 35}, schema)
    score.f1["partial"], score.eqs
"""

from __future__ import annotations

__version__ = "0.1.0"

# True for type checkers (mypy and pyright know the name), False at run time, where importing typing for it
# would cost the light entry point five modules
TYPE_CHECKING = False
if TYPE_CHECKING:  # the real types for type checkers and editors; at run time the names load lazily (below)
    from .analysis.bands import eqs_band, recommendation
    from .analysis.metrics import metrics_by_model, model_metrics
    from .analysis.performance import Prices, performance_metrics
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
    from .core.errors import ExtractbenchError, UsageProblem
    from .dataset.records import SampleRecord
    from .dataset.responses import ModelResponse
    from .dataset.samples import BUNDLED, Dataset, DatasetProblem, Sample, SampleView
    from .dataset.sources import load_dataset
    from .gating.sla import SLA_TIERS, GateCheck, evaluate_sla
    from .gating.subsets import SubsetConfig, load_subsets
    from .run.api import evaluate
    from .run.keywords import EvaluateOptions
    from .run.result import RunResult, UnknownMetric, load_run
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

# Public name -> the module defining it. Imported on first use, so `import pytest_extractbench` (and pytest's
# entry point `pytest_extractbench.plugin`, which imports this package first) loads no numpy or scipy.
_EXPORTS = {
    "pytest_extractbench.dataset.samples": ("BUNDLED", "Dataset", "DatasetProblem", "Sample", "SampleView"),
    "pytest_extractbench.dataset.sources": ("load_dataset",),
    "pytest_extractbench.dataset.records": ("SampleRecord",),
    "pytest_extractbench.dataset.responses": ("ModelResponse",),
    "pytest_extractbench.analysis.bands": ("eqs_band", "recommendation"),
    "pytest_extractbench.gating.sla": ("SLA_TIERS", "GateCheck", "evaluate_sla"),
    "pytest_extractbench.gating.subsets": ("SubsetConfig", "load_subsets"),
    "pytest_extractbench.analysis.metrics": ("metrics_by_model", "model_metrics"),
    "pytest_extractbench.analysis.performance": ("Prices", "performance_metrics"),
    "pytest_extractbench.analysis.stats": (
        "Interval",
        "bootstrap_ci",
        "cohens_d",
        "compare_paired",
        "interpret_cohens_d",
        "paired_permutation_test",
        "paired_ttest",
        "wilcoxon_test",
    ),
    "pytest_extractbench.scoring": (
        "EqsWeights",
        "FieldCounts",
        "FieldResult",
        "SampleScore",
        "ScoringOptions",
        "StatsOptions",
        "parse_output",
        "score_sample",
    ),
    "pytest_extractbench.run.api": ("evaluate",),
    "pytest_extractbench.run.keywords": ("EvaluateOptions",),
    "pytest_extractbench.run.result": ("RunResult", "UnknownMetric", "load_run"),
    "pytest_extractbench.core.errors": ("ExtractbenchError", "UsageProblem"),
}
_LAZY = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_extractbench' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    if module == "pytest_extractbench.scoring":
        # scoring talks to no server itself: `from pytest_extractbench import score_sample` gets the live judge and
        # embeddings clients, as evaluate() and the plugin do (nothing is imported or connected until a score asks)
        from .live import scoring_backends

        scoring_backends.install()
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "BUNDLED",
    "Dataset",
    "DatasetProblem",
    "EqsWeights",
    "EvaluateOptions",
    "ExtractbenchError",
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
    "SampleView",
    "ScoringOptions",
    "StatsOptions",
    "SubsetConfig",
    "UnknownMetric",
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
