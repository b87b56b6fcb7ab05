"""The scoring core: pure functions, no pytest import (DESIGN decision 1)."""

from __future__ import annotations

from .align import align_ordered, get_aligner, register_aligner
from .compare import Comparison, compare_scalars, jaccard, normalize_text, number_similarity, string_similarity
from .fields import ABSENT, FieldWalker
from .options import DEFAULT_OPTIONS, EqsWeights, ScoringOptions, StatsOptions
from .parse import MISSING, ParsedOutput, parse_output, strip_fence
from .result import (
    CATEGORIES,
    EQS_COMPONENTS,
    MODES,
    FieldCounts,
    FieldResult,
    SampleScore,
    count_fields,
    prf,
)
from .sample import score_sample
from .schema import SchemaNode, check_schema, compile_schema, json_type, validation_errors

__all__ = [
    "ABSENT",
    "CATEGORIES",
    "Comparison",
    "DEFAULT_OPTIONS",
    "EQS_COMPONENTS",
    "EqsWeights",
    "FieldCounts",
    "FieldResult",
    "FieldWalker",
    "MISSING",
    "MODES",
    "ParsedOutput",
    "SampleScore",
    "SchemaNode",
    "ScoringOptions",
    "StatsOptions",
    "align_ordered",
    "check_schema",
    "compare_scalars",
    "compile_schema",
    "count_fields",
    "get_aligner",
    "jaccard",
    "json_type",
    "normalize_text",
    "number_similarity",
    "parse_output",
    "prf",
    "register_aligner",
    "score_sample",
    "string_similarity",
    "strip_fence",
    "validation_errors",
]
