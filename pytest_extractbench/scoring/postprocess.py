"""Post-processors: reclassify field results after comparison and before any metric.

A post-processor is ``fn(fields, options) -> fields`` over one sample's
:class:`~.result.FieldResult` list. They run in the order given by
``ScoringOptions.post_processors`` (``--extractbench-post-process``):

- ``nulls_as_absent``: an explicit null counts as a missing value on either side: a compared
  field with a null prediction becomes missed, one with a null gold becomes spurious, and
  null-vs-null or null-vs-missing fields disappear. (The walker already does this by default;
  this is for runs that score null as a value, e.g. ``--extractbench-null-as-value``.)
- ``nulls_as_values``: a null is an answer: a prediction of null for a gold scalar is an
  incorrect value (not an omission), and a value predicted where the gold holds null is an
  incorrect value (not a hallucination). Fields null on both sides stay out of the metrics.
- ``propagate_errors``: when a comparator failed on one field of a sample, every field it judged
  in that sample is excluded too (status ``error``): a batch judge that failed half-way is not
  trusted for the other half.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from .options import ScoringOptions
from .registry import Registry
from .result import ERROR, EXACT, INCORRECT, MISSED, ORIGIN_NULL, PARTIAL, SPURIOUS, FieldResult

PostProcessor = Callable[[list[FieldResult], ScoringOptions], list[FieldResult]]


class PostProcessorSpec(NamedTuple):
    fn: PostProcessor


POST_PROCESSORS: Registry[PostProcessorSpec] = Registry("post-processor")

_COMPARED = (EXACT, PARTIAL, INCORRECT)
_CONTAINER_TYPES = ("object", "array")


def register_post_processor(name: str, fn: PostProcessor, *, overwrite: bool = False) -> None:
    """Make ``fn`` usable by name in ``ScoringOptions.post_processors``."""
    POST_PROCESSORS.add(name, PostProcessorSpec(fn), overwrite=overwrite)


def nulls_as_absent(fields: list[FieldResult], options: ScoringOptions) -> list[FieldResult]:
    out = []
    for f in fields:
        if f.category in _COMPARED:
            if f.expected is None and f.predicted is None:
                continue
            if f.expected is None:
                f = f._replace(
                    category=SPURIOUS,
                    score=0.0,
                    expected=None,
                    expected_type=None,
                    type_ok=None,
                    equal=False,
                    similarity=None,
                    origin=ORIGIN_NULL,
                )
            elif f.predicted is None:
                f = f._replace(
                    category=MISSED,
                    score=0.0,
                    predicted_type=None,
                    type_ok=None,
                    equal=False,
                    similarity=None,
                    origin=ORIGIN_NULL,
                )
        elif f.category == MISSED and f.expected is None or f.category == SPURIOUS and f.predicted is None:
            continue
        out.append(f)
    return out


def nulls_as_values(fields: list[FieldResult], options: ScoringOptions) -> list[FieldResult]:
    out = []
    for f in fields:
        if f.origin == ORIGIN_NULL:
            if f.category == MISSED and f.expected_type not in _CONTAINER_TYPES:
                f = f._replace(category=INCORRECT, predicted_type="null", type_ok=False, origin="")
            elif f.category == SPURIOUS and f.predicted_type not in _CONTAINER_TYPES:
                f = f._replace(category=INCORRECT, expected_type="null", type_ok=False, origin="")
        out.append(f)
    return out


def propagate_errors(fields: list[FieldResult], options: ScoringOptions) -> list[FieldResult]:
    failed = {f.comparator for f in fields if f.category == ERROR and f.comparator}
    if not failed:
        return fields
    reason = "excluded: comparator {!r} failed on another field of this sample"
    return [
        f._replace(category=ERROR, score=0.0, type_ok=None, error=f.error or reason.format(f.comparator))
        if f.comparator in failed and f.category in _COMPARED
        else f
        for f in fields
    ]


for _name, _fn in (
    ("nulls_as_absent", nulls_as_absent),
    ("nulls_as_values", nulls_as_values),
    ("propagate_errors", propagate_errors),
):
    POST_PROCESSORS.add(_name, PostProcessorSpec(_fn), builtin=True)


def check_post_processors(names: Sequence[str]) -> list[str]:
    """Why some of ``names`` cannot be used (empty when all are registered)."""
    return [POST_PROCESSORS.unknown(name) for name in names if name not in POST_PROCESSORS]


def apply_post_processors(
    fields: list[FieldResult], names: Sequence[str], options: ScoringOptions
) -> list[FieldResult]:
    """Run the named post-processors in order."""
    for name in names:
        fields = list(POST_PROCESSORS.get(name).fn(fields, options))
    return fields
