"""The scoring core: pure functions, no pytest import (DESIGN decision 1)."""

from __future__ import annotations

# first: where a current compiled build exists, it goes first on this package's path (scoring/compiled.py)
from . import compiled as _compiled  # noqa: F401
from . import semantic as _semantic  # noqa: F401 - registers the "semantic" comparator
from .align import AlignContext, align_hungarian, align_key_field, align_ordered, get_aligner, register_aligner
from .anls import AnlsStar, anls_star, anls_star_details
from .comparators import ComparatorError, register_comparator
from .compare import Comparison, compare_scalars, jaccard, normalize_text, number_similarity, string_similarity
from .emit import ABSENT
from .eval_schema import GoldProblem, annotate_defaults, infer_schema, resolve_schema, validate_gold
from .fields import FieldWalker
from .options import DEFAULT_OPTIONS, EqsWeights, ScoringOptions, StatsOptions
from .parse import MISSING, ParsedOutput, parse_output, strip_fence
from .postprocess import register_post_processor
from .result import (
    CATEGORIES,
    EQS_COMPONENTS,
    ERROR,
    MODES,
    PENDING,
    FieldCounts,
    FieldResult,
    SampleScore,
    count_fields,
    prf,
)
from .rules import EvalSchemaError, EvalSchemaWarning, FieldRule, RuleError, compile_rules, parse_eval_schema
from .sample import score_sample
from .schema import SchemaNode, check_schema, compile_schema, json_type, validation_errors
from .transforms import register_transform

__all__ = [
    "ABSENT",
    "AlignContext",
    "AnlsStar",
    "CATEGORIES",
    "ComparatorError",
    "Comparison",
    "DEFAULT_OPTIONS",
    "EQS_COMPONENTS",
    "ERROR",
    "EqsWeights",
    "EvalSchemaError",
    "EvalSchemaWarning",
    "FieldCounts",
    "FieldResult",
    "FieldRule",
    "FieldWalker",
    "GoldProblem",
    "MISSING",
    "MODES",
    "PENDING",
    "ParsedOutput",
    "RuleError",
    "SampleScore",
    "SchemaNode",
    "ScoringOptions",
    "StatsOptions",
    "align_hungarian",
    "align_key_field",
    "align_ordered",
    "anls_star",
    "anls_star_details",
    "annotate_defaults",
    "check_schema",
    "compare_scalars",
    "compile_rules",
    "compile_schema",
    "count_fields",
    "get_aligner",
    "infer_schema",
    "jaccard",
    "json_type",
    "normalize_text",
    "number_similarity",
    "parse_eval_schema",
    "parse_output",
    "prf",
    "register_aligner",
    "register_comparator",
    "register_post_processor",
    "register_transform",
    "resolve_schema",
    "score_sample",
    "string_similarity",
    "strip_fence",
    "validate_gold",
    "validation_errors",
]
