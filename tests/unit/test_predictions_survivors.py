"""The predictions reader (``dataset/predictions.py``): what a user would see if its dataclass options or its
re-reading of a row were different. Expected values are worked out by hand."""

from __future__ import annotations

from pathlib import Path

from pytest_extractbench.dataset.predictions import PredictionsSpec, _nth_line, load_predictions


def test_two_reads_of_the_same_rows_are_equal_and_the_rereaders_stay_out_of_repr() -> None:
    rows = ({"id": "s1", "output": "{}"},)
    spec = PredictionsSpec(Path("<rows>"), "m", rows)
    first = load_predictions([spec], default_model=None, base_dir=Path("."))
    second = load_predictions([spec], default_model=None, base_dir=Path("."))
    # each read makes its own re-reader (a new functools.partial, equal only to itself): left out of == and repr
    assert first.rereaders["<rows>"] != second.rereaders["<rows>"]
    assert first == second
    assert "rereaders" not in repr(first)


def test_a_line_past_the_end_of_a_predictions_file_reads_as_none(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b"}\n')
    assert _nth_line(path, 2) == {"id": "b"}
    assert _nth_line(path, 3) is None  # two lines: no third
