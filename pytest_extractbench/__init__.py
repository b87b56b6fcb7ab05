"""pytest-extractbench: benchmark and regression-test LLM structured-data extraction.

The scoring core is importable without pytest::

    from pytest_extractbench import score_sample
    score = score_sample('{"name": "John Smith"}', {"name": "John Smith", "age": 35}, schema)
    score.f1["partial"], score.eqs
"""

from __future__ import annotations

from .dataset import BUNDLED, Dataset, DatasetProblem, Sample, load_dataset
from .gates import SLA_TIERS, GateCheck, eqs_band, evaluate_sla, recommendation
from .metrics import metrics_by_model, model_metrics
from .performance import Prices, performance_metrics
from .record import SampleRecord
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
from .stats import (
    Interval,
    bootstrap_ci,
    cohens_d,
    compare_paired,
    interpret_cohens_d,
    paired_permutation_test,
    paired_ttest,
    wilcoxon_test,
)
from .subsets import SubsetConfig, load_subsets

__version__ = "0.1.0"

__all__ = [
    "BUNDLED",
    "Dataset",
    "DatasetProblem",
    "EqsWeights",
    "FieldCounts",
    "FieldResult",
    "GateCheck",
    "Interval",
    "Prices",
    "SLA_TIERS",
    "Sample",
    "SampleRecord",
    "SampleScore",
    "ScoringOptions",
    "StatsOptions",
    "SubsetConfig",
    "bootstrap_ci",
    "cohens_d",
    "compare_paired",
    "eqs_band",
    "evaluate_sla",
    "interpret_cohens_d",
    "load_dataset",
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
