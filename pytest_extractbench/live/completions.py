"""Reading a 200 answer: the chat completion's content, finish reason, tool calls, logprobs and usage.

What is wrong with a body is said in words (``errors.parse_body``); the error classes come from errors.py.
"""

from __future__ import annotations

import json
from typing import Any

from ..core import jsonio
from ..dataset.responses import ModelResponse, clean_timings, clean_usage
from ..scoring import MISSING
from .errors import one_line, parse_body, truncation

__all__ = ["clear", "fill_completion"]


def clear(response: ModelResponse) -> None:
    """Forget what a failed attempt had read, so a retry starts clean."""
    response.content, response.finish_reason, response.usage, response.timings = MISSING, None, {}, None
    response.tool_calls = response.logprobs = response.choices = None
    response.error_class = response.error = None


def fill_completion(response: ModelResponse, body: bytes, max_tokens: Any) -> str | None:
    """Read a 200 body into `response`; return what is wrong when it is not a chat completion."""
    data, problem = parse_body(body)
    if problem is not None:
        return problem
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not all(isinstance(c, dict) for c in choices):
        return f"the server's answer has no choices: {one_line(body[:2000].decode('utf-8', 'replace'), 200)!r}"
    first = read_choice(choices[0])
    response.content = first["content"]
    response.finish_reason = first["finish_reason"]
    response.tool_calls = first.get("tool_calls")
    response.logprobs = first.get("logprobs")
    if len(choices) > 1:
        response.choices = [read_choice(c) for c in choices]
    # odd counts (1e400, NaN, a list, negative) are left out: the answer itself is still scored
    response.usage = clean_usage(data.get("usage"), keys=("prompt_tokens", "completion_tokens", "total_tokens"))
    response.timings = clean_timings(data.get("timings"))  # llama-server's; vLLM and OpenAI send none
    cut = truncation(response.finish_reason, max_tokens)
    if cut is not None:
        response.error_class, response.error = cut.error_class, cut.error
    return None


def read_choice(choice: dict[str, Any]) -> dict[str, Any]:
    message = choice.get("message")
    message = message if isinstance(message, dict) else {}
    content = message.get("content")
    out: dict[str, Any] = {
        "content": content if isinstance(content, str) else ("" if content is None else json.dumps(content)),
        "finish_reason": choice["finish_reason"] if isinstance(choice.get("finish_reason"), str) else None,
    }
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [read_tool_call(call) for call in calls if isinstance(call, dict)]
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict) and isinstance(logprobs.get("content"), list):
        out["logprobs"] = [
            {"token": item.get("token"), "logprob": item.get("logprob")}
            for item in logprobs["content"]
            if isinstance(item, dict)
        ]
    return out


def read_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = jsonio.loads(arguments)
        except jsonio.JsonInputError:
            pass  # kept as the raw string: invalid arguments are the tool-call track's finding
    return {"name": function.get("name"), "arguments": arguments}
