"""metrics.json and baselines written by files.write_json: streamed in batches of the encoder's pieces, the same
text ``json.dumps(..., indent=2)`` makes (plus a newline), and no file at all when a value cannot be written."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_extractbench.core import files

LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and the infinities become null
    st.text(),  # non-ASCII kept as it is (ensure_ascii=False)
)
DOCUMENTS = st.recursive(
    LEAVES, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5)
)


def expected_text(data: object) -> str:
    """What write_json wrote before it streamed: the whole text at once."""
    return json.dumps(files.plain(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


@settings(deadline=None, max_examples=60)
@given(data=DOCUMENTS)
def test_the_streamed_text_is_the_text_dumps_makes(tmp_path_factory: pytest.TempPathFactory, data: object) -> None:
    path = tmp_path_factory.mktemp("json") / "metrics.json"
    files.write_json(path, data)
    assert path.read_text(encoding="utf-8") == expected_text(data)


def test_a_document_of_many_batches_is_written_whole(tmp_path: Path) -> None:
    # 3,000 rows of 4 keys: 20 pieces a row (each key, separator and value), 60,020 pieces: 15 batches of 4,096
    rows = [{"sample_id": f"s{i}", "eqs": i / 7, "ok": i % 2 == 0, "n": np.int64(i)} for i in range(3000)]
    data = {"models": {"m": {"rows": rows, "nan": math.nan, "name": "Ünïcode"}}}
    files.write_json(tmp_path / "metrics.json", data)
    text = (tmp_path / "metrics.json").read_text(encoding="utf-8")
    assert text == expected_text(data)
    assert json.loads(text)["models"]["m"]["rows"][2999] == {
        "sample_id": "s2999",
        "eqs": 2999 / 7,
        "ok": False,
        "n": 2999,
    }


def test_a_value_json_cannot_hold_leaves_no_file(tmp_path: Path) -> None:
    huge = 10**5000  # past Python's 4,300-digit int-to-text limit: the encoder raises midway through the document
    path = tmp_path / "metrics.json"
    with pytest.raises(files.OutputWriteError, match="cannot be written as JSON"):
        files.write_json(path, {"first": list(range(10_000)), "then": huge})
    assert list(tmp_path.iterdir()) == []  # neither metrics.json nor the temporary file beside it
