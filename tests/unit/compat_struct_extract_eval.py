"""A differential corpus: eval schemas written for struct-extract-eval, with the verdict it gives
every field, worked out by hand from its README and its public source.

Each case is ``(gold, output, annotated schema)`` and ``theirs``: the verdict of every field path
there (``match``, ``mismatch``, ``omission``, ``hallucination``; skipped fields have none).
Paths are written the way this plugin spells them (struct-extract-eval numbers hallucinated
array elements ``tags[-1]``, ``tags[-2]``; here they follow the gold: ``tags[2]``, ``tags[3]``).
``options`` are the ScoringOptions a case runs with (the porting settings of docs/guides/porting.md, where
it needs them); ``ours`` with ``why`` marks a deliberate, documented difference.

``python tests/unit/compat_struct_extract_eval.py`` prints the agreement rate.
"""

from __future__ import annotations

from typing import Any

# The porting guide's settings: null and empty values are values, numbers without tolerance exact.
PORTING = {"null_equals_absent": False, "empty_equals_absent": False, "float_epsilon": 0.0}


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def leaf(kind: str | list[str], compare: Any = "exact", **extra: Any) -> dict[str, Any]:
    return {"type": kind, "x-eval-compare": compare, **extra}


def arr(items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, **extra}


NUM = leaf("number", "numeric")
STR = leaf("string")
ADDRESS = {"type": "object", "properties": {"city": STR, "zip": STR}}
LINE = obj(sku=STR, qty=NUM)
NO_OVERLAP = {"tags[0]": "omission", "tags[1]": "omission", "tags[2]": "hallucination"}


def convert(to: str) -> dict[str, Any]:
    return {"type_convert": {"to": to}}


def case(name: str, schema: dict, gold: dict, output: dict, theirs: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {"id": name, "schema": schema, "gold": gold, "output": output, "theirs": theirs, **extra}


CASES: list[dict[str, Any]] = [
    # -- comparators on scalars ---------------------------------------------------------------
    case("exact-equal", obj(name=STR), {"name": "Ada"}, {"name": "Ada"}, {"name": "match"}),
    case("exact-case", obj(name=STR), {"name": "Ada"}, {"name": "ada"}, {"name": "mismatch"}),
    case("exact-bool-vs-string", obj(ok=leaf("boolean")), {"ok": True}, {"ok": "true"}, {"ok": "mismatch"}),
    case("exact-bool", obj(ok=leaf("boolean")), {"ok": True}, {"ok": False}, {"ok": "mismatch"}),
    case(
        "exact-int-vs-float",
        obj(n=leaf("number")),
        {"n": 42},
        {"n": 42.0},
        {"n": "mismatch"},
        ours={"n": "match"},
        why="JSON has one number type: 42 and 42.0 are the same value",
    ),
    case(
        "exact-params-ignored",
        obj(name=leaf("string", {"exact": {"strict": True}})),
        {"name": "Ada"},
        {"name": "Ada"},
        {"name": "match"},
    ),
    case(
        "numeric-rel-edge",
        obj(t=leaf("number", {"numeric": {"tolerance": {"rel": 0.01}}})),
        {"t": 100},
        {"t": 101},
        {"t": "match"},
    ),
    case(
        "numeric-rel-out",
        obj(t=leaf("number", {"numeric": {"tolerance": {"rel": 0.01}}})),
        {"t": 100},
        {"t": 101.5},
        {"t": "mismatch"},
    ),
    case(
        "numeric-rel-rounding",
        obj(t=leaf("number", {"numeric": {"tolerance": {"rel": 0.1}}})),
        {"t": 3},
        {"t": 3.3},
        {"t": "match"},
    ),  # 0.2999.../3 <= 0.1
    case(
        "numeric-abs",
        obj(t=leaf("number", {"numeric": {"tolerance": {"abs": 0.5}}})),
        {"t": 10},
        {"t": 10.5},
        {"t": "match"},
    ),
    case(
        "numeric-abs-and-rel-both-hold",
        obj(t=leaf("number", {"numeric": {"tolerance": {"abs": 0.5, "rel": 0.001}}})),
        {"t": 100},
        {"t": 100.4},
        {"t": "mismatch"},
    ),  # abs holds, rel (0.004) does not
    case(
        "numeric-abs-and-rel-ok",
        obj(t=leaf("number", {"numeric": {"tolerance": {"abs": 0.5, "rel": 0.01}}})),
        {"t": 100},
        {"t": 100.4},
        {"t": "match"},
    ),
    case(
        "numeric-rel-gold-zero",
        obj(t=leaf("number", {"numeric": {"tolerance": {"rel": 0.1}}})),
        {"t": 0},
        {"t": 0.05},
        {"t": "match"},
    ),  # rel divides by 1 at gold 0
    case(
        "numeric-rel-gold-zero-out",
        obj(t=leaf("number", {"numeric": {"tolerance": {"rel": 0.1}}})),
        {"t": 0},
        {"t": 0.2},
        {"t": "mismatch"},
    ),
    case("numeric-exact-large", obj(n=NUM), {"n": 123456789}, {"n": 123456790}, {"n": "mismatch"}),
    case("numeric-int-float", obj(n=NUM), {"n": 42}, {"n": 42.0}, {"n": "match"}),
    case(
        "numeric-float-noise",
        obj(n=NUM),
        {"n": 0.3},
        {"n": 0.30000000000000004},
        {"n": "mismatch"},
        ours={"n": "match"},
        why="numbers are equal within --extractbench-float-epsilon (1e-6); 0 makes them exact",
    ),
    case(
        "numeric-float-noise-ported",
        obj(n=NUM),
        {"n": 0.3},
        {"n": 0.30000000000000004},
        {"n": "mismatch"},
        options=PORTING,
    ),
    case("numeric-on-string-field", obj(v=leaf("string", "numeric")), {"v": "12.50"}, {"v": "12.5"}, {"v": "match"}),
    case("numeric-string-vs-number", obj(v=leaf("number", "numeric")), {"v": 12}, {"v": " 12 "}, {"v": "match"}),
    case("numeric-not-a-number", obj(v=leaf("number", "numeric")), {"v": 12}, {"v": "twelve"}, {"v": "mismatch"}),
    case(
        "numeric-thousands",
        obj(v=leaf("string", "numeric")),
        {"v": "1,200"},
        {"v": "1200"},
        {"v": "mismatch"},
        ours={"v": "match"},
        why="numeric reads '1,200' as 1200 (a thousands separator)",
    ),
    case(
        "numeric-unknown-param",
        obj(t=leaf("number", {"numeric": {"tolerance": {"abs": 1}, "unit": "K"}})),
        {"t": 300},
        {"t": 301},
        {"t": "match"},
    ),
    case(
        "oneof-synonym",
        obj(m=leaf("string", {"oneof": {"values": ["PVD", "Sputtering", "CVD"]}})),
        {"m": "PVD"},
        {"m": "Sputtering"},
        {"m": "match"},
    ),
    case(
        "oneof-outside",
        obj(m=leaf("string", {"oneof": {"values": ["PVD", "Sputtering", "CVD"]}})),
        {"m": "PVD"},
        {"m": "ALD"},
        {"m": "mismatch"},
    ),
    case(
        "oneof-case",
        obj(m=leaf("string", {"oneof": {"values": ["PVD", "Sputtering", "CVD"]}})),
        {"m": "PVD"},
        {"m": "sputtering"},
        {"m": "mismatch"},
        ours={"m": "match"},
        why="oneof compares strings normalized (case and whitespace), as every string here",
    ),
    case(
        "oneof-gold-not-listed",
        obj(m=leaf("string", {"oneof": {"values": ["PVD", "CVD"]}})),
        {"m": "ALD"},
        {"m": "ALD"},
        {"m": "mismatch"},
        ours={"m": "match"},
        why="a value identical to the gold always matches, whatever the comparator",
    ),
    # -- presence, null, empty ----------------------------------------------------------------------
    case("omission", obj(a=STR, b=STR), {"a": "x", "b": "y"}, {"a": "x"}, {"a": "match", "b": "omission"}),
    case("hallucination", obj(a=STR, b=STR), {"a": "x"}, {"a": "x", "b": "y"}, {"a": "match", "b": "hallucination"}),
    case("unknown-key", obj(a=STR), {"a": "x"}, {"a": "x", "z": 1}, {"a": "match", "z": "hallucination"}),
    case(
        "null-output",
        obj(n=NUM),
        {"n": 5},
        {"n": None},
        {"n": "mismatch"},
        ours={"n": "omission"},
        why="null counts as absent by default (--extractbench-null-as-value scores it)",
    ),
    case("null-output-ported", obj(n=NUM), {"n": 5}, {"n": None}, {"n": "mismatch"}, options=PORTING),
    case(
        "null-both",
        obj(s=STR),
        {"s": None},
        {"s": None},
        {"s": "match"},
        ours={},
        why="null counts as absent by default: nothing to score",
    ),
    case("null-both-ported", obj(s=STR), {"s": None}, {"s": None}, {"s": "match"}, options=PORTING),
    case("null-gold-ported", obj(s=STR), {"s": None}, {"s": "x"}, {"s": "mismatch"}, options=PORTING),
    case("null-key-output-ported", obj(s=STR), {}, {"s": None}, {"s": "hallucination"}, options=PORTING),
    case("empty-string-ported", obj(s=STR), {"s": ""}, {"s": ""}, {"s": "match"}, options=PORTING),
    case(
        "empty-string",
        obj(s=STR),
        {"s": "x"},
        {"s": ""},
        {"s": "mismatch"},
        ours={"s": "omission"},
        why="an empty string counts as absent by default (empty_equals_absent)",
    ),
    case(
        "nested-missing",
        obj(addr=obj(city=STR, zip=STR)),
        {"addr": {"city": "P", "zip": "1"}},
        {},
        {"addr.city": "omission", "addr.zip": "omission"},
    ),
    case(
        "nested-null",
        obj(addr=obj(city=STR, zip=STR)),
        {"addr": {"city": "P", "zip": "1"}},
        {"addr": None},
        {"addr.city": "omission", "addr.zip": "omission"},
    ),
    # -- transforms ---------------------------------------------------------------------------------
    case(
        "strip-lowercase",
        obj(name=leaf("string", "exact", **{"x-eval-transform": ["strip", "lowercase"]})),
        {"name": " Ada "},
        {"name": "ada"},
        {"name": "match"},
    ),
    case(
        "sort-tokens",
        obj(name=leaf("string", "exact", **{"x-eval-transform": ["sort_tokens"]})),
        {"name": "Smith John"},
        {"name": "John Smith"},
        {"name": "match"},
    ),
    case(
        "normalize-whitespace",
        obj(c=leaf("string", "exact", **{"x-eval-transform": ["normalize_whitespace"]})),
        {"c": "New  York"},
        {"c": "New York"},
        {"c": "match"},
    ),
    case(
        "round-digits",
        obj(x=leaf("number", "numeric", **{"x-eval-transform": [{"round_digits": {"digits": 2}}]})),
        {"x": 3.14159},
        {"x": 3.14},
        {"x": "match"},
    ),
    case(
        "type-convert-float",
        obj(v=leaf("string", "exact", **{"x-eval-transform": [convert("float")]})),
        {"v": "12"},
        {"v": 12},
        {"v": "match"},
    ),
    case(
        "type-convert-bool",
        obj(v=leaf("string", "exact", **{"x-eval-transform": [convert("bool")]})),
        {"v": "TRUE"},
        {"v": True},
        {"v": "match"},
    ),
    case(
        "type-convert-str",
        obj(v=leaf("number", "exact", **{"x-eval-transform": [convert("str")]})),
        {"v": 7},
        {"v": "7"},
        {"v": "match"},
    ),
    case(
        "type-convert-int",
        obj(v=leaf("number", "exact", **{"x-eval-transform": [convert("int")]})),
        {"v": 12},
        {"v": 12.7},
        {"v": "match"},
    ),
    # -- skip ---------------------------------------------------------------------------------------
    case(
        "skip",
        obj(a=STR, id={"type": "string", "x-eval-skip": True}),
        {"a": "x", "id": "1"},
        {"a": "x", "id": "2"},
        {"a": "match"},
    ),
    case(
        "skip-items", obj(tags=arr({"type": "string", "x-eval-skip": True})), {"tags": ["a", "b"]}, {"tags": ["c"]}, {}
    ),
    # -- a comparator on a container compares the whole value ----------------------------------------
    case(
        "object-compare-differs",
        obj(addr={**ADDRESS, "x-eval-compare": "exact"}),
        {"addr": {"city": "Paris", "zip": "75001"}},
        {"addr": {"city": "Paris", "zip": "75002"}},
        {"addr": "mismatch"},
    ),
    case(
        "object-compare-equal",
        obj(addr={**ADDRESS, "x-eval-compare": "exact"}),
        {"addr": {"city": "Paris", "zip": "75001"}},
        {"addr": {"zip": "75001", "city": "Paris"}},
        {"addr": "match"},
    ),
    case(
        "object-compare-missing",
        obj(addr={**ADDRESS, "x-eval-compare": "exact"}),
        {"addr": {"city": "Paris", "zip": "75001"}},
        {},
        {"addr.city": "omission", "addr.zip": "omission"},
        ours={"addr": "omission"},
        why="a field compared whole is one field whether or not the output has it (recall counts only on gold)",
    ),
    case(
        "array-of-objects-compare",
        obj(lines=arr(LINE, **{"x-eval-compare": "exact"})),
        {"lines": [{"sku": "A", "qty": 1}]},
        {"lines": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]},
        {"lines": "mismatch"},
    ),
    case(
        "array-of-objects-compare-equal",
        obj(lines=arr(LINE, **{"x-eval-compare": "exact"})),
        {"lines": [{"sku": "A", "qty": 1}]},
        {"lines": [{"sku": "A", "qty": 1}]},
        {"lines": "match"},
    ),
    case("multi-type-compare", obj(x=leaf(["string", "object"])), {"x": "n/a"}, {"x": {"v": 1}}, {"x": "mismatch"}),
    case(
        "multi-type-compare-equal", obj(x=leaf(["string", "object"])), {"x": {"v": 1}}, {"x": {"v": 1}}, {"x": "match"}
    ),
    case(
        "multi-type-compare-bool-int",
        obj(x=leaf(["string", "object"])),
        {"x": {"v": 1}},
        {"x": {"v": True}},
        {"x": "match"},
        ours={"x": "mismatch"},
        why="exact is type-strict inside objects too: JSON true is not 1",
    ),
    case(
        "scalar-array-compare",
        obj(tags=arr(STR, **{"x-eval-compare": "exact"})),
        {"tags": ["a", "b"]},
        {"tags": ["b", "a"]},
        {"tags": "mismatch"},
    ),
    # -- arrays of scalars: rules on items, and alignment ------------------------------------------------
    case(
        "items-exact-ordered",
        obj(tags=arr(STR)),
        {"tags": ["a", "b"]},
        {"tags": ["a", "c"]},
        {"tags[0]": "match", "tags[1]": "mismatch"},
    ),
    case(
        "items-exact-short",
        obj(tags=arr(STR)),
        {"tags": ["a", "b", "c"]},
        {"tags": ["a"]},
        {"tags[0]": "match", "tags[1]": "omission", "tags[2]": "omission"},
    ),
    case(
        "items-exact-long",
        obj(tags=arr(STR)),
        {"tags": ["a"]},
        {"tags": ["a", "b"]},
        {"tags[0]": "match", "tags[1]": "hallucination"},
    ),
    case(
        "items-transform",
        obj(tags=arr(leaf("string", "exact", **{"x-eval-transform": ["lowercase"]}))),
        {"tags": ["A", "B"]},
        {"tags": ["a", "b"]},
        {"tags[0]": "match", "tags[1]": "match"},
    ),
    case(
        "items-numeric",
        obj(xs=arr(leaf("number", {"numeric": {"tolerance": {"abs": 0.1}}}))),
        {"xs": [1.0, 2.0]},
        {"xs": [1.05, 2.5]},
        {"xs[0]": "match", "xs[1]": "mismatch"},
    ),
    case(
        "items-array-missing",
        obj(tags=arr(STR)),
        {"tags": ["a", "b"]},
        {},
        {"tags[0]": "omission", "tags[1]": "omission"},
    ),
    case(
        "align-ordered-true",
        obj(tags=arr(STR, **{"x-eval-align": {"ordered": True}})),
        {"tags": ["x", "y"]},
        {"tags": ["y", "x"]},
        {"tags[0]": "mismatch", "tags[1]": "mismatch"},
    ),
    case(
        "align-ordered-false-hungarian",
        obj(tags=arr(STR, **{"x-eval-align": {"ordered": False, "match_by": "hungarian"}})),
        {"tags": ["x", "y"]},
        {"tags": ["y", "x"]},
        {"tags[0]": "match", "tags[1]": "match"},
    ),
    case(
        "align-hungarian-no-overlap",
        obj(tags=arr(STR, **{"x-eval-align": {"match_by": "hungarian"}})),
        {"tags": ["x", "y"]},
        {"tags": ["z"]},
        NO_OVERLAP,
        ours={"tags[0]": "mismatch", "tags[1]": "omission"},
        why="hungarian keeps zero-similarity pairs unless min_similarity is above 0",
    ),
    case(
        "align-hungarian-min-similarity",
        obj(tags=arr(STR, **{"x-eval-align": {"match_by": "hungarian", "min_similarity": 1e-9}})),
        {"tags": ["x", "y"]},
        {"tags": ["z"]},
        NO_OVERLAP,
    ),
    case(
        "align-hungarian-objects",
        obj(lines=arr(LINE, **{"x-eval-align": {"match_by": "hungarian"}})),
        {"lines": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]},
        {"lines": [{"sku": "B", "qty": 2}, {"sku": "A", "qty": 5}]},
        {"lines[0].sku": "match", "lines[0].qty": "mismatch", "lines[1].sku": "match", "lines[1].qty": "match"},
    ),
    # -- key_field ---------------------------------------------------------------------------------
    case(
        "key-field",
        obj(lines=arr(LINE, **{"x-eval-align": {"match_by": "key_field", "key": "sku"}})),
        {"lines": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]},
        {"lines": [{"sku": "B", "qty": 2}, {"sku": "A", "qty": 3}]},
        {"lines[0].sku": "match", "lines[0].qty": "mismatch", "lines[1].sku": "match", "lines[1].qty": "match"},
    ),
    case(
        "key-field-ordered-false",
        obj(lines=arr(LINE, **{"x-eval-align": {"ordered": False, "match_by": "key_field", "key": "sku"}})),
        {"lines": [{"sku": "A", "qty": 1}]},
        {"lines": [{"sku": "C", "qty": 1}, {"sku": "A", "qty": 1}]},
        {
            "lines[0].sku": "match",
            "lines[0].qty": "match",
            "lines[1].sku": "hallucination",
            "lines[1].qty": "hallucination",
        },
    ),
    case(
        "key-field-bool-vs-string",
        obj(flags=arr(obj(flag=leaf("boolean"), v=NUM), **{"x-eval-align": {"match_by": "key_field", "key": "flag"}})),
        {"flags": [{"flag": True, "v": 1}]},
        {"flags": [{"flag": "TRUE", "v": 1}]},
        {
            "flags[0].flag": "omission",
            "flags[0].v": "omission",
            "flags[1].flag": "hallucination",
            "flags[1].v": "hallucination",
        },
    ),
    case(
        "key-field-case",
        obj(lines=arr(LINE, **{"x-eval-align": {"match_by": "key_field", "key": "sku"}})),
        {"lines": [{"sku": "abc", "qty": 1}]},
        {"lines": [{"sku": "ABC", "qty": 1}]},
        {
            "lines[0].sku": "omission",
            "lines[0].qty": "omission",
            "lines[1].sku": "hallucination",
            "lines[1].qty": "hallucination",
        },
        ours={"lines[0].sku": "mismatch", "lines[0].qty": "match"},
        why="key_field pairs keys normalized as strings are compared (case, whitespace)",
    ),
    case(
        "key-field-missing-element",
        obj(lines=arr(LINE, **{"x-eval-align": {"match_by": "key_field", "key": "sku"}})),
        {"lines": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]},
        {"lines": [{"sku": "B", "qty": 2}]},
        {"lines[0].sku": "omission", "lines[0].qty": "omission", "lines[1].sku": "match", "lines[1].qty": "match"},
    ),
    # -- arrays of objects, in order ------------------------------------------------------------------
    case(
        "ordered-objects",
        obj(steps=arr(obj(n=STR))),
        {"steps": [{"n": "a"}, {"n": "b"}]},
        {"steps": [{"n": "a"}]},
        {"steps[0].n": "match", "steps[1].n": "omission"},
    ),
    # -- where the porting guide says the two differ, each with its smallest case -----------------
    case(
        "undeclared-gold-key",
        obj(name=STR),
        {"name": "Ada", "note": "x"},
        {"name": "Ada", "note": "x"},
        {"name": "match", "note": "hallucination"},
        ours={"name": "match", "note": "match"},
        why="every gold key is a field and the schema only adds rules; there the gold must declare every key and an "
        "output key the schema does not declare is a hallucination even where the gold has it",
    ),
    case(
        "null-object-ported",
        obj(addr=ADDRESS),
        {"addr": None},
        {"addr": {"city": "P"}},
        {"addr.city": "hallucination"},
        ours={"addr": "omission", "addr.city": "hallucination"},
        options=PORTING,
        why="with null as a value a null object is a value too; there a null object or array is absent",
    ),
    case(
        "null-object-both-ported",
        obj(addr=ADDRESS),
        {"addr": None},
        {"addr": None},
        {},
        ours={"addr": "match"},
        options=PORTING,
        why="with null as a value a null object is a value too; there a null object or array is absent",
    ),
    case(
        "object-vs-array",
        obj(addr=ADDRESS),
        {"addr": {"city": "P"}},
        {"addr": ["P"]},
        {"addr": "mismatch"},
        ours={"addr.city": "omission", "addr": "hallucination"},
        why="a shape mismatch keeps the gold's leaves expected (missed) and the output's spurious, so the expected "
        "fields depend only on the gold; there it is one mismatch at the container",
    ),
    case(
        "hungarian-f1-vs-mean-score",
        obj(t=arr(obj(**{k: STR for k in "abcde"}), **{"x-eval-align": {"match_by": "hungarian"}})),
        {"t": [{k: "x" for k in "abcde"}, {"a": "x", "b": "y"}]},
        {"t": [{"a": "x", "b": "x"}]},
        {
            "t[0].a": "match",
            "t[0].b": "match",
            "t[0].c": "omission",
            "t[0].d": "omission",
            "t[0].e": "omission",
            "t[1].a": "omission",
            "t[1].b": "omission",
        },
        ours={
            "t[0].a": "omission",
            "t[0].b": "omission",
            "t[0].c": "omission",
            "t[0].d": "omission",
            "t[0].e": "omission",
            "t[1].a": "match",
            "t[1].b": "mismatch",
        },
        why="Hungarian similarity is the mean field score (2/5 and 1/2 here), there the pair's F1 (4/7 and 1/2): F1 "
        "weighs a missing or extra field half as much as a wrong one, so 0/1 scores can pair differently",
    ),
    case("empty-array-ruled-ported", obj(t=arr(STR)), {"t": []}, {}, {"t": "omission"}, options=PORTING),
    # -- unknown keys are ignored there (a warning), not an error ------------------------------------------
    case(
        "unknown-xeval-key",
        obj(name={**STR, "x-eval-note": "reviewed"}),
        {"name": "Ada"},
        {"name": "Ada"},
        {"name": "match"},
    ),
]


VERDICTS = {
    "exact": "match",
    "partial": "mismatch",
    "incorrect": "mismatch",
    "missed": "omission",
    "spurious": "hallucination",
    "error": "error",
    "pending": "pending",
}


def our_verdicts(entry: dict[str, Any], options: dict[str, Any] | None = None) -> dict[str, str]:
    """The verdict of every field this plugin reports for one case (warnings silenced)."""
    import warnings

    from pytest_extractbench.scoring import ScoringOptions, score_sample

    settings = ScoringOptions(**(entry.get("options", {}) if options is None else options))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        score = score_sample(entry["output"], entry["gold"], entry["schema"], options=settings)
    return {f.path: VERDICTS[f.category] for f in score.fields}


def agreement(options: dict[str, Any] | None = None) -> tuple[int, int]:
    """(fields with the same verdict as struct-extract-eval's, fields) over the corpus; a case whose
    schema is rejected agrees on nothing."""
    same = total = 0
    for entry in CASES:
        theirs = entry["theirs"]
        try:
            ours = our_verdicts(entry, options)
        except Exception:  # noqa: BLE001 - a rejected schema fails every field of the sample
            ours = {}
        paths = set(theirs) | set(ours)
        total += len(paths)
        same += sum(theirs.get(p) == ours.get(p) for p in paths)
    return same, total


if __name__ == "__main__":
    for label, options in (("case options", None), ("defaults", {}), ("porting settings", PORTING)):
        same, total = agreement(options)
        print(f"{label:<18} {same:>4}/{total:<4} {same / total:7.1%}")
