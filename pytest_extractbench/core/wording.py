"""Counts and numbers in the words of a sentence: "1 sample" and "2 samples", and a measured zero printed as 0
rather than the rounding noise of a float sum (a standard deviation of equal values comes out as 2e-17)."""

from __future__ import annotations

# below this a float is the noise of summing equal values, not a measurement (scores and stds are O(1) or more)
NOISE = 1e-12


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and its noun in the right number: ``counted(1, "sample")`` is "1 sample", ``counted(10000,
    "sample")`` "10,000 samples"."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def plain(value: float, digits: int = 4) -> str:
    """A measured value to ``digits`` significant digits; a zero within float noise is "0"."""
    return "0" if abs(value) < NOISE else f"{value:.{digits}g}"
