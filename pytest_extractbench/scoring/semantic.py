"""The "semantic" comparator: paraphrases count, factual disagreements don't.

A batch comparator: every semantic field of a record is judged at once. Text
pairs equal after normalization match without asking anyone; non-text values get
the default comparison. The rest go to the configured backend:

- ``judge`` (``ScoringOptions.judge_model`` at ``judge_url``): the LLM grades each pair on the 1-7
  rubric in one call per record; the score is ``grade / 7``;
- ``embedding`` (``ScoringOptions.semantic``): cosine similarity of the two texts' embeddings;
- neither configured: the composite string score (``partial``).

A score at or above the pass threshold (``{"semantic": {"threshold": 0.9}}``, default
``ScoringOptions.semantic_threshold`` = 0.85) is a match (1.0); below it the
score itself is kept, so the usual partial/incorrect bands apply. A backend failure makes
the field's status ``error``: excluded from every metric and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .backends import current_backends
from .comparators import COMPARATORS, ComparatorSpec
from .compare import Comparison, compare_scalars, normalize_text
from .options import ScoringOptions
from .registry import param_problems

METHODS = ("embedding", "judge", "partial")


def _check(params: Mapping[str, Any]) -> list[str]:
    problems = []
    method = params.get("method")
    if method is not None and method not in METHODS:
        problems.append(f"'method' must be one of {', '.join(METHODS)}, got {method!r}")
    return problems + param_problems(params, {"method", "threshold"}, {"threshold": 0.85})


def default_method(options: ScoringOptions) -> str:
    if options.judge_model:
        return "judge"
    if options.semantic:
        return "embedding"
    return "partial"


def _passed(score: float, threshold: float) -> Comparison:
    return Comparison(1.0 if score >= threshold else score, False)


def compare_semantic(items: Sequence[tuple[Any, Any, Mapping[str, Any], str]], options: ScoringOptions) -> list[Any]:
    results: list[Any] = [None] * len(items)
    groups: dict[str, list[int]] = {}
    for k, (expected, predicted, params, _path) in enumerate(items):
        if type(expected) is str and type(predicted) is str:
            if normalize_text(expected, options) == normalize_text(predicted, options):
                results[k] = Comparison(1.0, True)
                continue
            method = params.get("method") or default_method(options)
            if method != "partial":
                groups.setdefault(method, []).append(k)
                continue
        results[k] = compare_scalars(expected, predicted, options)

    def threshold(k: int) -> float:
        return float(items[k][2].get("threshold", options.semantic_threshold))

    if "embedding" in groups:
        todo = groups["embedding"]
        try:
            if not options.semantic:
                raise RuntimeError("no embedding backend configured (--extractbench-semantic)")
            cosines = current_backends().similarities(
                options.semantic, options.semantic_model, [(items[k][0], items[k][1]) for k in todo]
            )
            for k, cosine in zip(todo, cosines):
                results[k] = _passed(cosine, threshold(k))
        except Exception as exc:  # noqa: BLE001 - the backend failed: each of its fields says why
            for k in todo:
                results[k] = exc
    if "judge" in groups:
        todo = groups["judge"]
        try:
            if not options.judge_model or not options.judge_url:
                raise RuntimeError("no judge configured (--extractbench-judge MODEL and --extractbench-judge-url URL)")
            grades = (
                current_backends()
                .judge(options.judge_model, options.judge_url)
                .grade([(items[k][3], items[k][0], items[k][1]) for k in todo])
            )
            for k, grade in zip(todo, grades):
                results[k] = grade if isinstance(grade, Exception) else _passed(grade / 7.0, threshold(k))
        except Exception as exc:  # noqa: BLE001
            for k in todo:
                results[k] = exc
    return results


COMPARATORS.add("semantic", ComparatorSpec(compare_semantic, True, _check), builtin=True)
