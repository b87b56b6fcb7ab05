"""Scores of a whole output beside its field scores: semantic similarity and an LLM judge's 1-7 grade.

- ``semantic_similarity``: the cosine of the embeddings of the output and the gold, each as canonical JSON
  text (sorted keys, compact), with the ``--extractbench-semantic`` backend;
- ``judge_score``: the judge's grade on the 1-7 rubric (live/judge.py) divided by 7, with one sentence of reasoning
  kept per sample, ``batch`` outputs per request.

Output that is missing or not JSON is not sent anywhere: its similarity is 0 and its grade 1 ("Failed - wrong,
unrelated or empty"). A backend failure leaves that sample without the score (and says why in its
diagnostics): the mean is over the samples that have one, and the run's cost counts the failures.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..core.redact import redact_credentials
from .backends import NoBackendsError, current_backends
from .options import ScoringOptions
from .parse import parse_output
from .result import SampleScore

SIMILARITY, JUDGE = "semantic_similarity", "judge_score"
NOT_JSON = "the output is missing or not JSON: nothing to judge"


def canonical_json(value: Any) -> str:
    """One text per JSON value whatever its key order or spacing, so equal values embed and cache alike."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@dataclass
class WholeOutputCost:
    """What the whole-output scores took: texts embedded and judge requests, tokens and seconds."""

    embedded_texts: int = 0
    embedding_seconds: float = 0.0
    embedding_errors: int = 0
    judge_requests: int = 0
    judge_prompt_tokens: int = 0
    judge_completion_tokens: int = 0
    judge_seconds: float = 0.0
    judge_errors: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Item:
    """One sample to score: its field score (the extras land there), the gold, the raw output, and a
    place for what the judge said."""

    score: SampleScore
    expected: Any
    output: Any
    diagnostics: dict[str, Any]


def score_whole_outputs(items: Sequence[Item], options: ScoringOptions, *, batch: int = 4) -> WholeOutputCost:
    """Add ``semantic_similarity`` and/or ``judge_score`` to each item's ``score.extras``, as the options ask."""
    cost = WholeOutputCost()
    gradable = [
        (item, canonical_json(item.expected), canonical_json(parse_output(item.output).value))
        for item in items
        if item.score.json_valid
    ]
    for item in items:
        if not item.score.json_valid:
            if options.semantic:
                item.score.extras[SIMILARITY] = 0.0
            if options.judge_model:
                item.score.extras[JUDGE] = 1 / 7
                item.diagnostics["judge"] = {"grade": 1, "reasoning": NOT_JSON}
    if options.semantic and gradable:
        _similarities(gradable, options, cost)
    if options.judge_model and options.judge_url and gradable:
        _judge(gradable, options, cost, batch)
    return cost


def _similarities(gradable: list[tuple[Item, str, str]], options: ScoringOptions, cost: WholeOutputCost) -> None:
    started = time.perf_counter()
    try:
        backends = current_backends()
        cosines = backends.similarities(
            options.semantic or "", options.semantic_model, [(gold, output) for _, gold, output in gradable]
        )
    except Exception as exc:  # noqa: BLE001 - the backend failed: no sample gets a made-up similarity
        cost.embedding_errors += len(gradable)
        for item, _, _ in gradable:
            item.diagnostics["semantic_similarity_error"] = _mask(f"{type(exc).__name__}: {exc}")[:300]
        return
    finally:
        cost.embedding_seconds += time.perf_counter() - started
    cost.embedded_texts += len({text for _, gold, output in gradable for text in (gold, output)})
    for (item, _, _), cosine in zip(gradable, cosines):
        item.score.extras[SIMILARITY] = cosine


def _judge(gradable: list[tuple[Item, str, str]], options: ScoringOptions, cost: WholeOutputCost, batch: int) -> None:
    judge = None
    try:
        judge = current_backends().judge(options.judge_model or "", options.judge_url or "")
        before = (judge.calls, judge.prompt_tokens, judge.completion_tokens, judge.seconds)
        verdicts: list[Any] = judge.grade_outputs([(gold, output) for _, gold, output in gradable], batch=batch)
    except Exception as exc:  # noqa: BLE001 - whatever the judge did, each sample says so and the run goes on
        verdicts = [exc] * len(gradable)
    if judge is not None:
        cost.judge_requests += judge.calls - before[0]
        cost.judge_prompt_tokens += judge.prompt_tokens - before[1]
        cost.judge_completion_tokens += judge.completion_tokens - before[2]
        cost.judge_seconds += judge.seconds - before[3]
    for (item, _, _), verdict in zip(gradable, verdicts):
        if isinstance(verdict, Exception):
            cost.judge_errors += 1
            item.diagnostics["judge"] = {"error": _mask(verdict)[:300]}
        else:
            grade, reasoning = verdict
            item.score.extras[JUDGE] = grade / 7
            item.diagnostics["judge"] = {"grade": grade, "reasoning": reasoning}


def _mask(text: Any) -> str:
    """``text`` as one line without the backends' credentials (the backends' own masking when installed)."""
    try:
        return current_backends().mask(text)
    except NoBackendsError:  # none: no key of theirs to hide, but nothing credential-shaped either
        return " ".join(redact_credentials(str(text)).split())
