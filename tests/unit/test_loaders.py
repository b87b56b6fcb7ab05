"""Dataset sources: Parquet (directly and through ``datasets``), Benchson folders, column mapping,
validation of schemas and gold, seeded subsampling and the HuggingFace Hub errors."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _net import serve_in_thread
from pytest_extractbench.dataset import load_dataset, subsample
from pytest_extractbench.dataset.sources import DatasetSourceError, load_source, parse_columns

ROOT = Path(__file__).resolve().parents[2]

INVOICE = {
    "type": "object",
    "$defs": {
        "money": {
            "type": "object",
            "properties": {"amount": {"type": "number"}, "currency": {"enum": ["EUR", "USD"]}},
            "required": ["amount", "currency"],
        }
    },
    "properties": {
        "number": {"type": "string"},
        "issued": {"type": "string", "format": "date"},
        "total": {"$ref": "#/$defs/money"},
        "payer": {
            "oneOf": [
                {"type": "object", "properties": {"company": {"type": "string"}}, "required": ["company"]},
                {"type": "object", "properties": {"person": {"type": "string"}}, "required": ["person"]},
            ]
        },
        "lines": {
            "type": "array",
            "items": {"allOf": [{"type": "object", "properties": {"sku": {"type": "string"}}}, {"required": ["sku"]}]},
        },
        "status": {"anyOf": [{"enum": ["paid", "open"]}, {"type": "null"}]},
    },
    "required": ["number", "total"],
}
GOLD = {
    "number": "A-1",
    "issued": "2024-03-01",
    "total": {"amount": 12.5, "currency": "EUR"},
    "payer": {"company": "ACME"},
    "lines": [{"sku": "X1"}],
    "status": "paid",
}


def paraloq_rows(n: int) -> list[dict]:
    """Rows in paraloq/json_data_extraction's format: JSON in string columns, no id column."""
    return [
        {
            "title": f"Invoice {i}",
            "topic": ["finance", "business"][i % 2],
            "schema": json.dumps(INVOICE),
            "item": json.dumps({**GOLD, "number": f"A-{i}"}),
            "text": f"Invoice A-{i} of 2024-03-01, EUR 12.50.",
            "medium": "invoice",
        }
        for i in range(n)
    ]


def write_parquet(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


# -- Parquet and datasets ------------------------------------------------------------------------


def test_paraloq_parquet_round_trip_through_datasets(tmp_path: Path) -> None:
    rows = paraloq_rows(6)
    path = write_parquet(tmp_path / "paraloq.parquet", rows)
    direct = load_source(str(path))
    through_datasets = load_source(f"hf:{path}", cache_dir=tmp_path / "cache")
    for dataset in (direct, through_datasets):
        assert dataset.problems == []
        assert [s.id for s in dataset.samples] == [f"row-{i}" for i in range(1, 7)]
        for sample, row in zip(dataset.samples, rows):
            assert sample.text == row["text"]
            assert sample.schema == json.loads(row["schema"])
            assert sample.expected == json.loads(row["item"])
            assert (sample.meta["topic"], sample.meta["title"], sample.meta["medium"]) == (
                row["topic"],
                row["title"],
                row["medium"],
            )
            assert sample.meta["complexity"]["max_nesting_depth"] == 2
    assert through_datasets.source == f"hf:{path}"


def test_hf_local_folder_with_splits(tmp_path: Path) -> None:
    rows = paraloq_rows(5)
    folder = tmp_path / "json_data_extraction"
    write_parquet(folder / "data" / "train-00000-of-00001.parquet", rows[:3])
    write_parquet(folder / "data" / "test-00000-of-00001.parquet", rows[3:])
    test = load_source(f"hf:{folder}:test", cache_dir=tmp_path / "cache")
    assert [s.text for s in test.samples] == [r["text"] for r in rows[3:]]
    both = load_source(f"hf:{folder}", cache_dir=tmp_path / "cache")
    # every split when none is named; ids and locations name the split
    assert sorted(s.id for s in both.samples) == ["test-1", "test-2", "train-1", "train-2", "train-3"]
    assert {s.meta["location"] for s in both.samples} >= {"train row 1", "test row 2"}
    with pytest.raises(DatasetSourceError, match="datasets could not load"):
        load_source(f"hf:{folder}:validation", cache_dir=tmp_path / "cache")


def save_splits(folder: Path, splits: dict[str, list[dict]]) -> Path:
    """``DatasetDict.save_to_disk`` of ``splits`` (a real one, read back by ``datasets.load_from_disk``)."""
    datasets = pytest.importorskip("datasets")
    datasets.DatasetDict({name: datasets.Dataset.from_list(rows) for name, rows in splits.items()}).save_to_disk(
        str(folder)
    )
    return folder


def with_ids(rows: list[dict], prefix: str) -> list[dict]:
    return [{"id": f"{prefix}{i}", **row} for i, row in enumerate(rows)]


def test_a_folder_saved_with_save_to_disk_is_every_split_with_or_without_hf(tmp_path: Path) -> None:
    rows = paraloq_rows(5)
    folder = save_splits(tmp_path / "saved", {"train": rows[:3], "test": rows[3:]})  # test/ as in a Benchson folder
    for spec in (str(folder), f"hf:{folder}"):
        both = load_source(spec, cache_dir=tmp_path / "cache")
        assert both.problems == [], spec  # not read as Benchson instances
        assert sorted(s.id for s in both.samples) == ["test-1", "test-2", "train-1", "train-2", "train-3"], spec
        assert {s.meta["location"] for s in both.samples} >= {"train row 3", "test row 1"}, spec
    test = load_source(f"hf:{folder}:test", cache_dir=tmp_path / "cache")
    assert [s.text for s in test.samples] == [r["text"] for r in rows[3:]]
    with pytest.raises(DatasetSourceError) as missing:
        load_source(f"hf:{folder}:validation", cache_dir=tmp_path / "cache")
    assert "no split 'validation'" in str(missing.value) and "its splits: train, test" in str(missing.value)


def test_a_folder_saved_from_one_dataset_loads_as_that_dataset(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rows = with_ids(paraloq_rows(2), "x")
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "one"))
    for spec in (str(tmp_path / "one"), f"hf:{tmp_path / 'one'}"):
        assert [s.id for s in load_source(spec).samples] == ["x0", "x1"], spec


def test_splits_sharing_ids_are_refused_in_one_message_naming_the_splits(tmp_path: Path) -> None:
    rows = paraloq_rows(3)
    folder = save_splits(tmp_path / "saved", {"train": with_ids(rows, "s"), "test": with_ids(rows[:2], "s")})
    for spec in (str(folder), f"hf:{folder}"):
        with pytest.raises(DatasetSourceError) as caught:
            load_source(spec, cache_dir=tmp_path / "cache")
        message = str(caught.value)
        assert message.startswith(f"dataset {spec!r}: splits 'train' and 'test' share sample ids (such as 's0')")
        assert "its splits: train, test" in message and f"--extractbench-dataset hf:{folder}:SPLIT" in message
    assert [s.id for s in load_source(f"hf:{folder}:test", cache_dir=tmp_path / "cache").samples] == ["s0", "s1"]


@pytest.mark.parametrize(
    "missing, spec",
    [
        ("pyarrow.parquet", "data.parquet"),
        ("datasets", "hf:data.parquet"),
        ("datasets", "hf:org/name"),
    ],
)
def test_without_the_hf_extra_the_message_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, missing: str, spec: str
) -> None:
    write_parquet(tmp_path / "data.parquet", [{"id": "a", "text": "t", "schema": "{}", "expected": "{}"}])
    monkeypatch.setitem(sys.modules, missing, None)  # what `import` meets when the package is not installed
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never the network, whatever happens
    with pytest.raises(DatasetSourceError) as caught:
        load_source(spec, base_dir=tmp_path)
    message = str(caught.value)
    assert "pip install 'pytest-extractbench[hf]'" in message and spec.removeprefix("hf:") in message
    assert "\n" not in message


def test_bad_parquet_and_unknown_file_types_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DatasetSourceError, match="not a readable Parquet file"):
        load_source(str(tmp_path / "broken.parquet"))
    (tmp_path / "data.csv").write_text("a,b\n")
    with pytest.raises(DatasetSourceError, match="unknown file type .csv"):
        load_source(str(tmp_path / "data.csv"))
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        load_source(str(tmp_path / "missing.parquet"))


def test_parquet_rows_with_bad_cells_are_problems_with_row_numbers(tmp_path: Path) -> None:
    rows = paraloq_rows(3)
    rows[1]["schema"] = "{broken"
    rows[2]["item"] = json.dumps({**GOLD, "total": {"amount": "lots", "currency": "EUR"}})
    path = write_parquet(tmp_path / "p.parquet", rows)
    dataset = load_source(str(path))
    assert [s.id for s in dataset.samples] == ["row-1"]
    assert [str(p) for p in dataset.problems] == [
        f"{path}:row 2, sample 'row-2', field 'schema': is a string but not valid JSON: "
        "Expecting property name enclosed in double quotes (column 2)",
        f"{path}:row 3, sample 'row-3', field 'item': gold violates its own schema at $.total.amount: "
        '"lots" is not of type "number"',
    ]


# -- column mapping -------------------------------------------------------------------------------


def test_columns_map_other_field_names(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"key": "k1", "document": "t", "spec": INVOICE, "gold": GOLD, "category": "finance"},
                {"key": "k2", "spec": INVOICE, "gold": GOLD},
            ]
        )
    )
    columns = dict(parse_columns("id=key, text=document,schema=spec,expected=gold,topic=category"))
    dataset = load_dataset(str(path), columns=columns)
    assert [(s.id, s.topic) for s in dataset.samples] == [("k1", "finance")]
    assert [str(p) for p in dataset.problems] == [
        f"{path}:line 2, sample 'k2', field 'document': missing 'document' (a string)"
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("text", "expected OURS=THEIRS"),
        ("txt=doc", "unknown field 'txt'"),
        ("text=a,text=b", "mapped twice"),
    ],
)
def test_bad_column_mappings_are_rejected(value: str, message: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse_columns(value)


# -- Benchson folders --------------------------------------------------------------------------------


def test_benchson_folder(tmp_path: Path) -> None:
    folder = tmp_path / "invoices"
    (folder / "test").mkdir(parents=True)
    (folder / "train").mkdir()
    (folder / "schema.json").write_text(json.dumps(INVOICE))
    (folder / "train" / "t1.json").write_text(json.dumps({"data": "train text", "ground_truth": GOLD}))
    (folder / "test" / "a.json").write_text(json.dumps({"data": "Invoice A-1", "ground_truth": GOLD}))
    own = {"type": "object", "properties": {"n": {"type": "integer"}}}
    (folder / "test" / "b.json").write_text(
        json.dumps({"data": {"text": "n is 3", "schema": own}, "ground_truth": {"n": 3}})
    )
    (folder / "test" / "c.json").write_text('{"data": "x",\n "ground_truth": }')
    (folder / "test" / "d.json").write_text(json.dumps({"data": "no gold"}))
    dataset = load_source(str(folder))
    assert dataset.name == "invoices"
    assert [(s.id, s.text) for s in dataset.samples] == [("a", "Invoice A-1"), ("b", "n is 3")]
    assert dataset.samples[0].schema == INVOICE and dataset.samples[1].schema == own
    assert [str(p) for p in dataset.problems] == [
        f"{folder}:test/c.json line 2: not valid JSON: Expecting value (column 18)",
        f"{folder}:test/d.json line 1, sample 'd', field 'expected': missing the gold output "
        "(one of expected, item, expected_output)",
    ]
    assert dataset.problems[0].lineno == 2


def test_folder_without_test_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetSourceError, match="without test/"):
        load_source(str(tmp_path / "empty"))


# -- validation -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "where"),
    [
        ({**GOLD, "issued": "March 1st"}, '$.issued: "March 1st" is not a "date"'),  # format
        (
            {**GOLD, "total": {"amount": 1, "currency": "GBP"}},
            '$.total.currency: "GBP" is not one of "EUR" or "USD"',
        ),  # $ref + enum
        (
            {**GOLD, "payer": {"company": "A", "person": "B"}},
            '$.payer: {"company":"A","person":"B"} is valid under more than one of the schemas listed in the \'oneOf\'',
        ),
        ({**GOLD, "lines": [{"qty": 1}]}, '$.lines[0]: "sku" is a required property'),  # allOf
        ({**GOLD, "status": "void"}, "$.status: \"void\" is not valid under any of the schemas listed in the 'anyOf'"),
    ],
)
def test_gold_is_validated_against_its_schema(tmp_path: Path, gold: dict, where: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(
        json.dumps({"id": "good", "text": "t", "schema": INVOICE, "expected": GOLD})
        + "\n"
        + json.dumps({"id": "bad", "text": "t", "schema": INVOICE, "expected": gold})
        + "\n"
    )
    dataset = load_source(str(path))
    assert [s.id for s in dataset.samples] == ["good"]
    (problem,) = dataset.problems
    assert (problem.location, problem.sample_id, problem.field, problem.severity) == (
        "line 2",
        "bad",
        "expected",
        "error",
    )
    assert problem.message.startswith(f"gold violates its own schema at {where}"), problem.message


def test_invalid_schemas_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(
        json.dumps({"id": "s", "text": "t", "schema": {"type": "object", "required": "name"}, "expected": {}}) + "\n"
    )
    (problem,) = load_source(str(path)).problems
    assert str(problem) == (
        f"{path}:line 1, sample 's', field 'schema': not a valid JSON Schema: $.required: 'name' is not of type 'array'"
    )


# -- sampling ----------------------------------------------------------------------------------------------


def test_subsample_is_seeded_order_preserving_and_order_independent() -> None:
    samples = load_source("bundled").samples
    picked = subsample(samples, 10, 42)
    assert len(picked) == 10
    positions = [samples.index(s) for s in picked]
    assert positions == sorted(positions)  # dataset order kept
    assert [s.id for s in subsample(list(reversed(samples)), 10, 42)] == [s.id for s in reversed(picked)]
    assert {s.id for s in subsample(samples, 10, 7)} != {s.id for s in picked}
    assert subsample(samples, None, 42) == samples and subsample(samples, 1000, 42) == samples
    assert {s.id for s in subsample(samples, 5, 42)} <= {s.id for s in picked}  # smaller n: a subset


@pytest.mark.slow
def test_subsample_is_the_same_in_another_interpreter() -> None:
    code = (
        "from pytest_extractbench.dataset import load_dataset, subsample\n"
        "print(','.join(s.id for s in subsample(load_dataset().samples, 7, 3)))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "123"}
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert other.stdout.strip() == ",".join(s.id for s in subsample(load_dataset().samples, 7, 3))


# -- the HuggingFace Hub -----------------------------------------------------------------------------------


class _NotFound(http.server.BaseHTTPRequestHandler):
    def _answer(self) -> None:
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(b'{"error": "Repository not found"}')

    do_GET = do_HEAD = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def empty_hub() -> Iterator[str]:
    """A real HTTP server on loopback that knows no dataset."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    serve_in_thread(server)
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def _load_in_subprocess(spec: str, tmp_path: Path, **env: str) -> tuple[str, float]:
    # huggingface_hub reads HF_ENDPOINT / HF_HUB_OFFLINE at import: a fresh interpreter per case.
    code = (
        "from pytest_extractbench.dataset.sources import load_source\n"
        f"try:\n    load_source({spec!r})\nexcept Exception as exc:\n    print(type(exc).__name__, exc)"
    )
    full = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HOME": str(tmp_path / "hf"), **env}
    full.pop("HF_HUB_OFFLINE", None) if "HF_HUB_OFFLINE" not in env else None
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=120, check=False
    )
    return done.stdout + done.stderr, time.perf_counter() - started


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_an_unreachable_hub_is_a_clear_error(tmp_path: Path) -> None:
    output, _ = _load_in_subprocess(
        "hf:paraloq/json_data_extraction", tmp_path, HF_ENDPOINT=f"http://127.0.0.1:{_closed_port()}"
    )
    assert output.startswith("DatasetSourceError dataset 'hf:paraloq/json_data_extraction': the HuggingFace Hub"), (
        output
    )
    assert "is unreachable" in output and "hf:PATH" in output


@pytest.mark.slow
def test_an_unknown_dataset_is_a_clear_error(tmp_path: Path, empty_hub: str) -> None:
    output, _ = _load_in_subprocess("hf:someone/no-such-dataset", tmp_path, HF_ENDPOINT=empty_hub)
    assert output.startswith(
        "DatasetSourceError dataset 'hf:someone/no-such-dataset': 'someone/no-such-dataset': "
        "it is neither a local path nor a dataset on the HuggingFace Hub"
    ), output


@pytest.mark.slow
def test_offline_mode_names_the_cache(tmp_path: Path) -> None:
    output, _ = _load_in_subprocess("hf:someone/not-cached", tmp_path, HF_HUB_OFFLINE="1")
    assert "HF_HUB_OFFLINE is set and it is not in the local datasets cache" in output, output
