"""One sanitizer and one masker at every sink.

Property: whatever hostile text reaches a sink (ANSI escapes, OSC titles, bidi overrides, NUL, C1 controls,
credential-shaped text, the key set in the environment), what the sink writes holds no control character a
terminal or viewer acts on and no credential. Sinks: the terminal and log lines, Markdown (summary.md),
report.html (its <title> too), CSV cells, JUnit messages and properties. End to end: a model name with escape
characters and an extractor whose exception quotes the API key, through whole pytest runs.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _checks import assert_clean_terminal, assert_no_secret, unpacked
from pytest_extractbench.core import textsafe
from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.report import exports, html

KEY = "k3y-Zx81Qw-ENVIRONMENT-secret"  # the API key of the environment: masked wherever it appears
SK = "sk-proj-Ab12Cd34Ef56Gh78"
BEARER_TOKEN = "eyJhbGciOi.J9x-8Qz"
SECRETS = (KEY, SK, BEARER_TOKEN)
# what a terminal, a browser's text or a spreadsheet would act on: C0 (tab and newline aside), DEL, C1, and the
# format characters that reorder or hide text
# format characters that reorder or hide text, and Unicode's noncharacters (U+FDD0-U+FDEF, U+xFFFE, U+xFFFF)
NONCHARACTERS = [chr(c) for c in range(0xFDD0, 0xFDF0)] + [
    chr(plane << 16 | low) for plane in range(17) for low in (0xFFFE, 0xFFFF)
]
UNSAFE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff" + "".join(NONCHARACTERS) + "]"
)

HOSTILE = st.sampled_from(
    [
        "\x1b[2J\x1b[H",
        "\x1b]0;pwned\x07",
        "\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\",
        "\x9b31m",
        "\x00",
        "\r",
        "\x7f",
        "\b",
        "\u202e",
        "\u2066",
        "\u200f",
        "\u2028",
        "\ufeff",
        f"Bearer {BEARER_TOKEN}",
        f"Authorization: Bearer {BEARER_TOKEN}",
        SK,
        KEY,
        f"api_key={KEY}",
        f'{{"api_key": "{KEY}"}}',
        f"https://user:{KEY}@example.test/",
        "=cmd|' /C calc'!A0",
        "<script>alert(1)</script>",
        "@team",
        "é",
        "日本",
        "\ufdd0",
        "\ufffe",
        "\U0010ffff",
    ]
)
# fragments joined by a separator: a credential starts after a non-word character, as in any real message
SEPARATORS = st.sampled_from([" ", "\n", "\t", ", ", "; ", "\x1b[0m ", "|", "\u202e "])
TEXTS = st.lists(st.tuples(st.one_of(HOSTILE, st.text(max_size=12)), SEPARATORS), min_size=1, max_size=8).map(
    lambda parts: "".join(fragment + separator for fragment, separator in parts)
)
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture
def env_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("EXTRACTBENCH_API_KEY", KEY)
    yield KEY


def assert_inert(out: str) -> None:
    found = UNSAFE.search(out)
    assert found is None, f"{found.group()!r} reached the sink: {out!r}"
    for secret in SECRETS:
        assert secret not in out, f"a credential reached the sink: {out!r}"


@PROPERTY
@given(text=TEXTS)
def test_terminal_and_log_lines(env_key: str, text: str) -> None:
    assert_inert(textsafe.terminal(text))
    assert_inert(textsafe.terminal(text, None))
    assert_inert(textsafe.text_lines(text))
    assert_inert(textsafe.terminal((text + " ") * 40, 50))  # clipped: a key cut at the edge still does not leak


@PROPERTY
@given(char=st.sampled_from(NONCHARACTERS), text=st.text(max_size=8))
def test_noncharacters_are_escaped_like_other_invisible_characters(char: str, text: str) -> None:
    assert len(NONCHARACTERS) == 66
    escaped = f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}"
    for out in (textsafe.terminal(text + char), textsafe.markdown(text + char)):
        assert char not in out
        assert out.endswith(escaped)


@PROPERTY
@given(text=TEXTS)
def test_logs(env_key: str, text: str) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = textsafe.get_logger("extractbench.test_sinks")
    logger.addHandler(handler)
    try:
        logger.warning("server said %s", text)
    finally:
        logger.removeHandler(handler)
    assert_inert(stream.getvalue().rstrip("\n"))


@PROPERTY
@given(text=TEXTS)
def test_markdown(env_key: str, text: str) -> None:
    out = textsafe.markdown(text)
    assert_inert(out)
    assert "<script" not in out


@PROPERTY
@given(text=TEXTS)
def test_html_title_and_body(env_key: str, text: str) -> None:
    # the report's own environment: every printed string goes through the sanitizer, then autoescaping
    page = html._environment().from_string("<title>{{ t }}</title><h1>{{ t }}</h1>").render(t=text)
    assert_inert(page)
    assert "<script>" not in page


@PROPERTY
@given(texts=st.lists(TEXTS, min_size=1, max_size=4))
def test_csv_cells(env_key: str, texts: list[str]) -> None:
    out = exports._csv(["a"] * len(texts), [texts])
    for row in csv.reader(io.StringIO(out)):
        for value in row:
            assert_inert(value)
            assert not value.startswith(("=", "+", "@", "\t", "\r")), value


@PROPERTY
@given(text=TEXTS)
def test_gate_verdict_messages(env_key: str, text: str) -> None:
    from pytest_extractbench.gating.gates import gate_verdicts

    check = {
        "metric": "judge_score",
        "label": "judge_score",
        "value": None,
        "threshold": 0.5,
        "direction": "min",
        "passed": False,
        "outcome": "could not be measured",
        "reason": f"the LLM judge failed: {text}",
    }
    (verdict,) = gate_verdicts({"models": {text: {"requirements": {"checks": [check]}}}})
    # what plugin/gates.py hands to JUnit and the terminal
    assert_inert(textsafe.text_lines(verdict.message).replace("\n", " "))
    assert_inert(textsafe.terminal(verdict.model))


# -- whole runs -------------------------------------------------------------------------------------

EVIL_MODEL = "evil\x1b]0;pwned\x07\u202emodel\x1b[2J"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}
SAMPLES = [{"id": f"s{i}", "text": f"P{i}", "schema": SCHEMA, "expected": {"name": f"P{i}"}} for i in range(3)]
EXTRACTOR = f"""
def extract(sample):
    if sample.id == "s1":
        raise RuntimeError("401 Unauthorized: sent Authorization: Bearer {BEARER_TOKEN} with key {KEY} ({SK})")
    return {{"name": "P" + sample.id[1:]}}
"""


def _sinks(root: Path, result: pytest.RunResult) -> list[str]:
    out = root / "out"
    texts = [result.stdout.str(), (root / "junit.xml").read_text(encoding="utf-8")]
    texts += [
        (out / name).read_text(encoding="utf-8") for name in ("summary.md", "report.html", "metrics.csv", "samples.csv")
    ]
    packed = unpacked(texts[3])  # the viewer's data, as the page's script reads it
    assert len(packed) == 2
    return texts + packed


def _assert_run_sinks_inert(root: Path, result: pytest.RunResult) -> None:
    for text in _sinks(root, result):
        assert_clean_terminal(text)
        assert "\u202e" not in text
    assert_no_secret(SECRETS, root / "out", root / "junit.xml", texts=[result.stdout.str(), result.stderr.str()])


def test_a_model_name_with_escapes_is_escaped_in_title_csv_and_junit(pytester: pytest.Pytester, env_key: str) -> None:
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES), encoding="utf-8")
    (pytester.path / "preds.jsonl").write_text(
        "".join(json.dumps({"id": s["id"], "model": EVIL_MODEL, "output": {"name": "wrong"}}) + "\n" for s in SAMPLES)
    )
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-resamples",
        "100",
        "--junitxml",
        "junit.xml",
    )
    assert result.ret == 1  # wrong outputs miss the tier: the gate's message carries the model name
    _assert_run_sinks_inert(pytester.path, result)
    page = (pytester.path / "out" / "report.html").read_text(encoding="utf-8")
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert "evil\\x1b]0;pwned\\x07\\u202emodel\\x1b[2J" in title  # as summary.md and the terminal show it
    cells = {row["model"] for row in csv.DictReader(io.StringIO((pytester.path / "out" / "metrics.csv").read_text()))}
    assert cells == {"evil\\x1b]0;pwned\\x07\\u202emodel\\x1b[2J"}


def test_an_extractor_exception_quoting_the_key_is_masked_everywhere(pytester: pytest.Pytester, env_key: str) -> None:
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES), encoding="utf-8")
    (pytester.path / "hostile_extract.py").write_text(EXTRACTOR, encoding="utf-8")
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-extractor",
        "hostile_extract:extract",
        "--model",
        EVIL_MODEL,
        "--extractbench-output",
        "out",
        "--extractbench-sla",
        "none",
        "--extractbench-resamples",
        "100",
        "--junitxml",
        "junit.xml",
    )
    _assert_run_sinks_inert(pytester.path, result)
    rows = list(iter_samples(pytester.path / "out" / "samples.jsonl"))
    (failed,) = [row for row in rows if row["sample_id"] == "s1"]
    assert failed["response"]["error_class"] == "extractor_error"
    assert "401 Unauthorized" in failed["response"]["error"] and "***" in failed["response"]["error"]
    assert len(rows) == 3  # every sample accounted for
