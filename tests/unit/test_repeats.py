"""pass@k and pass^k over repeated runs: the estimators against their definition (every k-subset of the runs), their
invariants, flaky fields, and gates on them by their catalog names."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.analysis.repeats import pass_at_k, pass_hat_k, repeats_section, sample_repeats
from pytest_extractbench.gating.outcomes import UNMEASURED
from pytest_extractbench.gating.requirements import evaluate_requirements, parse_requirement

runs = st.lists(st.booleans(), min_size=1, max_size=9)


@given(passes=runs, data=st.data())
def test_the_estimators_equal_the_share_of_k_subsets(passes: list[bool], data: st.DataObject) -> None:
    """pass@k: the share of the k-run subsets with a pass; pass^k: the share whose runs all pass."""
    n, c = len(passes), sum(passes)
    k = data.draw(st.integers(1, n))
    subsets = list(itertools.combinations(passes, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


@given(passes=runs)
def test_pass_at_k_grows_and_pass_hat_k_shrinks_with_k(passes: list[bool]) -> None:
    n, c = len(passes), sum(passes)
    at = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    hat = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    assert at[0] == pytest.approx(c / n) == pytest.approx(hat[0])
    assert all(a <= b + 1e-12 for a, b in zip(at, at[1:])) and all(a >= b - 1e-12 for a, b in zip(hat, hat[1:]))
    assert at[-1] == float(c > 0) and hat[-1] == float(c == n)


@pytest.mark.parametrize("n, c, k", [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_impossible_counts_are_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_flaky_fields_count_flips_over_the_runs_that_parsed() -> None:
    exact = {"name": "exact", "items[0].sku": "exact", "items[1].sku": "exact"}
    flipped = {"name": "exact", "items[0].sku": "incorrect", "items[1].sku": "exact", "note": "spurious"}
    one = sample_repeats([True, False, True], [exact, None, flipped])  # the middle run did not parse
    steady = sample_repeats([True, True, True], [exact, exact, exact])
    assert one["passed"] == 2 and one["compared_runs"] == 2
    assert one["flips"] == {"items[0].sku": ["exact", "incorrect"], "note": ["absent", "spurious"]}
    section = repeats_section({"a": one, "b": steady}, resamples=200)
    fields = {f["field"]: f for f in section["repeats"]["flaky_fields"]}
    # items[].sku: 4 sample fields compared (two per sample), one flipped; note: seen once, flipped once
    assert (fields["items[].sku"]["flipped"], fields["items[].sku"]["occurrences"]) == (1, 4)
    assert fields["items[].sku"]["rate"] == 0.25 and fields["note"]["rate"] == 1.0
    assert fields["note"]["transitions"] == {"absent -> spurious": 1}
    assert "name" not in fields
    # pass@3 = (1 + 1) / 2; pass^3 = (C(2,3)/C(3,3) + 1) / 2 = 0.5; pass@2 = (1 - C(1,2)/C(3,2) + 1) / 2 = 1
    assert section["pass_at_k"] == 1.0 and section["pass_hat_k"] == 0.5 and section["repeats"]["runs"] == 3
    assert section["repeats"]["pass_hat"]["2"] == pytest.approx((1 / 3 + 1) / 2)
    assert section["repeats"]["pass_counts"] == {"0": 0, "1": 0, "2": 1, "3": 1}
    assert (
        section["confidence_intervals"]["pass_hat_k"]["low"]
        <= 0.5
        <= section["confidence_intervals"]["pass_hat_k"]["high"]
    )


def test_a_run_without_repeats_has_no_section() -> None:
    assert repeats_section({"a": sample_repeats([True], [{"name": "exact"}])}) == {}


@pytest.mark.parametrize(
    "text, metric", [("pass^k>=0.8", "pass_hat_k"), ("pass@k >= 90%", "pass_at_k"), ("pass_hat_k>=0.5", "pass_hat_k")]
)
def test_gates_name_them_as_written(text: str, metric: str) -> None:
    requirement = parse_requirement(text)
    assert requirement.metric == metric and requirement.direction == "min"
    (held,) = evaluate_requirements({metric: 0.95}, [requirement])
    (missed,) = evaluate_requirements({metric: 0.4}, [requirement])
    assert held.passed and not missed.passed


def test_a_gate_on_pass_hat_k_without_repeats_is_not_let_pass() -> None:
    (check,) = evaluate_requirements({"extraction_quality_score": 1.0}, [parse_requirement("pass^k>=0.8")])
    assert not check.passed and check.outcome == UNMEASURED and "--extractbench-repeats" in check.reason
