"""Where samples come from: dataset files, folders and splits, Benchson instances, datasets' cache and the Hub
check, and rows made into samples. Each expected value is read off the input by hand."""

from __future__ import annotations

import hashlib
import http.server
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from _net import serve_in_thread
from pytest_extractbench.core.jsonio import JsonInputError
from pytest_extractbench.dataset.samples import (
    DatasetProblem,
    Sample,
    parse_rows,
    row_error,
    sample_from_row,
    subsample,
)
from pytest_extractbench.dataset.sources import (
    DataOptions,
    DatasetSourceError,
    _hub_offline,
    _spec_pick,
    _split_spec,
    benchson_row,
    check_hub_reachable,
    hub_endpoint,
    iter_hf_rows,
    load_dataset,
    load_source,
)


def _write(path: Path, *lines: object) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


# --- dataset sources ---


def test_the_dataset_options_default_to_every_sample_and_no_cache() -> None:
    # sample None is "every sample" (0 would be none of them); no cache folder unless one is named
    options = DataOptions()
    assert (options.sample, options.cache_dir, options.documents_cache) == (None, None, None)
    assert options.as_dict() == {
        "columns": {}, "sample": None, "seed": 42, "invalid_samples": "warn", "cache_dir": None, "input": "text",
    }  # fmt: skip


def test_without_a_spec_the_bundled_dataset_is_read() -> None:
    bundled = load_source()
    assert bundled.name == "bundled" and bundled.samples and bundled.samples[0].id == load_dataset().samples[0].id


def test_a_relative_dataset_path_without_a_base_is_read_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = {"id": "a", "text": "t", "schema": {"type": "object"}, "expected": {}}
    _write(tmp_path / "d.jsonl", row)
    monkeypatch.chdir(tmp_path)
    assert [s.id for s in load_source("d.jsonl").samples] == ["a"]
    assert [s.id for s in load_dataset("d.jsonl").samples] == ["a"]
    # an absolute path ignores the base folder
    assert [s.id for s in load_source(str(tmp_path / "d.jsonl"), base_dir=Path("/nonexistent")).samples] == ["a"]


def test_a_benchson_instance_without_a_schema_anywhere_is_missing_its_schema(tmp_path: Path) -> None:
    (tmp_path / "bench" / "test").mkdir(parents=True)
    (tmp_path / "bench" / "test" / "one.json").write_text(json.dumps({"data": "doc", "ground_truth": {}}))
    dataset = load_source(str(tmp_path / "bench"))
    assert [(p.field, p.message) for p in dataset.problems] == [("schema", "missing 'schema'")]


def test_a_benchson_shared_schema_must_be_finite_json(tmp_path: Path) -> None:
    (tmp_path / "bench" / "test").mkdir(parents=True)
    (tmp_path / "bench" / "schema.json").write_text('{"type": "object", "maximum": NaN}')
    (tmp_path / "bench" / "test" / "one.json").write_text(json.dumps({"data": "doc", "ground_truth": {}}))
    with pytest.raises(DatasetSourceError, match=r"schema\.json: line 1: "):
        load_source(str(tmp_path / "bench"))


def test_a_benchson_instance_of_another_shape_passes_through_to_the_row_checks() -> None:
    assert benchson_row({"id": "x", "text": "t"}, "stem", None) == {"id": "x", "text": "t"}
    assert benchson_row([1], "stem", None) == [1]
    assert benchson_row({"data": "doc"}, "stem", {"type": "object"}) == {
        "id": "stem", "text": "doc", "schema": {"type": "object"},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("rest", "expected"),
    [
        ("owner/name:test", ("owner/name", "test")),
        ("c:train", ("c:train", None)),  # one letter before the colon is a drive, not a name
        ("C:\\data\\x.jsonl", ("C:\\data\\x.jsonl", None)),
        ("data/x.jsonl", ("data/x.jsonl", None)),
        ("ab:", ("ab:", None)),
    ],
)
def test_a_split_is_named_after_the_last_colon(rest: str, expected: tuple[str, str | None]) -> None:
    assert _split_spec(rest) == expected


def test_how_a_command_line_names_one_split() -> None:
    assert _spec_pick("hf:owner/name:train", "train") == "--extractbench-dataset hf:owner/name:SPLIT"
    assert _spec_pick("data/x.jsonl", None) == "--extractbench-dataset hf:data/x.jsonl:SPLIT"
    # a split the dataset name does not end with is not cut off it
    assert _spec_pick("hf:data/x.jsonl", "train") == "--extractbench-dataset hf:data/x.jsonl:SPLIT"


def test_rows_of_several_splits_are_named_by_split_and_given_ids() -> None:
    datasets = pytest.importorskip("datasets")
    one = datasets.Dataset.from_list([{"text": "a"}, {"text": "b"}])
    assert list(iter_hf_rows(one)) == [("row 1", {"text": "a"}), ("row 2", {"text": "b"})]
    assert list(iter_hf_rows(datasets.DatasetDict({"train": one}))) == [
        ("row 1", {"text": "a"}), ("row 2", {"text": "b"}),
    ]  # fmt: skip
    both = datasets.DatasetDict({"train": one, "test": datasets.Dataset.from_list([{"text": "c", "id": "k"}])})
    assert list(iter_hf_rows(both)) == [
        ("train row 1", {"text": "a", "id": "train-1"}),
        ("train row 2", {"text": "b", "id": "train-2"}),
        ("test row 1", {"text": "c", "id": "k"}),
    ]


def test_a_local_file_through_datasets_uses_the_cache_folder_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never the network
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "d.jsonl", {"id": "a", "text": "t", "schema": {"type": "object"}, "expected": {}})
    cache = tmp_path / "cache"
    dataset = load_source("hf:d.jsonl", base_dir=tmp_path, cache_dir=cache)
    assert [s.id for s in dataset.samples] == ["a"]
    assert cache.is_dir() and any(cache.iterdir())  # datasets wrote its cache there
    assert not (tmp_path / "None").exists()


# --- rows -> samples ---


def test_a_problem_knows_its_line_number_only_when_its_location_ends_in_one() -> None:
    assert DatasetProblem("f", "line 12", "m").lineno == 12
    assert DatasetProblem("f", "test/a.json", "m").lineno == 0


def test_a_row_that_cannot_be_read_names_its_top_level_field() -> None:
    deep = row_error("f", "line 3", JsonInputError("nested too deeply", path="$.expected[2].x", sample_id="s"))
    assert (deep.location, deep.message, deep.sample_id, deep.field) == (
        "line 3", "$.expected[2].x: nested too deeply", "s", "expected",
    )  # fmt: skip
    bare = row_error("f", "line 1", JsonInputError("bad bytes"))
    assert (bare.message, bare.field) == ("bad bytes", None)
    assert row_error("f", "line 1", JsonInputError("odd", path="$.")).field is None  # an empty name is no field
    assert row_error("f", "line 1", JsonInputError("bad", column=4)).message == "bad (column 4)"
    decode = row_error("f", "line 2", json.JSONDecodeError("Expecting value", "{x", 1))
    assert (decode.message, decode.field) == ("not valid JSON: Expecting value (column 2)", None)
    other = row_error("f", "line 2", ValueError("z" * 500))
    assert other.message == "z" * 299 + "…"  # clipped to 300 characters, the last one the ellipsis


def test_samples_of_one_schema_share_one_checked_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 2**70}}}
    rows = [
        ("line 1", {"id": "a", "text": "t", "schema": json.dumps({"type": "object"}), "expected": {}}),
        ("line 2", {"id": "b", "text": "t", "schema": json.dumps({"type": "object"}), "expected": {}}),
        ("line 3", {"id": "c", "text": "t", "schema": {"type": "array"}, "expected": []}),
        ("line 4", {"id": "d", "text": "t", "schema": {"type": "array"}, "expected": []}),
        # an integer orjson cannot write: the schema is checked alone, not shared
        ("line 5", {"id": "e", "text": "t", "schema": schema, "expected": {"n": 1}}),
    ]
    a, b, c, d, e = parse_rows("d", "f", rows).samples
    assert a.schema is b.schema and c.schema is d.schema and a.schema == {"type": "object"}
    assert e.schema == schema


def test_a_row_is_checked_without_a_schema_cache_and_names_three_schema_errors() -> None:
    schema = {"type": 5, "minimum": "x", "maxLength": -1, "required": 3, "properties": 4}
    ok, _ = sample_from_row(
        {"id": "a", "text": "t", "schema": {"type": "object"}, "expected": {}}, source="f", location="line 1", index=1
    )
    assert ok is not None and ok.id == "a"
    bad, (problem,) = sample_from_row(
        {"id": "a", "text": "t", "schema": schema, "expected": {}}, source="f", location="line 1", index=1
    )
    assert bad is None and problem.message.startswith("not a valid JSON Schema: ")
    assert problem.message.count("; ") == 2  # the first three of its five errors


def test_a_gold_too_deep_or_not_finite_is_a_problem_of_its_field() -> None:
    deep: object = 1
    for _ in range(200):
        deep = [deep]
    base = {"id": "a", "text": "t", "schema": {}}
    for gold, words in ((deep, "nested too deeply (more than 128 levels)"), ({"x": math.nan}, "not finite")):
        sample, (problem,) = sample_from_row({**base, "expected": gold}, source="f", location="line 1", index=1)
        assert sample is None and problem.field == "expected" and words in problem.message


def test_what_an_extractor_sees_names_the_topic_or_none() -> None:
    assert Sample("a", "t", {}, {}, meta={"topic": "tax"}).view().topic == "tax"
    assert Sample("a", "t", {}, {}, meta={"topic": None}).view().topic == ""
    assert Sample("a", "t", {}, {}).view().topic == ""


def test_a_split_after_a_local_file_name_is_that_file_s_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    row = {"text": "t", "schema": {"type": "object"}, "expected": {}}
    _write(tmp_path / "d.jsonl", {**row, "id": "from-d"})
    _write(tmp_path / "d.jsonl:train", {**row, "id": "from-colon"})  # a file whose own name has the colon
    assert [s.id for s in load_source("hf:d.jsonl:train", base_dir=tmp_path).samples] == ["from-d"]
    # a file with no such split: datasets names only "train" for a single data file
    with pytest.raises(DatasetSourceError, match="could not load"):
        load_source("hf:d.jsonl:test", base_dir=tmp_path)


def test_documents_of_a_local_datasets_folder_are_read_from_that_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("datasets")
    from pdfs import make_pdf

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "doc.pdf").write_bytes(make_pdf(["Invoice 42"]))
    _write(folder / "data.jsonl", {"id": "a", "document": "doc.pdf", "schema": {"type": "object"}, "expected": {}})
    cache = tmp_path / "cache"
    dataset = load_source("hf:ds", base_dir=tmp_path, cache_dir=cache)
    assert dataset.problems == [] and "Invoice 42" in dataset.samples[0].text
    assert cache.is_dir() and any(cache.iterdir())


# --- the HuggingFace Hub's reachability (the loading itself runs in a fresh interpreter: test_loaders.py) ---


@pytest.mark.parametrize(
    ("values", "offline"),
    [
        ({"HF_HUB_OFFLINE": " Yes "}, True),
        ({"HF_DATASETS_OFFLINE": "on"}, True),
        ({"HF_HUB_OFFLINE": "1"}, True),
        ({"HF_HUB_OFFLINE": "TRUE"}, True),
        ({"HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "no"}, False),
        ({}, False),
    ],
)
def test_offline_mode_is_either_variable_set_to_a_yes(
    values: dict[str, str], offline: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    assert _hub_offline() is offline


def test_the_hub_endpoint_is_the_environment_s_without_a_trailing_slash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert hub_endpoint() == "https://huggingface.co"
    monkeypatch.setenv("HF_ENDPOINT", "http://mirror.local/hf//")
    assert hub_endpoint() == "http://mirror.local/hf"


class _Answers404(http.server.BaseHTTPRequestHandler):
    asked: list[str] = []

    def do_HEAD(self) -> None:  # noqa: N802 - the http.server name
        _Answers404.asked.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        """Quiet."""


def test_a_hub_that_answers_is_reachable_and_one_that_refuses_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers404)
    serve_in_thread(server)
    try:
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_port}/")
        assert check_hub_reachable("hf:x/y") is None  # an HTTP error is an answer
        assert _Answers404.asked == ["/api/datasets?limit=1"]
    finally:
        server.shutdown()
        server.server_close()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_port}")  # nothing listens there now
    with pytest.raises(DatasetSourceError, match=r"dataset 'hf:x/y': the HuggingFace Hub \(http://127\.0\.0\.1:"):
        check_hub_reachable("hf:x/y")


class _EmptyHub(http.server.BaseHTTPRequestHandler):
    """A Hub that knows no dataset: 404 for every request, each one noted."""

    asked: list[str] = []

    def _not_found(self) -> None:
        _EmptyHub.asked.append(f"{self.command} {self.path}")
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = _not_found

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def hub_at(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Callable[[str | None], None]]:
    """Point this process's huggingface_hub and datasets at an endpoint, or put them offline (None). They read
    HF_ENDPOINT and HF_HUB_OFFLINE once, at import, so their module constants are set here as well as the
    environment (test_loaders.py runs the same cases in a fresh interpreter instead)."""
    constants = pytest.importorskip("huggingface_hub.constants")
    config = pytest.importorskip("datasets.config")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr(config, "HF_DATASETS_CACHE", tmp_path / "hf" / "datasets")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))  # downloads too, not ~/.cache

    def point(endpoint: str | None) -> None:
        if endpoint is None:
            monkeypatch.setenv("HF_HUB_OFFLINE", "1")
            monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
            monkeypatch.setattr(config, "HF_HUB_OFFLINE", True)
            return
        for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(config, "HF_HUB_OFFLINE", False)
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        monkeypatch.setattr(constants, "ENDPOINT", endpoint)
        monkeypatch.setattr(
            constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}"
        )
        monkeypatch.setattr(config, "HF_ENDPOINT", endpoint)

    yield point


def test_a_dataset_the_hub_does_not_know_is_one_clear_error_after_a_quick_check(
    hub_at: Callable[[str | None], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EmptyHub)
    serve_in_thread(server)
    monkeypatch.chdir(tmp_path)  # no local folder of that name
    try:
        hub_at(f"http://127.0.0.1:{server.server_port}")
        _EmptyHub.asked.clear()
        with pytest.raises(DatasetSourceError) as raised:
            load_source("hf:someone/no-such-dataset")
    finally:
        server.shutdown()
        server.server_close()
    assert str(raised.value).startswith(
        "dataset 'hf:someone/no-such-dataset': 'someone/no-such-dataset': it is neither a local path nor a dataset "
        "on the HuggingFace Hub (check the name; a private or gated dataset needs HF_TOKEN in the environment): "
        "FileNotFoundError: "
    )
    assert _EmptyHub.asked[0] == "HEAD /api/datasets?limit=1"  # reachability first, then datasets' own requests


def test_offline_a_dataset_not_in_the_cache_names_the_cache(
    hub_at: Callable[[str | None], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    hub_at(None)
    with pytest.raises(DatasetSourceError) as raised:
        load_source("hf:someone/not-cached")
    assert str(raised.value).startswith(
        "dataset 'hf:someone/not-cached': 'someone/not-cached': HF_HUB_OFFLINE is set and it is not in the local "
        "datasets cache: "
    )


def test_a_local_folder_whose_name_holds_a_colon_is_that_folder_not_a_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never the network
    row = {"id": "a", "text": "t", "schema": {"type": "object"}, "expected": {}}
    datasets.Dataset.from_list([row]).save_to_disk(str(tmp_path / "saved:v1"))
    # "saved" does not exist, "saved:v1" does: the whole name is the folder, and no split is picked from it (the
    # folder holds one dataset, not splits)
    dataset = load_source("hf:saved:v1", base_dir=tmp_path)
    assert (dataset.name, [s.id for s in dataset.samples]) == ("saved:v1", ["a"])


class _OneDatasetHub(http.server.BaseHTTPRequestHandler):
    """A Hub holding one dataset, ``someone/data``: one file, ``data.jsonl``, at one commit. It answers what
    ``datasets`` asks for it (the repository's info, its file tree, each file's metadata and bytes) and 404 for
    anything else; ``data_status`` set to an error makes the data file's download fail with it."""

    COMMIT = "c" * 40
    ROWS = [
        {"id": "a", "body": "Ann", "schema": {"type": "object"}, "expected": {"name": "Ann"}},
        {"id": "b", "body": "Bo", "schema": {"type": "object"}, "expected": {"name": "Bo"}},
        # a document named by a path: nothing on the Hub is relative to a local folder, so it cannot be read
        {"id": "c", "document": "scan.pdf", "schema": {"type": "object"}, "expected": {"name": "Cy"}},
    ]
    FILES = {"data.jsonl": "".join(json.dumps(row) + "\n" for row in ROWS).encode()}
    data_status = 200
    asked: list[str] = []

    def _send(self, status: int, body: bytes = b"", headers: tuple[tuple[str, str], ...] = ()) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _answer(self) -> None:
        _OneDatasetHub.asked.append(f"{self.command} {self.path}")
        path = self.path.split("?")[0]
        repo = "/datasets/someone/data/resolve/"
        if path.startswith(repo):
            name = path[len(repo) :].split("/", 1)[1]
            if name not in self.FILES:
                return self._send(404, headers=(("X-Error-Code", "EntryNotFound"), ("X-Repo-Commit", self.COMMIT)))
            if self.command == "GET" and self.data_status != 200:
                return self._send(self.data_status, b"down")
            body = self.FILES[name]
            etag = '"' + hashlib.sha1(body).hexdigest() + '"'
            return self._send(200, body, (("ETag", etag), ("X-Repo-Commit", self.COMMIT)))
        if path == "/api/datasets/someone/data" or path.startswith("/api/datasets/someone/data/revision/"):
            info = {"id": "someone/data", "sha": self.COMMIT, "siblings": [{"rfilename": n} for n in self.FILES]}
            return self._send(200, json.dumps(info).encode(), (("Content-Type", "application/json"),))
        if path.startswith("/api/datasets/someone/data/tree/"):
            tree = [
                {"type": "file", "path": n, "size": len(b), "oid": hashlib.sha1(b).hexdigest()}
                for n, b in self.FILES.items()
            ]
            return self._send(200, json.dumps(tree).encode(), (("Content-Type", "application/json"),))
        return self._send(404)

    do_GET = do_HEAD = _answer

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def one_dataset_hub(
    hub_at: Callable[[str | None], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """This process's huggingface_hub and datasets pointed at :class:`_OneDatasetHub` (answering normally)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _OneDatasetHub)
    serve_in_thread(server)
    monkeypatch.chdir(tmp_path)  # no local folder of that name
    monkeypatch.setattr(_OneDatasetHub, "data_status", 200)
    _OneDatasetHub.asked.clear()
    try:
        hub_at(f"http://127.0.0.1:{server.server_port}")
        yield
    finally:
        server.shutdown()
        server.server_close()


def test_a_dataset_downloaded_from_the_hub_is_read_with_the_columns_asked_for(
    one_dataset_hub: None, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    dataset = load_source("hf:someone/data", columns={"text": "body"}, cache_dir=cache)
    assert (dataset.name, dataset.source) == ("someone/data", "hf:someone/data")
    # the rows in file order, their text read from the "body" column
    assert [(s.id, s.text, s.expected) for s in dataset.samples] == [
        ("a", "Ann", {"name": "Ann"}),
        ("b", "Bo", {"name": "Bo"}),
    ]
    # row 3's document is a path, and a Hub dataset has no folder for it to be relative to
    assert [(p.location, p.sample_id, p.field, p.message) for p in dataset.problems] == [
        (
            "row 3",
            "c",
            "document",
            "document 'scan.pdf': a path needs a dataset file or folder to be relative to (a dataset from the Hub "
            "gives its documents' bytes)",
        )
    ]
    assert _OneDatasetHub.asked[0] == "HEAD /api/datasets?limit=1"  # reachability first
    assert f"GET /datasets/someone/data/resolve/{_OneDatasetHub.COMMIT}/data.jsonl" in _OneDatasetHub.asked
    assert cache.is_dir() and any(cache.iterdir())  # downloaded into the cache folder asked for


def test_one_split_of_a_hub_dataset_is_read_by_its_name(one_dataset_hub: None, tmp_path: Path) -> None:
    dataset = load_source("hf:someone/data:train", columns={"text": "body"}, cache_dir=tmp_path / "cache")
    assert dataset.name == "someone/data"  # the split is not part of the name
    assert [s.id for s in dataset.samples] == ["a", "b"]


def test_a_split_the_hub_dataset_lacks_could_not_be_loaded_as_asked(one_dataset_hub: None, tmp_path: Path) -> None:
    with pytest.raises(DatasetSourceError) as raised:
        load_source("hf:someone/data:nosuch", cache_dir=tmp_path / "cache")
    assert str(raised.value).startswith(
        "dataset 'hf:someone/data:nosuch': 'someone/data': it could not be loaded as asked: ValueError: "
    )


def test_a_hub_download_that_fails_is_not_called_a_missing_dataset(
    one_dataset_hub: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_OneDatasetHub, "data_status", 500)
    with pytest.raises(DatasetSourceError) as raised:
        load_source("hf:someone/data", cache_dir=tmp_path / "cache")
    message = str(raised.value)
    assert message.startswith("dataset 'hf:someone/data': 'someone/data': it could not be downloaded: ")
    assert "500" in message  # the server's answer, as the download library words it


def test_a_sample_that_is_every_row_or_more_keeps_the_dataset_whole() -> None:
    rows = [Sample(str(i), "t", {}, {}) for i in range(5)]
    assert subsample(rows, 5, 1) == rows and subsample(rows, 9, 1) == rows and subsample(rows, None, 1) == rows
    assert len(subsample(rows, 4, 1)) == 4


def test_schemas_no_cache_key_can_be_made_for_are_each_checked_alone() -> None:
    # orjson cannot write integers past 64 bits: neither schema has a key, and the second is not the first's
    first = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 2**70}}}
    second = {"type": "object", "properties": {"n": {"type": "integer", "minimum": -(2**70)}}}
    rows = [
        ("line 1", {"id": "a", "text": "t", "schema": first, "expected": {"n": 1}}),
        ("line 2", {"id": "b", "text": "t", "schema": second, "expected": {"n": 1}}),
    ]
    a, b = parse_rows("d", "f", rows).samples
    assert (a.schema, b.schema) == (first, second)
