"""Counts in the right number and measured zeros printed as 0, wherever the terminal and the reports say them."""

from __future__ import annotations

import statistics

from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.core.wording import counted, plain
from pytest_extractbench.report.terminal import gap_words


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "sample") == "1 sample"
    assert counted(0, "sample") == "0 samples"
    assert counted(2, "gate") == "2 gates"
    assert counted(3, "sample", "samples'") == "3 samples'"
    assert counted(10_000, "sample") == "10,000 samples"


def test_the_noise_of_equal_values_is_zero_and_real_values_keep_four_digits() -> None:
    noise = statistics.pstdev([0.1, 0.1, 0.1, 0.7 - 0.6])  # float rounding: about 1e-17, not 0.0
    assert noise != 0.0 and plain(noise) == "0"
    assert plain(0.0) == "0" and plain(-0.0) == "0"
    assert plain(0.47140452) == "0.4714"
    assert plain(1e-9) == "1e-09"  # small, but a measurement


@given(st.floats(min_value=1e-9, max_value=1e9))
def test_a_value_above_the_noise_is_never_shown_as_zero(value: float) -> None:
    assert plain(value) != "0" and abs(float(plain(value)) - value) <= 5e-4 * value


def test_the_gap_reads_the_way_the_sentence_does() -> None:
    assert gap_words(0.114) == "trails by 0.114"
    assert gap_words(-0.02) == "leads by 0.020"
    assert "+" not in gap_words(0.5) + gap_words(-0.5)
