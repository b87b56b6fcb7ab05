"""Sizing the embedded server's context: the GGUF header reader and the plan, with hand-computed figures."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.live.context import (
    CONTEXT_STEP,
    GGUFError,
    kv_bytes_per_token,
    plan_context,
    prompt_token_bound,
    read_gguf_metadata,
    trained_context,
)

# -- a GGUF header written by hand (the format: magic, version, tensor count, kv count, key/values) --


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _kv(key: str, kind: int, payload: bytes) -> bytes:
    return _string(key) + struct.pack("<I", kind) + payload


def gguf(path: Path, items: list[bytes], version: int = 3) -> Path:
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", version, 0, len(items)) + b"".join(items))
    return path


def u32(key: str, value: int) -> bytes:
    return _kv(key, 4, struct.pack("<I", value))


GEMMA_LIKE = [
    _kv("general.architecture", 8, _string("gemma3")),
    # a vocabulary (string array) and a long numeric array come before the keys we need: both skipped
    _kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + _string("<bos>") + _string("a") + _string("b")),
    _kv("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 5000) + b"\0" * 4 * 5000),
    u32("gemma3.context_length", 32768),
    u32("gemma3.block_count", 18),
    u32("gemma3.attention.head_count", 4),
    u32("gemma3.attention.head_count_kv", 1),
    u32("gemma3.attention.key_length", 256),
    u32("gemma3.attention.value_length", 256),
    u32("gemma3.embedding_length", 640),
    _kv("gemma3.rope.freq_base", 6, struct.pack("<f", 1e6)),
    _kv("general.flag", 7, b"\x01"),
]


def test_the_header_gives_the_trained_context_and_the_kv_size(tmp_path: Path) -> None:
    meta = read_gguf_metadata(gguf(tmp_path / "m.gguf", GEMMA_LIKE))
    assert meta["general.architecture"] == "gemma3" and meta["general.flag"] is True
    assert "tokenizer.ggml.tokens" not in meta and "tokenizer.ggml.scores" not in meta  # long arrays skipped
    assert trained_context(meta) == 32768
    # 18 layers x 1 KV head x (256 + 256) values x 2 bytes (f16)
    assert kv_bytes_per_token(meta) == 18 * 1 * 512 * 2 == 18432


def test_kv_size_from_the_embedding_width_when_key_lengths_are_missing(tmp_path: Path) -> None:
    items = [
        _kv("general.architecture", 8, _string("llama")),
        u32("llama.block_count", 30),
        u32("llama.attention.head_count", 9),
        u32("llama.attention.head_count_kv", 3),
        u32("llama.embedding_length", 576),
        u32("llama.context_length", 8192),
    ]
    meta = read_gguf_metadata(gguf(tmp_path / "s.gguf", items))
    assert kv_bytes_per_token(meta) == 30 * 3 * (64 + 64) * 2  # head size 576 / 9 = 64
    assert trained_context(meta) == 8192


def test_unknown_figures_are_none() -> None:
    assert trained_context({}) is None and kv_bytes_per_token({"general.architecture": "x"}) is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"PK\x03\x04 not a model", "not a GGUF file"),
        (b"GGUF" + struct.pack("<I", 1), "version 1 is not supported"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + _string("general.architecture"), "ends early"),
    ],
)
def test_a_bad_file_is_named_in_the_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(GGUFError, match=message) as info:
        read_gguf_metadata(path)
    assert str(path) in str(info.value)


# -- the plan -------------------------------------------------------------------------------------


def plan(**kwargs: Any) -> Any:
    values: dict[str, Any] = {"prompt_tokens": {}, "output_budget": 2048, "slots": 4, "trained": 32768}
    return plan_context(**{**values, **kwargs})


def test_short_prompts_keep_the_default() -> None:
    found = plan(prompt_tokens={"a": 300, "b": 1200}, counted=2)
    assert (found.ctx_per_slot, found.slots, found.source) == (4096, 4, "prompts")
    assert found.reason.startswith("the default holds the longest prompt 1200 tokens (sample 'b')")
    assert found.too_long == ()


def test_the_longest_prompt_plus_the_output_budget_rounded_up() -> None:
    found = plan(prompt_tokens={"a": 4531, "b": 5210, "c": 900}, counted=3)
    assert found.ctx_per_slot == 7680  # 5210 + 2048 = 7258, the next multiple of 512
    assert (found.longest_prompt_tokens, found.longest_prompt_sample) == (5210, "b")
    assert "5210 tokens (sample 'b') + 2048 output tokens = 7258" in found.reason


def test_capped_by_the_trained_context() -> None:
    found = plan(prompt_tokens={"a": 31000}, counted=1)
    assert found.ctx_per_slot == 32768 and "capped at the model's trained context of 32768" in found.reason
    assert found.too_long == ()  # it fits, with 1768 tokens left for the answer


def test_a_prompt_beyond_the_trained_context_does_not_size_the_others() -> None:
    found = plan(prompt_tokens={"huge": 40000, "a": 8000}, counted=2)
    assert found.ctx_per_slot == 10240  # 8000 + 2048 = 10048 -> 10240; not 32768 for a prompt that cannot fit
    assert found.too_long == (("huge", 40000),)
    assert found.as_dict()["too_long"] == [{"sample_id": "huge", "prompt_tokens": 40000}]


def test_the_option_wins_and_says_when_it_is_above_the_trained_context() -> None:
    found = plan(prompt_tokens={"a": 9000, "b": 3000}, requested=8192, counted=2)
    assert (found.ctx_per_slot, found.source) == (8192, "option")
    assert found.too_long == (("a", 9000),)
    above = plan(requested=65536)
    assert above.ctx_per_slot == 65536 and "above the model's trained context of 32768" in above.reason


def test_slots_are_lowered_when_their_kv_cache_would_not_fit_in_memory() -> None:
    # 32768 tokens x 18432 bytes = 576 MiB per slot; half of 2 GiB holds one slot, not four
    found = plan(prompt_tokens={"a": 31000}, counted=1, kv_bytes_per_token=18432, memory_bytes=2 * 2**30)
    assert found.slots == 1 and found.kv_cache_bytes == 32768 * 18432
    assert "slots lowered from 4 to 1" in found.reason
    roomy = plan(prompt_tokens={"a": 31000}, kv_bytes_per_token=18432, memory_bytes=64 * 2**30)
    assert roomy.slots == 4 and roomy.kv_cache_bytes == 4 * 32768 * 18432


def test_no_prompt_keeps_the_default_within_a_small_trained_context() -> None:
    assert plan().ctx_per_slot == 4096
    assert plan(trained=2048).ctx_per_slot == 2048


@given(
    prompts=st.dictionaries(st.text(min_size=1, max_size=5), st.integers(1, 60000), max_size=20),
    budget=st.integers(1, 8192),
    slots=st.integers(1, 8),
    trained=st.one_of(st.none(), st.integers(512, 131072)),
    memory=st.one_of(st.none(), st.integers(2**20, 2**36)),
)
def test_every_prompt_that_can_fit_does(
    prompts: dict[str, int], budget: int, slots: int, trained: int | None, memory: int | None
) -> None:
    found = plan_context(
        prompt_tokens=prompts,
        output_budget=budget,
        slots=slots,
        trained=trained,
        kv_bytes_per_token=18432,
        memory_bytes=memory,
    )
    if trained is not None:
        assert found.ctx_per_slot <= max(trained, 0)
    assert found.ctx_per_slot >= min(4096, trained or 4096)
    assert found.ctx_per_slot % CONTEXT_STEP == 0 or found.ctx_per_slot in (trained, 4096)
    for sid, tokens in prompts.items():
        fits = trained is None or tokens < trained
        if fits:  # room for the prompt, and for the whole output budget unless the trained context is the cap
            assert tokens < found.ctx_per_slot
            assert tokens + budget <= found.ctx_per_slot or found.ctx_per_slot == trained
        assert ((sid, tokens) in found.too_long) == (tokens >= found.ctx_per_slot)
    assert 1 <= found.slots <= slots


@given(st.lists(st.text(max_size=200), min_size=1, max_size=4))
def test_the_byte_bound_is_at_least_the_bytes(texts: list[str]) -> None:
    messages = [{"role": "user", "content": t} for t in texts]
    assert prompt_token_bound(messages) >= sum(len(t.encode()) for t in texts) + len(texts)


def test_the_context_option_takes_whole_token_counts_of_at_least_256() -> None:
    import argparse

    from pytest_extractbench.config.parsers import parse_context
    from pytest_extractbench.config.table import OPTIONS_BY_NAME

    assert parse_context("8192") == 8192 and OPTIONS_BY_NAME["context"].default is None
    for bad in ("100", "8k", "-1"):
        with pytest.raises(argparse.ArgumentTypeError, match="at least 256"):
            parse_context(bad)
