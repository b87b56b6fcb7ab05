"""How much context each slot of an embedded llama-server gets: the model's trained length, the prompts, memory.

Pure functions and one small file reader; no pytest, no HTTP. The server module counts tokens and
restarts the process; this module only decides:

    meta = read_gguf_metadata(path)                       # scalars of the GGUF header
    plan = plan_context(prompt_tokens={"s1": 5210}, output_budget=2048, slots=4,
                        trained=trained_context(meta), kv_bytes_per_token=kv_bytes_per_token(meta),
                        memory_bytes=available_memory())
    plan.ctx_per_slot, plan.slots, plan.reason
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import struct
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from ..core.errors import ExtractbenchError

__all__ = [
    "CONTEXT_STEP",
    "ContextPlan",
    "GGUFError",
    "available_memory",
    "gguf_facts",
    "image_tokens",
    "kv_bytes_per_token",
    "plan_context",
    "prompt_token_bound",
    "read_gguf_metadata",
    "trained_context",
]

#: Context sizes are rounded up to a multiple of this many tokens.
CONTEXT_STEP = 512
#: Share of the free memory the KV cache of all slots may take (the rest: weights, compute buffers, pytest).
MEMORY_SHARE = 0.5
# Tokens a chat template may add per message (role markers, special tokens) beyond the message bytes.
_TEMPLATE_TOKENS_PER_MESSAGE = 16


class GGUFError(ExtractbenchError, ValueError):
    """The file is not a GGUF file this reader understands; the message names the file."""


# ----------------------------------------------------------------------------------------------
# GGUF metadata

# value type -> struct format of one item (8: string, 9: array are read apart)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_MAX_ARRAY_KEPT = 4096  # small numeric arrays (per-layer head counts) are kept; vocabularies are skipped


def _read(fh: IO[bytes], fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = fh.read(size)
    if len(data) != size:
        raise EOFError
    return struct.unpack(fmt, data)[0]


def _read_string(fh: IO[bytes]) -> str:
    length = _read(fh, "<Q")
    data = fh.read(length)
    if len(data) != length:
        raise EOFError
    return data.decode("utf-8", "replace")


def _read_value(fh: IO[bytes], kind: int) -> Any:
    if kind in _SCALARS:
        return _read(fh, _SCALARS[kind])
    if kind == _STRING:
        return _read_string(fh)
    if kind != _ARRAY:
        raise ValueError(f"unknown value type {kind}")
    item_kind, count = _read(fh, "<I"), _read(fh, "<Q")
    if item_kind in _SCALARS and count <= _MAX_ARRAY_KEPT:
        return [_read(fh, _SCALARS[item_kind]) for _ in range(count)]
    if item_kind in _SCALARS:  # a long numeric array: skip it whole
        fh.seek(count * struct.calcsize(_SCALARS[item_kind]), os.SEEK_CUR)
        return None
    for _ in range(count):  # strings (a vocabulary) or nested arrays: walk past them
        _read_value(fh, item_kind)
    return None


def read_gguf_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The key/value metadata of a GGUF file's header: scalars, strings and short numeric arrays.

    Long arrays (the tokenizer's vocabulary) are skipped. Raises :class:`GGUFError` naming the file.
    """
    where = os.fspath(path)
    try:
        with open(where, "rb") as fh:
            if fh.read(4) != b"GGUF":
                raise GGUFError(f"{where}: not a GGUF file (no GGUF magic)")
            version = _read(fh, "<I")
            if version not in (2, 3):
                raise GGUFError(f"{where}: GGUF version {version} is not supported (2 or 3)")
            _tensors, count = _read(fh, "<Q"), _read(fh, "<Q")
            meta: dict[str, Any] = {}
            for _ in range(count):
                key = _read_string(fh)
                value = _read_value(fh, _read(fh, "<I"))
                if value is not None:
                    meta[key] = value
            return meta
    except EOFError:
        raise GGUFError(f"{where}: the GGUF header ends early") from None
    except ValueError as exc:
        if isinstance(exc, GGUFError):
            raise
        raise GGUFError(f"{where}: {exc}") from None


def _arch_value(meta: Mapping[str, Any], name: str) -> Any:
    return meta.get(f"{meta.get('general.architecture')}.{name}")


def trained_context(meta: Mapping[str, Any]) -> int | None:
    """``<arch>.context_length``: the context the model was trained for, if the file says."""
    value = _arch_value(meta, "context_length")
    return int(value) if isinstance(value, int) and value > 0 else None


def kv_bytes_per_token(meta: Mapping[str, Any], bytes_per_value: int = 2) -> int | None:
    """Bytes of KV cache (f16, llama-server's default) one token of context takes, from the header.

    An upper bound: sliding-window layers (Gemma 3) keep only their window, but are counted in full.
    """
    layers = _arch_value(meta, "block_count")
    heads = _arch_value(meta, "attention.head_count")
    kv_heads = _arch_value(meta, "attention.head_count_kv")
    width = _arch_value(meta, "embedding_length")
    if isinstance(kv_heads, list):  # per-layer head counts
        kv_heads = max(kv_heads) if kv_heads else None
    if kv_heads is None:
        kv_heads = heads[0] if isinstance(heads, list) and heads else heads
    if not all(isinstance(v, int) and v > 0 for v in (layers, kv_heads)):
        return None
    key_len, value_len = _arch_value(meta, "attention.key_length"), _arch_value(meta, "attention.value_length")
    if not (isinstance(key_len, int) and isinstance(value_len, int)):
        if not (isinstance(width, int) and isinstance(heads, int) and heads > 0):
            return None
        key_len = value_len = width // heads
    return int(layers * kv_heads * (key_len + value_len) * bytes_per_value)


def available_memory() -> int | None:
    """Bytes of memory available to new processes (Linux MemAvailable), None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


# ----------------------------------------------------------------------------------------------
# prompt sizes


def prompt_token_bound(messages: Sequence[Mapping[str, Any]]) -> int:
    """An upper bound of the tokens a chat prompt takes, without a tokenizer (image parts: an estimate).

    Why it holds for text: byte-level BPE and SentencePiece with byte fallback never make a token of less
    than one byte, and the template adds a few special tokens per message. An image part counts
    :func:`image_tokens`, not the bytes of its base64 data URL.
    """
    size = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if isinstance(part, Mapping) and part.get("type") == "image_url":
                    size += image_tokens(str((part.get("image_url") or {}).get("url", "")))
                else:
                    size += len(json.dumps(part, ensure_ascii=False).encode("utf-8"))
            size += _TEMPLATE_TOKENS_PER_MESSAGE
            continue
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        size += len(text.encode("utf-8")) + _TEMPLATE_TOKENS_PER_MESSAGE
    return size + _TEMPLATE_TOKENS_PER_MESSAGE


#: Pixels a side of one image token: Qwen2-VL / Qwen2.5-VL merge 2 x 2 patches of 14 px, the most tokens per pixel
#: of the common vision encoders (Gemma 3 takes 256 tokens an image, LLaVA 576, OpenAI 85 + 170 per 512-px tile).
IMAGE_TOKEN_SIDE = 28
#: An image whose size cannot be read from its header: as many tokens as a 1600 x 1600 page.
IMAGE_TOKENS_UNKNOWN = (1600 // IMAGE_TOKEN_SIDE + 1) ** 2
_IMAGE_MARKERS = 4  # begin/end-of-image and separator tokens around the patches


def prompt_image_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """The tokens of a chat prompt's image parts (:func:`image_tokens` each); 0 for a text prompt."""
    return sum(
        image_tokens(str((part.get("image_url") or {}).get("url", "")))
        for message in messages
        if isinstance(content := message.get("content"), list)
        for part in content
        if isinstance(part, Mapping) and part.get("type") == "image_url"
    )


def image_tokens(url: str) -> int:
    """Tokens an image part is counted as: one per 28 x 28 pixels (see :data:`IMAGE_TOKEN_SIDE`), from the size in a
    ``data:`` URL's PNG, GIF or JPEG header; :data:`IMAGE_TOKENS_UNKNOWN` when it cannot be read (a remote URL)."""
    size = _data_url_size(url)
    if size is None:
        return IMAGE_TOKENS_UNKNOWN
    width, height = size
    return -(-width // IMAGE_TOKEN_SIDE) * -(-height // IMAGE_TOKEN_SIDE) + _IMAGE_MARKERS


def _data_url_size(url: str) -> tuple[int, int] | None:
    head, sep, payload = url.partition(",")
    if not sep or not head.startswith("data:") or not head.endswith(";base64"):
        return None
    try:
        data = base64.b64decode(payload[: 4 * 1024 * 1024], validate=False)
    except (ValueError, binascii.Error):
        return None
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return struct.unpack("<HH", data[6:10])
    if data.startswith(b"\xff\xd8"):
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                return None
            marker, length = data[i + 1], struct.unpack(">H", data[i + 2 : i + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
                height, width = struct.unpack(">HH", data[i + 5 : i + 9])
                return width, height
            i += 2 + length
    return None


# ----------------------------------------------------------------------------------------------
# the plan


def _round_up(tokens: int, step: int = CONTEXT_STEP) -> int:
    return -(-tokens // step) * step


def _size(n: float) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"


@dataclass(frozen=True)
class ContextPlan:
    """The context per slot and the slot count an embedded server is started with, and why."""

    ctx_per_slot: int
    slots: int
    reason: str
    source: str  # "option" (--extractbench-context), "prompts" (sized to them) or "default"
    trained_context: int | None = None
    output_budget: int = 0
    longest_prompt_tokens: int | None = None
    longest_prompt_sample: str | None = None
    prompts_counted: int = 0  # prompts measured with the model's tokenizer (the rest: byte bounds)
    kv_cache_bytes: int | None = None  # estimated KV cache of all slots (an upper bound)
    # samples whose prompt alone exceeds the context: the server will refuse them (context_exceeded)
    too_long: tuple[tuple[str, int], ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["too_long"] = [{"sample_id": sid, "prompt_tokens": n} for sid, n in self.too_long]
        return data

    def describe(self) -> str:
        """``7680 tokens per slot x 4 slots: <reason>``."""
        return f"{self.ctx_per_slot} tokens of context per slot x {self.slots} slot(s): {self.reason}"


def plan_context(
    *,
    prompt_tokens: Mapping[str, int],
    output_budget: int,
    slots: int,
    trained: int | None = None,
    requested: int | None = None,
    default: int = 4096,
    kv_bytes_per_token: int | None = None,
    memory_bytes: int | None = None,
    counted: int = 0,
) -> ContextPlan:
    """Context per slot: ``requested`` if given, else the longest prompt plus the output budget
    (never below ``default``), capped by the trained context; slots lowered until their KV cache
    fits in :data:`MEMORY_SHARE` of ``memory_bytes``.

    ``prompt_tokens`` maps sample ids to token counts (exact, or upper bounds for prompts that fit
    even so); ``counted`` says how many were measured with the tokenizer.
    """
    # A prompt longer than the trained context cannot fit however large the context: it does not size it.
    fitting = {sid: n for sid, n in prompt_tokens.items() if trained is None or n < trained}
    longest_sample, longest = (None, None)
    if fitting:
        longest_sample, longest = max(fitting.items(), key=lambda kv: (kv[1], kv[0]))
    floor = default if trained is None else min(default, trained)
    if requested is not None:
        ctx, source = requested, "option"
        reason = "set by --extractbench-context"
        if trained is not None and requested > trained:
            reason += f", above the model's trained context of {trained} tokens (answers may degrade)"
    elif longest is None:
        ctx, source = floor, "default"
        reason = "the default; no prompt was measured" if not prompt_tokens else "the default"
    else:
        need = longest + output_budget
        ctx, source = max(floor, _round_up(need)), "prompts"
        what = "longest prompt" if counted else "longest prompt at most"
        reason = f"{what} {longest} tokens (sample {longest_sample!r}) + {output_budget} output tokens = {need}"
        reason += f", rounded up to a multiple of {CONTEXT_STEP}" if ctx > floor and ctx != need else ""
        reason = reason if ctx > floor else f"the default holds the {reason}"
        if trained is not None and ctx > trained:
            ctx = trained
            reason += f"; capped at the model's trained context of {trained} tokens"
    too_long = tuple(sorted(((sid, n) for sid, n in prompt_tokens.items() if n >= ctx), key=lambda kv: (-kv[1], kv[0])))
    beyond = sum(1 for _, n in too_long if trained is not None and n >= trained)
    if beyond:
        reason += f"; {beyond} prompt(s) longer than the trained context cannot fit"
    if len(too_long) > beyond:
        reason += f"; {len(too_long) - beyond} prompt(s) longer than this context do not fit"
    kv = None
    if kv_bytes_per_token:
        kv = kv_bytes_per_token * ctx * slots
        if memory_bytes:
            budget = MEMORY_SHARE * memory_bytes
            slots_that_fit = max(1, int(budget // (kv_bytes_per_token * ctx)))
            if slots_that_fit < slots:
                reason += (
                    f"; slots lowered from {slots} to {slots_that_fit}: the KV cache of {slots} slots "
                    f"(up to {_size(kv)}) would not fit in half the free memory ({_size(memory_bytes)})"
                )
                slots = slots_that_fit
                kv = kv_bytes_per_token * ctx * slots
    return ContextPlan(
        ctx_per_slot=ctx,
        slots=slots,
        reason=reason,
        source=source,
        trained_context=trained,
        output_budget=output_budget,
        longest_prompt_tokens=longest,
        longest_prompt_sample=longest_sample,
        prompts_counted=counted,
        kv_cache_bytes=kv,
        too_long=too_long,
    )


def gguf_facts(path: Path) -> tuple[int | None, int | None]:
    """(trained context, KV bytes per token) of a GGUF file; (None, None) when the header is unreadable."""
    try:
        meta = read_gguf_metadata(path)
    except (OSError, GGUFError):
        return None, None
    return trained_context(meta), kv_bytes_per_token(meta)
