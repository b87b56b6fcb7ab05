"""Tool calling, scored the way BFCL's AST checker does.

A sample is a question (chat turns), function definitions and gold calls in
BFCL's format: ``[{"func_name": {"param": [acceptable values...]}}]``, where ``""``
among the acceptable values means the parameter may be left out and ``[]`` means
the model should make no call at all (abstention). Predicted calls are paired
with gold calls order-free (``scipy.optimize.linear_sum_assignment``), so parallel
calls may come in any order.

Metrics (micro over calls, sample accuracy as BFCL):

* valid call rate: predicted calls that are well formed (a name, arguments that are a JSON
  object), name a declared function and whose arguments satisfy its parameter schema;
* name match rate: paired calls with the gold name / calls (``max(gold, predicted)`` per sample);
* arguments exact match rate: paired calls with the gold name whose arguments are all acceptable
  and complete / calls;
* arguments precision, recall, F1: a predicted argument with an acceptable value is a true
  positive; a wrong or unexpected one a false positive; a required gold argument not correctly
  given a false negative (omitted optional arguments cost nothing);
* abstention accuracy (no call where none is expected) and false abstention rate (no call where
  one was expected); accuracy: every gold call matched exactly and nothing extra.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..core import jsonio
from ..core.textsafe import json_line
from ..core.wording import counted
from ..dataset.responses import ModelResponse
from ..scoring import MISSING, prf, strip_fence, validation_errors
from .base import Messages, Track, TrackSample, mean

# OpenAI tool names: ^[a-zA-Z0-9_-]{1,64}$; BFCL names have dots (math.factorial).
_UNSAFE_NAME = re.compile(r"[^a-zA-Z0-9_-]")
# BFCL's string standardization: these characters and case do not count.
_STANDARDIZE = re.compile(r"[ ,./\-_*^]")
# BFCL's schema dialect -> JSON Schema types.
_TYPES = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "list": "array",
    "int": "integer",
    "bool": "boolean",
    "str": "string",
    "String": "string",
    "Boolean": "boolean",
    "HashMap": "object",
    "ArrayList": "array",
    "Array": "array",
    "long": "integer",
    "double": "number",
    "char": "string",
}
_JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}


def safe_name(name: str) -> str:
    """The function name as sent in the ``tools`` field."""
    return _UNSAFE_NAME.sub("_", name)[:64]


def to_json_schema(schema: Any) -> Any:
    """BFCL's parameter schema dialect (``dict``, ``float``, ``tuple``, ``any``) as JSON Schema."""
    if isinstance(schema, list):
        return [to_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            mapped = _TYPES.get(value, value)
            if mapped in _JSON_TYPES:
                out["type"] = mapped
            # "any" and unknown dialect types: unconstrained
        elif key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {k: to_json_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
            out[key] = to_json_schema(value)
        elif key == "optional":
            continue  # BFCL's non-standard flag; "required" says the same
        else:
            out[key] = value
    return out


# ------------------------------------------------------------------------------------- samples


def _turns(question: Any) -> Messages | None:
    """BFCL questions are a list of turns, each a list of messages; single lists and strings are accepted."""
    if isinstance(question, str):
        return [{"role": "user", "content": question}]
    if not isinstance(question, list) or not question:
        return None
    flat = [m for turn in question for m in (turn if isinstance(turn, list) else [turn])]
    if not all(isinstance(m, dict) and isinstance(m.get("content"), str) and m.get("role") for m in flat):
        return None
    return [{"role": m["role"], "content": m["content"]} for m in flat]


def _check_gold(calls: Any, names: set[str]) -> str | None:
    if not isinstance(calls, list):
        return "must be a list of {function name: {parameter: [acceptable values]}}"
    for index, call in enumerate(calls):
        if not isinstance(call, dict) or len(call) != 1:
            return f"call {index} must be an object with exactly one function name"
        ((name, params),) = call.items()
        if name not in names:
            return f"call {index} names {name!r}, which is not among the functions"
        if not isinstance(params, dict) or not all(isinstance(v, list) for v in params.values()):
            return f"call {index} ({name}): every parameter needs a list of acceptable values"
    return None


# ---------------------------------------------------------------------------------- predictions


def _as_arguments(raw: Any) -> tuple[Any, str | None]:
    if isinstance(raw, str):
        try:
            raw = jsonio.loads(raw) if raw.strip() else {}  # bounded: model text can be nested 5,000 deep
        except jsonio.JsonInputError as exc:
            return None, f"arguments are {exc}"
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return None, f"arguments must be a JSON object, got {type(raw).__name__}"
    return raw, None


def normalize_call(raw: Any, names: Mapping[str, str]) -> dict[str, Any]:
    """One predicted call as ``{name, arguments, error}``; OpenAI, ``{name, arguments}`` and BFCL forms."""
    if isinstance(raw, dict) and isinstance(raw.get("function"), dict):
        raw = raw["function"]
    if isinstance(raw, dict) and "name" in raw:
        name = raw.get("name")
        args, error = _as_arguments(raw.get("arguments", raw.get("parameters")))
    elif isinstance(raw, dict) and len(raw) == 1 and isinstance(next(iter(raw.values())), (dict, str)):
        ((name, value),) = raw.items()
        args, error = _as_arguments(value)
    else:
        return {"name": None, "arguments": None, "error": "not a tool call (needs a name and arguments)"}
    if not isinstance(name, str) or not name:
        return {"name": None, "arguments": args, "error": "the call has no function name"}
    return {"name": names.get(name, name), "arguments": args, "error": error}


def parse_calls(content: Any, names: Mapping[str, str]) -> tuple[list[dict[str, Any]], str | None]:
    """Calls in model text or a predictions value; prose (no JSON) is an answer without a call."""
    value = content
    if isinstance(content, str):
        text = strip_fence(content).strip()
        if not text:
            return [], None
        if text[0] not in "[{":
            return [], None  # an answer in words: the model made no call
        try:
            value = jsonio.loads(text)
        except jsonio.JsonInputError as exc:
            return [], f"output looks like a call but is {exc}"
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        value = value["tool_calls"]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return [], f"expected a list of calls, got {type(value).__name__}"
    return [normalize_call(c, names) for c in value], None


# ------------------------------------------------------------------------------------ matching


def standardize(text: str) -> str:
    return _STANDARDIZE.sub("", text).lower().replace("'", '"')


def value_matches(predicted: Any, gold: Any) -> bool:
    """One predicted value against one acceptable gold value (BFCL rules: case, spacing, int for float)."""
    if isinstance(gold, bool) or isinstance(predicted, bool):
        return type(gold) is type(predicted) and gold == predicted
    if isinstance(gold, (int, float)) and isinstance(predicted, (int, float)):
        if isinstance(gold, int) and isinstance(predicted, float) and not predicted.is_integer():
            return False
        return math.isclose(float(predicted), float(gold), rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(gold, str) and isinstance(predicted, str):
        return standardize(predicted) == standardize(gold)
    if isinstance(gold, (list, tuple)) and isinstance(predicted, (list, tuple)):
        return len(gold) == len(predicted) and all(value_matches(p, g) for p, g in zip(predicted, gold))
    if isinstance(gold, dict) and isinstance(predicted, dict):
        # nested BFCL gold: {key: [acceptable values]}; plain dicts compare key by key
        for key, options in gold.items():
            if key not in predicted:
                if not (isinstance(options, list) and optional(options)):
                    return False
                continue
            if not (
                acceptable(predicted[key], options)
                if isinstance(options, list)
                else value_matches(predicted[key], options)
            ):
                return False
        return set(predicted) <= set(gold)
    return gold is None and predicted is None


def optional(options: Sequence[Any]) -> bool:
    """A parameter may be left out when ``""`` is acceptable, or when no value is (BFCL's live data writes ``[]``)."""
    return not options or "" in options


def acceptable(predicted: Any, options: Sequence[Any]) -> bool:
    """True when ``predicted`` matches one of BFCL's acceptable values (``""`` only means "may be omitted")."""
    if not options:  # nothing listed: only an empty value stands for "not given"
        return predicted in ([], {}, "", None)
    return any(value_matches(predicted, option) for option in options if not (isinstance(option, str) and option == ""))


def argument_counts(gold: Mapping[str, list[Any]] | None, predicted: Mapping[str, Any] | None) -> dict[str, int]:
    """True/false positives and false negatives of one call's arguments (either side may be absent)."""
    gold = gold or {}
    predicted = predicted or {}
    tp = fp = fn = 0
    for key, options in gold.items():
        if key in predicted:
            if acceptable(predicted[key], options):
                tp += 1
            else:
                fp += 1
                fn += 1
        elif not optional(options):
            fn += 1
    fp += sum(1 for key in predicted if key not in gold)
    return {"tp": tp, "fp": fp, "fn": fn}


def _pair_score(gold_name: str, gold_args: Mapping[str, list[Any]], call: Mapping[str, Any]) -> float:
    if call["name"] != gold_name:
        return 0.0
    counts = argument_counts(gold_args, call["arguments"])
    denominator = 2 * counts["tp"] + counts["fp"] + counts["fn"]
    return 1.0 + (2 * counts["tp"] / denominator if denominator else 1.0)


def match_calls(gold: Sequence[Mapping[str, Any]], predicted: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """Order-free pairs (gold index, predicted index) maximizing name matches, then argument F1."""
    if not gold or not predicted:
        return []
    scores = np.zeros((len(gold), len(predicted)))
    for i, entry in enumerate(gold):
        ((name, args),) = entry.items()
        for j, call in enumerate(predicted):
            scores[i, j] = _pair_score(name, args, call)
    from scipy.optimize import linear_sum_assignment  # a second to import: only when calls are paired

    rows, cols = linear_sum_assignment(scores, maximize=True)
    return [(int(i), int(j)) for i, j in zip(rows, cols)]


def score_calls(
    gold: Sequence[Mapping[str, Any]],
    predicted: Sequence[Mapping[str, Any]],
    functions: Mapping[str, Any] | None = None,
    format_error: str | None = None,
) -> dict[str, Any]:
    """Every tool-call metric's counts for one sample (``functions``: name -> JSON Schema of its parameters)."""
    functions = functions or {}
    valid = 0
    call_errors: list[str] = []
    for index, call in enumerate(predicted):
        problem = call.get("error")
        if problem is None and call["name"] not in functions and functions:
            problem = f"unknown function {call['name']!r}"
        if problem is None and functions:
            errors = validation_errors(call["arguments"], functions[call["name"]], validate_formats=False)
            problem = f"arguments violate the schema of {call['name']!r}: {errors[0]}" if errors else None
        if problem is None:
            valid += 1
        else:
            call_errors.append(f"call {index}: {problem}")
    pairs = match_calls(gold, predicted)
    paired_gold = {i for i, _ in pairs}
    paired_pred = {j for _, j in pairs}
    names = args_exact = 0
    tp = fp = fn = 0
    details = []
    for i, j in pairs:
        ((name, args),) = gold[i].items()
        call = predicted[j]
        if call["name"] == name:
            names += 1
            counts = argument_counts(args, call["arguments"])
            exact = counts["fp"] == 0 and counts["fn"] == 0
            args_exact += exact
        else:
            counts = {"tp": 0, "fp": len(call["arguments"] or {}), "fn": argument_counts(args, None)["fn"]}
            exact = False
        tp, fp, fn = tp + counts["tp"], fp + counts["fp"], fn + counts["fn"]
        details.append(
            {"gold": i, "predicted": j, "name_match": call["name"] == name, "arguments_exact": exact, **counts}
        )
    for i in set(range(len(gold))) - paired_gold:
        ((name, args),) = gold[i].items()
        fn += argument_counts(args, None)["fn"]
    for j in set(range(len(predicted))) - paired_pred:
        fp += len(predicted[j]["arguments"] or {})
    total = max(len(gold), len(predicted))
    abstention = not gold
    correct = format_error is None and (
        not predicted if abstention else (len(gold) == len(predicted) and args_exact == len(gold))
    )
    return {
        "gold_calls": len(gold),
        "predicted_calls": len(predicted),
        "calls": total,
        "valid_calls": valid,
        "name_matches": names,
        "arguments_exact": args_exact,
        "arguments": {"tp": tp, "fp": fp, "fn": fn},
        "abstention_expected": abstention,
        "abstained": format_error is None and not predicted,
        "format_error": format_error,
        "call_errors": call_errors,
        "pairs": details,
        "correct": correct,
    }


def aggregate_calls(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The track's metrics over per-sample :func:`score_calls` results."""
    calls = sum(r["calls"] for r in results)
    predicted = sum(r["predicted_calls"] for r in results)
    tp = sum(r["arguments"]["tp"] for r in results)
    fp = sum(r["arguments"]["fp"] for r in results)
    fn = sum(r["arguments"]["fn"] for r in results)
    precision, recall, f1 = prf(tp, tp + fp, tp + fn)
    abstain = [r for r in results if r["abstention_expected"]]
    expect = [r for r in results if not r["abstention_expected"]]
    return {
        "num_samples": len(results),
        "accuracy": mean([float(r["correct"]) for r in results]),
        "output_valid_rate": mean([float(r["format_error"] is None) for r in results]),
        "valid_call_rate": sum(r["valid_calls"] for r in results) / predicted if predicted else None,
        "name_match_rate": sum(r["name_matches"] for r in results) / calls if calls else None,
        "arguments_exact_match_rate": sum(r["arguments_exact"] for r in results) / calls if calls else None,
        "arguments_precision": precision,
        "arguments_recall": recall,
        "arguments_f1": f1,
        "abstention": {
            "samples": len(abstain),
            "accuracy": mean([float(r["correct"]) for r in abstain]) if abstain else None,
            "false_abstention_rate": mean([float(r["abstained"]) for r in expect]) if expect else None,
        },
        "calls": {"gold": sum(r["gold_calls"] for r in results), "predicted": predicted, "scored": calls},
        "arguments": {"tp": tp, "fp": fp, "fn": fn},
    }


# -------------------------------------------------------------------------------------- track


class ToolCallTrack(Track):
    name = "toolcall"
    headline = ("accuracy", "valid_call_rate", "name_match_rate", "arguments_exact_match_rate", "arguments_f1")
    bundled_file = "toolcall.jsonl"
    description = "tool calling through the OpenAI tools API, BFCL-style acceptable values"
    compare_parsed = True

    def expected_lines(self, sample: TrackSample) -> list[str]:
        return [f"  expected: {json_line(sample.expected, 200)}"]

    def parse_row(self, row: Mapping[str, Any], sample_id: str, problem: Callable[..., None]) -> TrackSample | None:
        messages = _turns(row.get("question"))
        if messages is None:
            problem("'question' must be a string or BFCL turns (a list of lists of {role, content})", "question")
        functions = row.get("functions", row.get("function"))
        if not isinstance(functions, list) or not all(
            isinstance(f, dict) and isinstance(f.get("name"), str) for f in functions
        ):
            problem("'functions' must be a list of function definitions with a name", "functions")
            return None
        gold = row.get("expected_calls", row.get("ground_truth"))
        if gold is None:
            problem(
                "missing the gold calls ('expected_calls' or BFCL's 'ground_truth'; [] = no call)", "expected_calls"
            )
            return None
        error = _check_gold(gold, {f["name"] for f in functions})
        if error:
            problem(f"'expected_calls': {error}", "expected_calls")
        if messages is None or error:
            return None
        category = "abstention" if not gold else ("parallel" if len(gold) > 1 else "single")
        meta = {"topic": row.get("topic") or category, "category": category}
        # translated once per sample: the validators are cached by schema object, so scoring reuses them
        schemas = {
            f["name"]: to_json_schema(f.get("parameters") or {"type": "object", "properties": {}}) for f in functions
        }
        return TrackSample(sample_id, {"messages": messages, "functions": functions, "schemas": schemas}, gold, meta)

    def build_request(self, sample: TrackSample) -> tuple[Messages, dict[str, Any]]:
        tools = [
            {
                "type": "function",
                "function": {
                    "name": safe_name(f["name"]),
                    "description": str(f.get("description", "")),
                    "parameters": sample.data["schemas"][f["name"]],
                },
            }
            for f in sample.data["functions"]
        ]
        return [dict(m) for m in sample.data["messages"]], {"tools": tools, "tool_choice": "auto"}

    def _names(self, sample: TrackSample) -> dict[str, str]:
        return {safe_name(f["name"]): f["name"] for f in sample.data["functions"]}

    def read_response(self, sample: TrackSample, response: ModelResponse) -> Any:
        names = self._names(sample)
        tool_calls = getattr(response, "tool_calls", None)
        if tool_calls:
            calls, error = parse_calls(list(tool_calls), names)
        elif response.content is MISSING:
            calls, error = [], f"no output ({response.error_class}): {response.error}"
        else:
            calls, error = parse_calls(response.content, names)
        return {"calls": calls, "format_error": error}

    def score(self, sample: TrackSample, prediction: Any, options: Any = None) -> dict[str, Any]:
        result = score_calls(sample.expected, prediction["calls"], sample.data["schemas"], prediction["format_error"])
        result["predicted"] = prediction["calls"]
        result["passed"] = result["correct"]
        result["failure"] = None if result["correct"] else self._why(result)
        return result

    @staticmethod
    def _why(result: Mapping[str, Any]) -> str:
        if result["format_error"]:
            return f"unusable output: {result['format_error']}"
        if result["abstention_expected"]:
            return f"no call was expected, the model made {result['predicted_calls']}"
        if result["abstained"]:
            return f"the model made no call; {result['gold_calls']} expected"
        return (
            f"{result['arguments_exact']}/{result['gold_calls']} gold calls matched exactly "
            f"({result['predicted_calls']} predicted, {result['name_matches']} with the right name)"
        )

    def consistency_value(self, prediction: Any) -> Any:
        calls = [{"name": c["name"], "arguments": c["arguments"]} for c in prediction["calls"]]
        return sorted(calls, key=lambda c: json.dumps(c, sort_keys=True, default=str))

    def aggregate(self, results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return aggregate_calls(results)

    def summary_lines(self, section: Mapping[str, Any]) -> list[str]:
        def pct(value: float | None) -> str:
            return "n/a" if value is None else f"{100 * value:.1f}%"

        abstention = section["abstention"]
        return [
            f"  accuracy            {pct(section['accuracy'])}   output valid {pct(section['output_valid_rate'])}",
            f"  valid call rate     {pct(section['valid_call_rate'])}   name match {pct(section['name_match_rate'])}",
            f"  arguments exact     {pct(section['arguments_exact_match_rate'])}   "
            f"P/R/F1 {section['arguments_precision']:.3f}/{section['arguments_recall']:.3f}/"
            f"{section['arguments_f1']:.3f}",
            f"  abstention          {counted(abstention['samples'], 'sample')}, accuracy {pct(abstention['accuracy'])}; "
            f"false abstention {pct(abstention['false_abstention_rate'])}",
        ]

    def failure_lines(self, result: Mapping[str, Any]) -> list[str]:
        lines = [f"  {error}" for error in result.get("call_errors", [])[:5]]
        for call in result.get("predicted", [])[:5]:
            lines.append(
                f"  predicted: {json.dumps({call['name']: call['arguments']}, ensure_ascii=False, default=str)[:200]}"
            )
        return lines
