"""Hostile input files and hostile things to score: every case gives a clear message, the run completes,
and every sample asked is accounted for.

Inputs are built here in tmp_path: malformed bytes, deep or huge JSON, odd numbers, hostile schemas
(refs to the network or to local files, catastrophic regexes), YAML bombs, and outputs that broke
the scorer. Each run goes through the real plugin with pytester.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from pytest_extractbench.analysis.diagnostics import TextIndex, occurs_in, sample_diagnostics
from pytest_extractbench.core import jsonio, yamlio
from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.scoring import score_sample, validation_errors

sys.path.insert(0, str(Path(__file__).parent))
from _checks import assert_accounted, assert_clean_terminal, assert_no_secret  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "total": {"type": "number"}},
    "required": ["name"],
}
GOOD = [
    {"id": "a-1", "text": "Ann paid 12.", "schema": SCHEMA, "expected": {"name": "Ann", "total": 12}},
    {"id": "b-2", "text": "Bo paid 7.", "schema": SCHEMA, "expected": {"name": "Bo", "total": 7}},
]
PERFECT = [{"id": row["id"], "output": json.dumps(row["expected"])} for row in GOOD]
ARGS = ("-p", "no:randomly", "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning")


def line(row: object) -> bytes:
    return (row if isinstance(row, bytes) else json.dumps(row).encode()) + b"\n"


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def bench(pytester: pytest.Pytester, data: bytes, preds: bytes, *args: str) -> pytest.RunResult:
    (pytester.path / "data.jsonl").write_bytes(data)
    (pytester.path / "preds.jsonl").write_bytes(preds)
    return pytester.runpytest(
        *ARGS,
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-sla",
        "none",
        *args,
    )


def good_preds() -> bytes:
    return b"".join(line(p) for p in PERFECT)


def problems(pytester: pytest.Pytester) -> list[dict]:
    return json.loads((pytester.path / "out" / "metrics.json").read_text())["dataset"]["invalid_samples"]


def finished(result: pytest.RunResult) -> str:
    """The run completed (no internal error, no traceback) and its terminal is clean; returns the text."""
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and "Traceback" not in text, text[-3000:]
    assert result.ret in (0, 1), text[-3000:]
    assert_clean_terminal(text)
    return text


# -- dataset rows ----------------------------------------------------------------------------------

BAD_ROWS = {
    # name: (the bad row's bytes, words the message must hold, sample id named, field named)
    "non-utf8": (
        b'{"id": "latin", "text": "caf\xe9", "schema": {}, "expected": {}}',
        "not UTF-8: byte 0xe9",
        "latin",
        None,
    ),
    "invalid-json": (b'{"id": "cut", "text": "x", "schema": {', "not valid JSON", "cut", None),
    "gold-990-deep": (
        b'{"id": "deep", "text": "t", "schema": {}, "expected": ' + nested(990).encode() + b"}",
        "nested too deeply (more than 128 levels)",
        "deep",
        "expected",
    ),
    "gold-100000-deep": (
        b'{"id": "deeper", "text": "t", "schema": {}, "expected": ' + nested(100_000).encode() + b"}",
        "nested too deeply",
        "deeper",
        None,
    ),
    "int-5000-digits": (
        b'{"id": "big", "text": "t", "schema": {}, "expected": {"n": ' + b"7" * 5000 + b"}}",
        "a number is too large to read",
        "big",
        None,
    ),
    "gold-1e400": (
        b'{"id": "inf", "text": "t", "schema": {"type": "object"}, "expected": {"total": 1e400}}',
        "$.total: a number that is not finite",
        "inf",
        "expected",
    ),
    "gold-nan": (
        b'{"id": "nan", "text": "t", "schema": {"type": "object"}, "expected": {"total": NaN}}',
        "$.total: a number that is not finite",
        "nan",
        "expected",
    ),
    "schema-nan": (
        b'{"id": "snan", "text": "t", "schema": {"properties": {"t": {"maximum": NaN}}}, "expected": {}}',
        "$.properties.t.maximum: a number that is not finite",
        "snan",
        "schema",
    ),
    "schema-string-too-deep": (
        json.dumps({"id": "sdeep", "text": "t", "schema": nested(500, "{}"), "expected": {}}).encode(),
        "nested too deeply (more than 128 levels)",
        "sdeep",
        "schema",
    ),
    "dangling-ref": (
        line(
            {
                "id": "dangle",
                "text": "t",
                "expected": {"a": 1},
                "schema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
            }
        ).strip(),
        "a $ref does not resolve inside the schema: Pointer '/$defs/missing' does not exist",
        "dangle",
        "schema",
    ),
    "bad-regex": (
        line(
            {
                "id": "regex",
                "text": "t",
                "expected": {"a": "x"},
                "schema": {"type": "object", "properties": {"a": {"type": "string", "pattern": "(unclosed"}}},
            }
        ).strip(),
        "a regular expression in it cannot be used",
        "regex",
        "schema",
    ),
    "gold-a-list": (
        b'{"id": "shape", "text": "t", "schema": {"type": "object"}, "expected": [1]}',
        "gold violates its own schema",
        "shape",
        "expected",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_a_bad_dataset_row_is_one_clear_problem_and_the_rest_runs(pytester: pytest.Pytester, case: str) -> None:
    bad, words, sample_id, field = BAD_ROWS[case]
    result = bench(pytester, line(GOOD[0]) + bad + b"\n" + line(GOOD[1]), good_preds())
    text = finished(result)
    assert_accounted(pytester.path / "out", 2)
    [problem] = problems(pytester)
    assert problem["location"] == "line 2" and problem["sample_id"] == sample_id and problem["field"] == field
    assert words in problem["message"], problem
    assert "data.jsonl:line 2" in text and words in text
    if case == "gold-1e400":  # not "null is not of type number"
        assert "null" not in problem["message"]
    if "ref" in case or "regex" in case:  # the schema is at fault, not the gold
        assert "gold" not in problem["message"]


def test_a_byte_order_mark_keeps_the_first_row(pytester: pytest.Pytester) -> None:
    result = bench(pytester, b"\xef\xbb\xbf" + line(GOOD[0]) + line(GOOD[1]), b"\xef\xbb\xbf" + good_preds())
    finished(result)
    result.assert_outcomes(passed=2)
    assert_accounted(pytester.path / "out", 2)
    assert problems(pytester) == []


def test_a_utf16_dataset_is_named_as_such(pytester: pytest.Pytester) -> None:
    data = "".join(json.dumps(r) + "\n" for r in GOOD).encode("utf-16")
    result = bench(pytester, data, good_preds())
    text = result.stdout.str()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED and "Traceback" not in text
    assert "data.jsonl:line 1: the file is UTF-16 (byte-order mark); save it as UTF-8" in text


def test_an_overlong_line_is_skipped_unread(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonio, "MAX_LINE_BYTES", 4096)
    huge = json.dumps({"id": "huge", "text": "x" * 10_000, "schema": SCHEMA, "expected": {"name": "x"}}).encode()
    result = bench(pytester, line(GOOD[0]) + huge + b"\n" + line(GOOD[1]), good_preds())
    text = finished(result)
    assert_accounted(pytester.path / "out", 2)
    [problem] = problems(pytester)
    assert problem["location"] == "line 2" and "line longer than 4,096 bytes; skipped unread" in problem["message"]
    assert "x" * 200 not in text


def test_a_huge_invalid_line_is_not_echoed(pytester: pytest.Pytester) -> None:
    bad = b'{"id": "junk", "text": "' + b"A" * 3_000_000 + b'", oops}'
    result = bench(pytester, line(GOOD[0]) + bad + b"\n" + line(GOOD[1]), good_preds())
    text = finished(result)
    assert_accounted(pytester.path / "out", 2)
    assert "not valid JSON" in text and "A" * 100 not in text
    assert len(text) < 50_000


# -- $ref never leaves the schema --------------------------------------------------------------------


def test_a_remote_ref_is_never_fetched_and_never_stalls(pytester: pytest.Pytester) -> None:
    # A host that accepts connections and never answers: a fetch would stall the run.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        silent.setblocking(False)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/schema.json"
        bad = line({"id": "remote", "text": "t", "schema": {"$ref": url}, "expected": {"name": "x"}})
        result = bench(pytester, line(GOOD[0]) + bad + line(GOOD[1]), good_preds())
        with pytest.raises(BlockingIOError):
            silent.accept()  # nobody connected
    finished(result)
    assert_accounted(pytester.path / "out", 2)
    [problem] = problems(pytester)
    assert problem["sample_id"] == "remote" and problem["field"] == "schema"
    assert "a $ref points outside the schema (remote and file references are not fetched)" in problem["message"]


def test_a_file_ref_does_not_read_local_files(pytester: pytest.Pytester, tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"type": "string", "description": "TOP-SECRET-7f3a"}')
    bad = line(
        {
            "id": "local",
            "text": "t",
            "schema": {"type": "object", "properties": {"name": {"$ref": secret.as_uri()}}},
            "expected": {"name": "x"},
        }
    )
    result = bench(pytester, line(GOOD[0]) + bad + line(GOOD[1]), good_preds())
    text = finished(result)
    assert_accounted(pytester.path / "out", 2)
    assert problems(pytester)[0]["field"] == "schema"
    assert_no_secret(["TOP-SECRET-7f3a"], pytester.path / "out", texts=[text])


@pytest.mark.parametrize("ref", ["http://127.0.0.1:9/x.json", "file:///etc/passwd", "other.json"])
def test_validation_never_resolves_outside_the_schema(ref: str) -> None:
    errors = validation_errors({"a": 1}, {"type": "object", "properties": {"a": {"$ref": ref}}})
    assert len(errors) == 1 and "could not be applied" in errors[0] and "Unresolvable" in errors[0]


# -- hostile schemas and outputs at scoring time -----------------------------------------------------

REGEX = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}, "required": ["code"]}
BACKREF = {"type": "object", "properties": {"code": {"type": "string", "pattern": r"(a|aa)+\1b"}}}


@pytest.mark.slow
@pytest.mark.parametrize(
    "schema, message",
    [
        (REGEX, 'does not match "^(a+)+$"'),
        (BACKREF, "could not be checked: the regular expression needs too much backtracking"),
    ],
    ids=["catastrophic", "backreference"],
)
def test_a_catastrophic_pattern_is_bounded(pytester: pytest.Pytester, schema: dict, message: str) -> None:
    gold = {"code": "aaa" if schema is REGEX else "aaab"}  # "aaab": (a|aa)+ takes "aa", \1 "a", then "b"
    rows = [
        {"id": "re-1", "text": "aaa", "schema": schema, "expected": gold},
        {"id": "re-2", "text": "aaa", "schema": schema, "expected": gold},
    ]
    preds = [{"id": "re-1", "output": {"code": "a" * 41 + "!"}}, {"id": "re-2", "output": gold}]
    result = bench(pytester, b"".join(line(r) for r in rows), b"".join(line(p) for p in preds))
    text = finished(result)
    assert_accounted(pytester.path / "out", 2)
    samples = list(iter_samples(pytester.path / "out" / "samples.jsonl"))
    first = next(s for s in samples if s["sample_id"] == "re-1")
    assert first["score"]["schema_valid"] is False
    assert any(message in e for e in first["score"]["validation_errors"]), first["score"]["validation_errors"]
    assert "re-1" in text


@pytest.mark.slow
@pytest.mark.parametrize("depth, parsed", [(990, False), (5000, False), (100, True)])
def test_deeply_nested_output_is_an_unusable_output_not_a_crash(
    pytester: pytest.Pytester, depth: int, parsed: bool
) -> None:
    preds = [PERFECT[0], {"id": "b-2", "output": '{"name": "Bo", "total": ' + nested(depth) + "}"}]
    result = bench(pytester, b"".join(line(r) for r in GOOD), b"".join(line(p) for p in preds))
    finished(result)
    assert_accounted(pytester.path / "out", 2)
    samples = {r["sample_id"]: r for r in iter_samples(pytester.path / "out" / "samples.jsonl")}
    score = samples["b-2"]["score"]
    assert score["json_valid"] is parsed
    if not parsed:
        assert "nested too deeply (more than 128 levels)" in score["parse_error"]


def test_an_exception_while_scoring_is_that_samples_scoring_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        from pytest_extractbench.scoring import register_post_processor

        def explode(fields, options):
            if any(f.expected == "Bo" for f in fields):
                raise KeyError("a plugin bug")
            return fields

        register_post_processor("explode", explode, overwrite=True)
    """)
    result = bench(pytester, b"".join(line(r) for r in GOOD), good_preds(), "--extractbench-post-process", "explode")
    text = finished(result)
    result.assert_outcomes(passed=1, failed=1)
    assert_accounted(pytester.path / "out", 2)
    metrics = json.loads((pytester.path / "out" / "metrics.json").read_text())["models"]["predictions"]
    assert metrics["scoring_errors"] == ["b-2"]
    assert metrics["schema_validity_rate"] == 0.5  # counted as an invalid output, not dropped
    assert "scoring failed (scoring_error): KeyError: 'a plugin bug'" in text


def test_the_scoring_budget_turns_an_overrun_into_scoring_errors(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_extractbench.scoring import budget

    monkeypatch.setattr(budget, "ITEM_BUDGET_S", -1.0)  # spent before it starts: every item overruns
    result = bench(pytester, b"".join(line(r) for r in GOOD), good_preds(), "--extractbench-sla", "minimum")
    text = finished(result)
    assert result.ret == 1  # the gate sees two invalid samples
    assert_accounted(pytester.path / "out", 2)
    metrics = json.loads((pytester.path / "out" / "metrics.json").read_text())["models"]["predictions"]
    assert metrics["scoring_errors"] == ["a-1", "b-2"] and metrics["extraction_quality_score"] == 0.0
    assert "scoring took longer than -1 s" in text


def test_ten_thousand_spurious_keys_against_a_long_text_are_typed_correctly() -> None:
    # The hallucination lookup is a word index, not one regex scan per field (benchmarks/hostile_scoring.py).
    words = [f"w{i}" for i in range(20_000)]
    text = " ".join(words) + " Mixed Case Value, 1,234 and 3.5."
    output = {f"k{i}": f"w{i}" if i % 2 else f"absent{i}" for i in range(10_000)}
    output.update({"x1": "mixed case value", "x2": 1234, "x3": 3.5, "x4": "case value, 1"})
    score = score_sample(output, {"name": "w1"}, {"type": "object"})
    types = sample_diagnostics(score, text, {"name": "w1"}, output)["hallucination_types"]
    assert len(types) == 10_004
    # odd keys hold a word of the text (type 3: misplaced), even keys a value it lacks (fabricated), and
    # the four x keys occur with word boundaries ("1,234" is 1234's thousands form; "3.5." ends a sentence)
    assert types.count(3) == 5_000 + 4 and types.count(3) + types.count(2) == 10_004


@pytest.mark.parametrize(
    "value, found",
    [
        ("w12", True),
        ("w1", True),
        ("w", False),
        ("w12 w13", True),
        ("w12 w14", False),
        (1234, True),
        (12, False),
        ("1,2", False),
    ],
)
def test_the_text_index_agrees_with_the_word_boundary_rule(value: object, found: bool) -> None:
    index = TextIndex("w1 w12 w13 1,234 x")
    assert occurs_in(value, index) is found
    assert occurs_in(value, "w1 w12 w13 1,234 x") is found


GENERATE = [
    {
        "id": "code",
        "schema": {"type": "object", "properties": {"c": {"type": "string", "pattern": "^(a+)+$"}}, "required": ["c"]},
    },
    {"id": "name", "schema": {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}},
]


def run_generate(pytester: pytest.Pytester, preds: list) -> pytest.RunResult:
    (pytester.path / "gen.jsonl").write_bytes(b"".join(line(r) for r in GENERATE))
    (pytester.path / "preds.jsonl").write_bytes(b"".join(line(p) for p in preds))
    return pytester.runpytest(
        *ARGS,
        "--extractbench",
        "--extractbench-track",
        "generate",
        "--extractbench-dataset",
        "gen.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-sla",
        "none",
    )


def test_a_catastrophic_pattern_in_the_generate_track_is_bounded(pytester: pytest.Pytester) -> None:
    result = run_generate(
        pytester, [{"id": "code", "output": {"c": "a" * 41 + "!"}}, {"id": "name", "output": {"n": "x"}}]
    )
    finished(result)
    result.assert_outcomes(passed=1, failed=1)
    assert_accounted(pytester.path / "out", 2)
    result.stdout.fnmatch_lines(["*features violated: pattern*"])


def test_an_exception_while_scoring_a_track_is_that_samples_scoring_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        from pytest_extractbench.tracks.generate import GenerateTrack

        original = GenerateTrack.score

        def score(self, sample, prediction, options=None):
            if sample.id == "name" and isinstance(prediction, dict):
                raise ZeroDivisionError("a track bug")
            return original(self, sample, prediction, options)

        GenerateTrack.score = score
    """)
    result = run_generate(pytester, [{"id": "code", "output": {"c": "aaa"}}, {"id": "name", "output": {"n": "x"}}])
    text = finished(result)
    result.assert_outcomes(passed=1, failed=1)
    assert_accounted(pytester.path / "out", 2)
    [failed] = [r for r in iter_samples(pytester.path / "out" / "samples.jsonl") if r["sample_id"] == "name"]
    assert failed["result"]["scoring_error"] == "ZeroDivisionError: a track bug"
    assert "scoring failed (scoring_error): ZeroDivisionError: a track bug" in text


# -- predictions files -------------------------------------------------------------------------------

BAD_PREDICTIONS = {
    "non-utf8": (b'{"id": "b-2", "output": "caf\xe9"}', "not UTF-8: byte 0xe9"),
    "too-deep-value": (b'{"id": "b-2", "output": ' + nested(2000).encode() + b"}", "nested too deeply"),
    "int-5000-digits": (
        b'{"id": "b-2", "output": {"name": "Bo", "total": ' + b"9" * 5000 + b"}}",
        "a number is too large to read",
    ),
    "torn-line": (b'{"id": "b-2", "output": "{\\"name\\"', "not valid JSON"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD_PREDICTIONS))
def test_a_bad_predictions_line_leaves_its_sample_missing_and_counted(pytester: pytest.Pytester, case: str) -> None:
    bad, words = BAD_PREDICTIONS[case]
    result = bench(pytester, b"".join(line(r) for r in GOOD), line(PERFECT[0]) + bad + b"\n")
    text = finished(result)
    result.assert_outcomes(passed=1, failed=1)
    assert_accounted(pytester.path / "out", 2)
    assert "preds.jsonl:line 2, sample 'b-2'" in text and words in text


# -- the journal on replay -----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "bad",
    [
        b'{"model": "m", "sample_id": "b-2", "key": "k", "response": {"content": ' + nested(3000).encode() + b"}}",
        b'{"model": "m", "sample_id": "b-2", "key": "k", "response": {"latency_s": ' + b"1" * 5000 + b"}}",
        b'{"model": "m", "sample_id": "b-2", "key": "k", "response": {"content": "\xf0\x9f',  # cut mid-character
    ],
    ids=["deep", "int-5000-digits", "cut-short"],
)
def test_a_hostile_journal_line_on_replay_is_skipped_and_its_sample_counted(
    pytester: pytest.Pytester, bad: bytes
) -> None:
    result = replay_journal(pytester, bad)
    finished(result)
    result.assert_outcomes(passed=1, failed=1)
    assert_accounted(pytester.path / "out", 2)


@pytest.mark.slow
def test_a_corrupt_journal_line_on_replay_stops_the_run_naming_file_and_line(pytester: pytest.Pytester) -> None:
    # not UTF-8 inside the line: not a line the run wrote and was cut, but a file changed since; scoring past it
    # would report an answer the file holds as missing
    bad = b'{"model": "m", "sample_id": "b-2", "key": "k", "response": {"content": "\xff\xfe"}}'
    result = replay_journal(pytester, bad)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "Traceback" not in text, text[-3000:]
    assert f"{pytester.path / 'recorded' / 'responses.jsonl'}:2: not a journal line: not UTF-8: byte 0xff" in text


def replay_journal(pytester: pytest.Pytester, bad: bytes) -> pytest.RunResult:
    """A replay of a journal whose first line answers a-1 and whose second is ``bad``."""
    run = pytester.path / "recorded"
    run.mkdir()
    good = {
        "model": "m",
        "sample_id": "a-1",
        "key": "k1",
        "response": {"content": json.dumps(GOOD[0]["expected"]), "attempts": 1},
    }
    (run / "responses.jsonl").write_bytes(line(good) + bad + b"\n")
    (pytester.path / "data.jsonl").write_bytes(b"".join(line(r) for r in GOOD))
    return pytester.runpytest(
        *ARGS,
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--model",
        "m",
        "--extractbench-replay",
        "recorded",
        "--extractbench-output",
        "out",
        "--extractbench-sla",
        "none",
    )


# -- baselines --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, words",
    [
        (b'{"kind": "pytest-extractbench baseline", "models": ' + nested(5000).encode() + b"}", "nested too deeply"),
        (b'{"kind": "pytest-extractbench baseline", "name": "caf\xe9"}', "not UTF-8"),
        (b'{"kind": "pytest-extractbench baseline", "n": ' + b"1" * 5000 + b"}", "a number is too large to read"),
    ],
    ids=["deep", "non-utf8", "int-5000-digits"],
)
def test_a_hostile_baseline_is_a_usage_error_naming_it(pytester: pytest.Pytester, content: bytes, words: str) -> None:
    (pytester.path / "base.json").write_bytes(content)
    result = bench(pytester, b"".join(line(r) for r in GOOD), good_preds(), "--extractbench-compare", "base.json")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "Traceback" not in text
    assert "base.json: " in text and words in text  # the one reader's message: the file, then why
    assert_clean_terminal(text)


# -- YAML config and subsets files ----------------------------------------------------------------------

LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)
YAML_CASES = {
    "billion-laughs": (LAUGHS, "expands to more than 100,000 values through its aliases"),
    "recursive-alias": ("model: &m\n  options: *m\n", "the alias *m refers to a value that contains it"),
    "recursive-flow": ("dataset: &d [*d]\n", "(a recursive alias)"),
    "deep-nesting": ("model: " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(YAML_CASES))
def test_a_hostile_yaml_config_is_refused_before_anything_runs(pytester: pytest.Pytester, case: str) -> None:
    content, words = YAML_CASES[case]
    (pytester.path / "bench.yaml").write_text(content)
    result = bench(pytester, b"".join(line(r) for r in GOOD), good_preds(), "--extractbench-config", "bench.yaml")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "Traceback" not in text and "RecursionError" not in text
    assert "bench.yaml" in text and words in text
    assert_clean_terminal(text)


def test_a_config_with_a_byte_order_mark_is_read(pytester: pytest.Pytester) -> None:
    (pytester.path / "bench.yaml").write_bytes(b"\xef\xbb\xbfmetrics:\n  sla: none\n")
    result = bench(pytester, b"".join(line(r) for r in GOOD), good_preds(), "--extractbench-config", "bench.yaml")
    finished(result)
    result.assert_outcomes(passed=2)


@pytest.mark.parametrize(
    "suffix, content, words",
    [
        (".yaml", "subsets: &s\n  x: *s\n", "recursive alias"),
        (".yaml", LAUGHS, "billion laughs"),
        (".json", '{"subsets": ' + nested(5000) + "}", "nested too deeply"),
    ],
)
def test_a_hostile_subsets_file_is_a_usage_error(
    pytester: pytest.Pytester, suffix: str, content: str, words: str
) -> None:
    (pytester.path / f"subsets{suffix}").write_text(content)
    result = bench(
        pytester, b"".join(line(r) for r in GOOD), good_preds(), "--extractbench-subsets", f"subsets{suffix}"
    )
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "Traceback" not in text
    assert f"subsets{suffix}" in text and words in text


# -- upper bounds on options ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("--extractbench-resamples", "100000000", "a whole number of resamples from 100 to 100,000"),
        ("--extractbench-repeats", "1000000", "a whole number of runs per sample from 1 to 100"),
        ("--extractbench-resamples", "9" * 5000, "…"),
        ("--extractbench-timeout", "inf", "a finite number"),
    ],
)
def test_option_values_are_bounded(pytester: pytest.Pytester, option: str, value: str, words: str) -> None:
    result = bench(pytester, b"".join(line(r) for r in GOOD), good_preds(), option, value)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR and words in text
    assert len(text) < 5000  # a 5,000-digit value is not echoed whole


# -- the reader itself ------------------------------------------------------------------------------


def test_yaml_loader_keeps_ordinary_aliases() -> None:
    assert yamlio.safe_load("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}


@pytest.mark.parametrize(
    "text, path",
    [
        ('{"a": {"b": [1, NaN]}}', "$.a.b[1]"),
        ('{"x": -Infinity}', "$.x"),
        ("[1e400]", "$[0]"),
    ],
)
def test_non_finite_numbers_are_found_with_their_path(text: str, path: str) -> None:
    assert jsonio.find_nonfinite(jsonio.loads(text)) == path
    with pytest.raises(jsonio.JsonInputError) as caught:
        jsonio.loads(text, allow_nonfinite=False)
    assert caught.value.path == path


def test_big_integers_within_the_limit_keep_every_digit() -> None:
    assert jsonio.loads('{"n": ' + "1" * 40 + "}") == {"n": int("1" * 40)}


# -- invariants ----------------------------------------------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ALPHABET = st.sampled_from(list("ab1 ,.-é_"))


@given(text=st.text(_ALPHABET, max_size=40), needle=st.text(_ALPHABET, min_size=1, max_size=6))
def test_the_text_index_answers_like_one_regex_scan(text: str, needle: str) -> None:
    import re

    normal = " ".join(text.casefold().split())
    wanted = " ".join(needle.casefold().split())
    expected = bool(wanted) and re.search(r"(?<!\w)" + re.escape(wanted) + r"(?!\w)", normal) is not None
    assert occurs_in(needle, TextIndex(normal)) is expected


@given(depth=st.integers(1, 400), kind=st.sampled_from(["[]", "{}"]))
def test_nesting_is_refused_exactly_past_the_limit(depth: int, kind: str) -> None:
    text = ('{"k":' * depth + "1" + "}" * depth) if kind == "{}" else nested(depth)
    if depth <= jsonio.MAX_DEPTH:
        assert jsonio.loads(text) is not None
    else:
        with pytest.raises(jsonio.JsonInputError, match="nested too deeply"):
            jsonio.loads(text)
