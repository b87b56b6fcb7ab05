"""Invariants of the scoring core, checked with hypothesis on arbitrary JSON."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench import ScoringOptions, score_sample

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=20),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(min_size=1, max_size=6), children, max_size=4),
    ),
    max_leaves=25,
)
gold_objects = st.dictionaries(st.text(min_size=1, max_size=6), json_values, max_size=6)
option_sets = st.builds(
    ScoringOptions,
    case_sensitive=st.booleans(),
    null_equals_absent=st.booleans(),
    empty_equals_absent=st.booleans(),
    strict_types=st.booleans(),
    array_order_matters=st.booleans(),
)


def all_scores(score) -> list[float]:
    values = [score.eqs, score.type_accuracy, score.hallucination_rate, score.omission_rate]
    for mode in ("strict", "partial", "lenient"):
        values += [score.precision[mode], score.recall[mode], score.f1[mode]]
    values += [f.score for f in score.fields]
    return values


@given(gold=gold_objects, options=option_sets)
def test_gold_against_itself_is_perfect(gold: dict, options: ScoringOptions) -> None:
    score = score_sample(json.dumps(gold), gold, options=options)
    assert score.valid
    assert score.exact_match
    for mode in ("strict", "partial", "lenient"):
        assert score.f1[mode] == 1.0
    assert score.type_accuracy == 1.0 and score.hallucination_rate == 0.0
    assert math.isclose(score.eqs, 1.0)
    assert all(f.category == "exact" for f in score.fields)


@given(gold=gold_objects, output=st.one_of(json_values, st.text(max_size=60)), options=option_sets)
def test_every_score_is_in_the_unit_interval_and_nothing_raises(gold: dict, output, options: ScoringOptions) -> None:
    score = score_sample(output, gold, options=options)
    for value in all_scores(score):
        assert 0.0 <= value <= 1.0
    # the modes are nested: strict credit <= partial credit <= lenient credit
    assert score.f1["strict"] <= score.f1["partial"] + 1e-12 <= score.f1["lenient"] + 2e-12
    json.dumps(score.as_dict())  # always serializable


@given(gold=gold_objects, first=json_values, second=json_values)
def test_expected_field_count_depends_only_on_the_gold(gold: dict, first, second) -> None:
    a = score_sample(first, gold)
    b = score_sample(second, gold)
    assert a.observed.expected == b.observed.expected


def _near(value, rng_choice: int):
    """A variant of ``value`` that shares most of its structure (so equal subtrees are common)."""
    if isinstance(value, dict) and value:
        key = sorted(value)[rng_choice % len(value)]
        return {**value, key: _near(value[key], rng_choice // 2)}
    if isinstance(value, list) and value:
        return value[:-1] if rng_choice % 3 == 0 else value + [value[0]]
    if isinstance(value, bool):
        return int(value)  # True == 1 in Python, but not in JSON
    if isinstance(value, str):
        return value.upper() + "x"
    return value


@given(gold=gold_objects, choice=st.integers(0, 1000), options=option_sets)
def test_the_equal_subtree_fast_path_changes_nothing(gold: dict, choice: int, options: ScoringOptions) -> None:
    from pytest_extractbench.scoring import FieldWalker

    predicted = _near(gold, choice)
    fast = FieldWalker(options)
    slow = FieldWalker(options)
    slow.fast_paths = False
    assert fast.walk(gold, predicted, None) == slow.walk(gold, predicted, None)


# -- with x-eval-* rules ---------------------------------------------------------------------

_COMPARE_CHOICES = ("exact", "partial", {"oneof": {"values": ["a", "B", 1]}})
_TRANSFORM_CHOICES = ("lowercase", "strip", "sort_tokens", "normalize_whitespace", {"round_digits": {"digits": 1}})


def _annotate(schema: dict, data, depth: int = 0) -> dict:
    """Attach random (valid) x-eval rules to a resolved schema."""
    out = dict(schema)
    if "properties" in out:
        out["properties"] = {k: _annotate(v, data, depth + 1) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict) and out["items"]:
        out["items"] = _annotate(out["items"], data, depth + 1)
    types = out.get("type", [])
    types = {types} if isinstance(types, str) else set(types)
    if depth and data.draw(st.integers(0, 9), label="skip") == 0:
        out["x-eval-skip"] = True
    if types - {"object", "array", "null"} or "array" in types:
        kind = data.draw(st.integers(0, 3), label="rule")
        if kind == 1:
            out["x-eval-compare"] = data.draw(st.sampled_from(_COMPARE_CHOICES))
        elif kind == 2:
            out["x-eval-transform"] = data.draw(st.lists(st.sampled_from(_TRANSFORM_CHOICES), max_size=3))
        elif kind == 3 and types & {"number", "integer"} and not types & {"string", "array"}:
            out["x-eval-compare"] = {"numeric": {"tolerance": {"abs": 0.5}}}
    if "array" in types and data.draw(st.booleans(), label="align"):
        props = list((out.get("items") or {}).get("properties") or {})
        choices = ["ordered", "hungarian"] + ([{"match_by": "key_field", "key": props[0]}] if props else [])
        out["x-eval-align"] = data.draw(st.sampled_from(choices))
    return out


@given(gold=gold_objects, choice=st.integers(0, 1000), options=option_sets, data=st.data())
def test_the_equal_subtree_fast_path_changes_nothing_under_rules(gold: dict, choice: int, options, data) -> None:
    from pytest_extractbench.scoring import FieldWalker, compile_rules, infer_schema

    schema = _annotate(infer_schema([gold]), data)
    root = compile_rules(schema).root
    predicted = data.draw(st.sampled_from([gold, _near(gold, choice), _near(_near(gold, choice), choice // 3)]))
    fast = FieldWalker(options)
    slow = FieldWalker(options)
    slow.fast_paths = False
    assert fast.walk(gold, predicted, root) == slow.walk(gold, predicted, root)
    # skip really drops fields on both walks, identical or not
    assert not any(f.path == p for f in fast.walk(gold, gold, root) for p in _skipped_leaves(schema))


def _skipped_leaves(schema: dict, prefix: str = "") -> list[str]:
    found = []
    for name, child in (schema.get("properties") or {}).items():
        path = f"{prefix}.{name}" if prefix else name
        if child.get("x-eval-skip"):
            found.append(path)
        elif "properties" in child:
            found.extend(_skipped_leaves(child, path))
    return found


@given(gold=gold_objects, choice=st.integers(0, 1000), options=option_sets)
def test_annotated_defaults_score_like_no_annotation(gold: dict, choice: int, options) -> None:
    from pytest_extractbench.scoring import annotate_defaults, infer_schema

    predicted = _near(gold, choice)
    resolved = infer_schema([gold])
    plain = score_sample(predicted, gold, resolved, options=options)
    annotated = score_sample(predicted, gold, annotate_defaults(resolved), options=options)
    strip = lambda s: [f._replace(comparator=None) for f in s.fields]  # noqa: E731 - the rule's name is recorded
    assert strip(plain) == strip(annotated)
    assert plain.counts == annotated.counts and plain.eqs == annotated.eqs


# -- numeric tolerances and type-aware keys ------------------------------------------------------------------

numbers = st.one_of(st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6, allow_nan=False, width=32))
tolerances = st.floats(0, 10, allow_nan=False, width=32)


@given(gold=numbers, output=numbers, a=tolerances, r=tolerances)
def test_numeric_tolerances_together_are_the_and_of_each_alone_or_with_any_the_or(gold, output, a, r) -> None:
    from pytest_extractbench.scoring import DEFAULT_OPTIONS
    from pytest_extractbench.scoring.comparators import compare_numeric

    def score(**params) -> float:
        return compare_numeric(gold, output, params, DEFAULT_OPTIONS).score

    alone = score(tolerance={"abs": a}), score(tolerance={"rel": r})
    assert score(tolerance={"abs": a, "rel": r}) == min(alone)
    assert score(tolerance={"abs": a, "rel": r}, combine="any") == max(alone)
    # abs alone is symmetric: only the distance counts
    swapped = compare_numeric(output, gold, {"tolerance": {"abs": a}}, DEFAULT_OPTIONS).score
    assert score(tolerance={"abs": a}) == swapped


key_values = st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from(["true", "TRUE", "1", "0", " 1", "false"]))


@given(gold=st.lists(key_values, max_size=4), output=st.lists(key_values, max_size=4))
def test_key_field_never_pairs_keys_of_different_json_types(gold, output) -> None:
    from pytest_extractbench.scoring import DEFAULT_OPTIONS, AlignContext, align_key_field, json_type

    expected = [{"k": v} for v in gold]
    predicted = [{"k": v} for v in output]
    pairs = align_key_field(expected, predicted, None, DEFAULT_OPTIONS, AlignContext({"key": "k"}))
    for i, j in pairs:
        if i is not None and j is not None:
            assert json_type(gold[i]) == json_type(output[j])
    # every element is accounted for exactly once
    assert sorted(i for i, _ in pairs if i is not None) == list(range(len(gold)))
    assert sorted(j for _, j in pairs if j is not None) == list(range(len(output)))


# -- the flat-object similarity a Hungarian alignment asks for ------------------------------------------------

_flat_values = st.one_of(
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.5, 1.0, 2.0, 1e-7]),
    st.sampled_from(["", " ", "a", "A", "ab", "a b", "1", "true", "Ann Lee", "ann  lee"]),
)
_flat_objects = st.dictionaries(st.sampled_from("abcdef"), _flat_values, max_size=5)


@given(gold=_flat_objects, output=_flat_objects, options=option_sets)
def test_the_flat_similarity_is_the_walked_one_exactly(gold: dict, output: dict, options: ScoringOptions) -> None:
    from pytest_extractbench.scoring import FieldWalker
    from pytest_extractbench.scoring.flat import flat_similarity

    for reference in (True, False):  # the walk with and without its equal-subtree fast paths
        walker = FieldWalker(options)
        walker.fast_paths = reference
        scores = [f.score for f in walker.walk(gold, output, None)]
        walked = sum(scores) / len(scores) if scores else 1.0
        assert flat_similarity(gold, output, options) == walked
    assert FieldWalker(options).element_similarity(gold, output, None) == walked
    assert flat_similarity({**gold, "z": [1]}, output, options) is None  # a container: the walk's to score


_option_sets_with_normalisers = st.builds(
    ScoringOptions,
    case_sensitive=st.booleans(),
    empty_equals_absent=st.booleans(),
    strict_types=st.booleans(),
    normalisers=st.sampled_from([(), ("no_punctuation",)]),
    composite_weights=st.sampled_from([(0.5, 0.3, 0.2), (0.2, 0.2, 0.6)]),
)


@given(
    gold=st.lists(st.one_of(_flat_objects, json_values), max_size=4),
    output=st.lists(st.one_of(_flat_objects, json_values), max_size=4),
    options=_option_sets_with_normalisers,
)
def test_the_similarity_rows_are_each_pairs_similarity_exactly(gold: list, output: list, options) -> None:
    from pytest_extractbench.scoring import FieldWalker
    from pytest_extractbench.scoring.flat import flat_similarity, prepared, prepared_similarity, similarity_rows

    walker = FieldWalker(options)
    pairwise = [[repr(walker.element_similarity(g, o, None)) for o in output] for g in gold]
    for flat in (True, False):
        rows = similarity_rows(gold, output, options, lambda g, o: walker.element_similarity(g, o, None), flat)
        assert [[repr(value) for value in row] for row in rows] == pairwise
    for g in gold:  # each pair of objects of scalars, from its prepared leaves
        for o in output:
            leaves, found = prepared(g, options), prepared(o, options)
            if leaves is not None and found is not None:
                assert repr(prepared_similarity(g, leaves, o, found, options)) == repr(flat_similarity(g, o, options))


# a pair of strings under one key every time (the prepared branch), often one inside the other (containment is not
# symmetric), beside keys that may be missing on either side
_texts = st.sampled_from(["a", "ab", "a b", "b", "Ann", "Ann Lee", "ann  lee", "Lee, Ann", "", " "])
_overlapping_objects = st.fixed_dictionaries({"a": _texts}, optional={"b": _flat_values, "c": _texts})


@given(gold=_overlapping_objects, output=_overlapping_objects, options=_option_sets_with_normalisers)
def test_a_pair_scored_from_prepared_leaves_is_the_flat_similarity(gold: dict, output: dict, options) -> None:
    from pytest_extractbench.scoring.flat import flat_similarity, prepared, prepared_similarity

    leaves, found = prepared(gold, options), prepared(output, options)
    assert leaves is not None and found is not None
    assert repr(prepared_similarity(gold, leaves, output, found, options)) == repr(
        flat_similarity(gold, output, options)
    )


def test_every_pair_of_these_strings_scores_from_prepared_leaves_as_flat_similarity() -> None:
    """Exhaustive where the random search is thin: each pair of texts (blank, equal once normalized, one inside the
    other) under each option that changes how strings compare."""
    import itertools

    from pytest_extractbench.scoring.flat import flat_similarity, prepared, prepared_similarity

    texts = ["a", "ab", "a b", "b", "Ann", "Ann Lee", "ann  lee", "Lee, Ann", "", " ", "  "]
    for case_sensitive, empty_absent, normalisers in itertools.product(
        (False, True), (False, True), ((), ("no_punctuation",))
    ):
        options = ScoringOptions(
            case_sensitive=case_sensitive, empty_equals_absent=empty_absent, normalisers=normalisers
        )
        for first, second in itertools.product(texts, repeat=2):
            gold, output = {"a": first, "n": 1}, {"a": second, "n": 1.5}
            leaves, found = prepared(gold, options), prepared(output, options)
            assert leaves is not None and found is not None
            assert repr(prepared_similarity(gold, leaves, output, found, options)) == repr(
                flat_similarity(gold, output, options)
            ), (first, second, options)


@given(
    gold=st.lists(_overlapping_objects, min_size=1, max_size=4),
    output=st.lists(_overlapping_objects, min_size=1, max_size=5),
)
def test_a_hungarian_alignment_pairs_the_same_from_the_rows_as_pair_by_pair(gold: list, output: list) -> None:
    from pytest_extractbench.scoring import FieldWalker
    from pytest_extractbench.scoring.align import AlignContext, align_hungarian
    from pytest_extractbench.scoring.flat import similarity_rows

    options = ScoringOptions()
    walker = FieldWalker(options)

    def similarity(g: object, o: object) -> float:
        return walker.element_similarity(g, o, None)

    def rows(gs: list, os: list) -> list[list[float]]:
        return similarity_rows(gs, os, options, similarity, True)

    pairwise = align_hungarian(gold, output, None, options, AlignContext({}, similarity, ""))
    assert align_hungarian(gold, output, None, options, AlignContext({}, similarity, "", rows)) == pairwise
