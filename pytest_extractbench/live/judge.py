"""LLM-as-judge for the "semantic" comparator and whole-output grades: the 1-7 rubric over an OpenAI-compatible API.

One call grades every semantic field of a record (temperature 0, structured
output); a verdict is normalized as ``score / 7`` (7 is a perfect 1.0), and verdicts are
cached. The client is the official ``openai`` package (the ``judge`` extra), so
any OpenAI-compatible server works: vLLM, llama.cpp's llama-server, OpenAI.
The API key comes from ``EXTRACTBENCH_JUDGE_API_KEY``, else ``EXTRACTBENCH_API_KEY``,
else ``OPENAI_API_KEY`` (never from options, never logged; :mod:`.scorer_servers`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from typing import Any

from ..core import jsonio
from ..core.errors import ExtractbenchError
from . import verdict_cache
from .scorer_servers import api_key, masked, open_client, read_answer

PROMPT_VERSION = 1
RUBRIC = """\
7: Perfect - the same information, properly formatted
6: Excellent - minor formatting differences, content fully correct
5: Good - semantically correct, some non-critical differences
4: Acceptable - core information correct, some parts missing or extra
3: Partial - some correct information, notable gaps or errors
2: Poor - mostly incorrect or incomplete
1: Failed - wrong, unrelated or empty"""
SYSTEM_PROMPT = (
    "You grade data extraction. For every numbered item, compare the EXTRACTED value of the named field "
    "with the EXPECTED value and grade how well the extracted value conveys the same information, "
    "on this scale:\n" + RUBRIC + '\nAnswer with JSON only: {"scores": [{"id": <item id>, "score": <1-7>}, ...]}, '
    "one entry per item."
)


REASONING_CHARS = 300


def response_schema(count: int, *, key: str = "scores", reasoning: bool = False) -> dict[str, Any]:
    """Exactly ``count`` grades under ``key`` (each with a bounded ``reasoning`` first when asked): a bounded
    answer, so a small model cannot ramble on."""
    properties: dict[str, Any] = {"id": {"type": "integer", "enum": list(range(1, count + 1))}}
    if reasoning:
        properties["reasoning"] = {"type": "string", "maxLength": REASONING_CHARS}
    properties["score"] = {"type": "integer", "enum": list(range(1, 8))}
    item = {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}
    return {
        "type": "object",
        "properties": {key: {"type": "array", "minItems": count, "maxItems": count, "items": item}},
        "required": [key],
        "additionalProperties": False,
    }


# Tokens the answer may take: a few per grade, plus the wrapper (bounds a run-away generation).
TOKENS_PER_ITEM = 24
TOKENS_BASE = 32


class JudgeError(ExtractbenchError, RuntimeError):
    """The judge could not give a verdict (unreachable, refused, unparseable answer, missing item)."""


OUTPUT_PROMPT_VERSION = 1
OUTPUT_SYSTEM_PROMPT = (
    "You grade data extraction. For every numbered item, compare the EXTRACTED JSON with the EXPECTED JSON as a "
    "whole and grade how well the extraction conveys the same information, on this scale:\n" + RUBRIC + "\nFor "
    "each item give one short sentence of reasoning first, then the grade. Answer with JSON only: "
    '{"grades": [{"id": <item id>, "reasoning": "...", "score": <1-7>}, ...]}, one entry per item.'
)
TOKENS_PER_OUTPUT = 120  # a sentence of reasoning and a grade


class Judge:
    """Grades (field, expected, extracted) triples, or whole outputs, with one chat completion per batch."""

    def __init__(self, model: str, base_url: str, *, timeout: float = 60.0, max_retries: int = 1) -> None:
        self.base_url, self._key, self._client = open_client(
            base_url, what="LLM judges", error=JudgeError, timeout=timeout, max_retries=max_retries
        )
        self.model = model
        self.timeout = timeout
        self.calls = 0
        # what judging cost: tokens as the server counted them, wall seconds spent waiting for answers
        self.prompt_tokens = self.completion_tokens = 0
        self.seconds = 0.0

    def messages(self, items: Sequence[tuple[str, Any, Any]]) -> list[dict[str, str]]:
        lines = [
            json.dumps({"id": n, "field": path, "expected": expected, "extracted": predicted}, ensure_ascii=False)
            for n, (path, expected, predicted) in enumerate(items, start=1)
        ]
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(lines)}]

    def _ask(
        self,
        messages: list[dict[str, str]],
        count: int,
        *,
        schema: dict[str, Any] | None = None,
        tokens_per_item: int = TOKENS_PER_ITEM,
    ) -> str:
        started = time.perf_counter()
        try:
            return self._request(messages, count, schema or response_schema(count), tokens_per_item)
        finally:
            self.seconds += time.perf_counter() - started

    def _request(self, messages: list[dict[str, str]], count: int, schema: dict[str, Any], tokens_per_item: int) -> str:
        """The answer's text, or :class:`JudgeError` (its message masked) whatever went wrong: the server's
        answer is read within the size, time and JSON limits of :mod:`.scorer_servers`."""
        import openai

        self.calls += 1
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "seed": 0,
            "max_tokens": TOKENS_BASE + tokens_per_item * count,
        }
        structured = {"type": "json_schema", "json_schema": {"name": "grades", "schema": schema, "strict": True}}
        try:
            try:
                data = self._completion({**request, "response_format": structured})
            except openai.BadRequestError:  # a server without structured output: ask in words only
                data = self._completion(request)
            return self._content(data)
        except JudgeError:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the server did, it is this batch's judge error
            raise JudgeError(masked(f"judge request failed: {type(exc).__name__}: {exc}", self._key)[:500]) from None

    def _completion(self, request: dict[str, Any]) -> Any:
        deadline = time.monotonic() + self.timeout
        with self._client.chat.completions.with_streaming_response.create(**request) as response:
            return read_answer(response, deadline=deadline)

    def _content(self, data: Any) -> str:
        choices = data.get("choices") if isinstance(data, dict) else None
        first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
        message = first.get("message")
        message = message if isinstance(message, dict) else {}
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        self.prompt_tokens += _count(usage.get("prompt_tokens"))
        self.completion_tokens += _count(usage.get("completion_tokens"))
        content = message.get("content")
        if not isinstance(content, str) or not content:
            raise JudgeError("the judge returned no content")
        return content

    def grade(self, items: Sequence[tuple[str, Any, Any]]) -> list[int | JudgeError]:
        """A 1-7 grade (or the reason there is none) for each ``(field, expected, extracted)``."""
        keys = [verdict_cache.cache_key("judge", PROMPT_VERSION, self.model, *item) for item in items]
        grades: list[int | JudgeError | None] = [verdict_cache.get(k) for k in keys]
        todo = [i for i, grade in enumerate(grades) if grade is None]
        if todo:
            try:
                parsed = self._parse(self._ask(self.messages([items[i] for i in todo]), len(todo)), len(todo))
                answer: list[Any] = [a if isinstance(a, JudgeError) else a[0] for a in parsed]
            except JudgeError as exc:
                answer = [exc] * len(todo)
            _remember(keys, todo, answer, grades)
        return grades  # type: ignore[return-value]  # _remember filled every None

    def grade_outputs(self, items: Sequence[tuple[str, str]], *, batch: int = 4) -> list[tuple[int, str] | JudgeError]:
        """A 1-7 grade and its one-sentence reasoning (or the reason there is none) for each
        ``(expected JSON, extracted JSON)``; ``batch`` outputs per request, cached by content."""
        keys = [verdict_cache.cache_key("judge-output", OUTPUT_PROMPT_VERSION, self.model, *item) for item in items]
        found: list[Any] = [verdict_cache.get(k) for k in keys]
        out: list[tuple[int, str] | JudgeError | None] = [tuple(f) if isinstance(f, list) else None for f in found]
        todo = [i for i, grade in enumerate(out) if grade is None]
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            lines = [
                json.dumps({"id": n, "expected": items[i][0], "extracted": items[i][1]}, ensure_ascii=False)
                for n, i in enumerate(chunk, start=1)
            ]
            messages = [
                {"role": "system", "content": OUTPUT_SYSTEM_PROMPT},
                {"role": "user", "content": "\n".join(lines)},
            ]
            try:
                content = self._ask(
                    messages,
                    len(chunk),
                    schema=response_schema(len(chunk), key="grades", reasoning=True),
                    tokens_per_item=TOKENS_PER_OUTPUT,
                )
                answer = self._parse(content, len(chunk), key="grades")
            except JudgeError as exc:
                answer = [exc] * len(chunk)
            _remember(keys, chunk, answer, out)
        return out  # type: ignore[return-value]  # _remember filled every None

    @staticmethod
    def _parse(content: str, expected: int, key: str = "scores") -> list[tuple[int, str] | JudgeError]:
        """``expected`` grades (each with its reasoning, "" when the answer has none) or why one is missing.
        Ids and grades must be numbers in range (a bool, 1e400 or a 5,000-digit id is no id); the answer
        is parsed with the limits of model answers; reasoning is kept masked and clipped."""
        secret = api_key()
        text = content.strip()
        if text.startswith("```"):
            text = text.strip("`").removeprefix("json").strip()
        try:
            data = jsonio.loads(text, allow_nonfinite=False)
        except jsonio.JsonInputError as exc:
            raise JudgeError(masked(f"unparseable judge answer ({exc}): {text[:200]!r}", secret)) from None
        entries = data.get(key) if isinstance(data, dict) else data
        if not isinstance(entries, list):
            raise JudgeError(masked(f"unparseable judge answer (no list of grades): {text[:200]!r}", secret))
        found: dict[int, tuple[Any, Any]] = {}
        for entry in entries:
            number = entry.get("id") if isinstance(entry, dict) else None
            if type(number) is int and 1 <= number <= expected and number not in found:
                found[number] = (entry.get("score"), entry.get("reasoning"))
        out: list[tuple[int, str] | JudgeError] = []
        for n in range(1, expected + 1):
            score, reasoning = found.get(n, (None, None))
            if type(score) not in (int, float) or not math.isfinite(score) or not 1 <= score <= 7:
                shown = masked(jsonio.clip(repr(score), 60), secret)
                out.append(JudgeError(f"the judge gave no valid 1-7 grade for item {n} (got {shown})"))
            else:
                said = masked(reasoning, secret) if isinstance(reasoning, str) else ""
                out.append((int(round(score)), said[:REASONING_CHARS]))
        return out


def _count(value: Any) -> int:
    """A token count as the server gave it, or 0 when it is not a plausible count (1e400, NaN, a list, -5)."""
    return value if type(value) is int and 0 <= value < 10**12 else 0


def _remember(keys: Sequence[str], indices: Sequence[int], answers: Sequence[Any], into: list[Any]) -> None:
    """Put each answer in its place and cache the grades (a JudgeError is asked again next time)."""
    fresh = {}
    for i, grade in zip(indices, answers):
        into[i] = grade
        if not isinstance(grade, JudgeError):
            fresh[keys[i]] = list(grade) if isinstance(grade, tuple) else grade
    verdict_cache.put_many(fresh)


_judges: dict[tuple[str, str], Judge] = {}


def get_judge(model: str, base_url: str) -> Judge:
    """One client per (model, server) and process."""
    judge = _judges.get((model, base_url))
    if judge is None:
        judge = _judges[(model, base_url)] = Judge(model, base_url)
    return judge
