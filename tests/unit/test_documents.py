"""Documents as inputs: PDFs become page text (cached by content), documents join the sample's identity, and every
bad document is a problem naming the file, the row and the sample while the other rows load."""

from __future__ import annotations

import base64
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from pdfs import make_pdf

from pytest_extractbench.dataset import documents
from pytest_extractbench.dataset.documents import DocumentReader, page_header
from pytest_extractbench.dataset.identity import sample_hash
from pytest_extractbench.dataset.samples import parse_rows
from pytest_extractbench.dataset.sources import load_source
from pytest_extractbench.live.context import IMAGE_TOKEN_SIDE, IMAGE_TOKENS_UNKNOWN, image_tokens, prompt_token_bound

pytest.importorskip("pypdfium2")
Image = pytest.importorskip("PIL.Image")

SCHEMA = {"type": "object", "properties": {"invoice": {"type": "string"}, "total": {"type": "number"}}}
GOLD = {"invoice": "INV-7", "total": 12.5}
INVOICE = ["Invoice INV-7\nFrom: Acme (Berlin)", "Total: 12.50 EUR"]


def _row(sample_id: str, document: Any, **extra: Any) -> dict[str, Any]:
    return {"id": sample_id, "document": document, "schema": SCHEMA, "expected": GOLD, **extra}


def _load(folder: Path, rows: list[dict[str, Any]], mode: str = "text", cache: Path | None = None) -> Any:
    path = folder / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return load_source(str(path), documents=DocumentReader(cache_dir=cache, input_mode=mode))


def _png(width: int, height: int, mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, (width, height)).save(out, format="PNG")
    return out.getvalue()


# -- PDFs as text -------------------------------------------------------------------------------------------


def test_a_pdf_becomes_page_text_with_the_page_breaks_and_its_page_count_in_the_metadata(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "inv.pdf").write_bytes(make_pdf(INVOICE))
    dataset = _load(tmp_path, [_row("inv", "docs/inv.pdf")])
    assert dataset.problems == []
    [sample] = dataset.samples
    assert sample.text == (
        f"{page_header(1, 2)}\nInvoice INV-7\nFrom: Acme (Berlin)\n\n{page_header(2, 2)}\nTotal: 12.50 EUR"
    )
    assert sample.meta["document"]["pages"] == 2 and sample.meta["document"]["kind"] == "pdf"
    assert sample.document is not None and sample.document.name == "docs/inv.pdf"


def test_page_text_is_cached_by_content_hash(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (tmp_path / "a.pdf").write_bytes(make_pdf(INVOICE))
    first = _load(tmp_path, [_row("a", "a.pdf")], cache=cache).samples[0]
    [entry] = cache.glob("*.text.json")
    assert entry.name == f"{first.document.sha256}.text.json"
    # the cache answers (not the PDF): a changed entry shows, under another file name with the same bytes too
    data = json.loads(entry.read_text())
    data["pages"] = ["from the cache"]
    entry.write_text(json.dumps(data))
    (tmp_path / "copy.pdf").write_bytes((tmp_path / "a.pdf").read_bytes())
    again = _load(tmp_path, [_row("b", "copy.pdf")], cache=cache).samples[0]
    assert again.text == f"{page_header(1, 1)}\nfrom the cache"


def test_the_document_joins_the_sample_identity_even_beside_given_text(tmp_path: Path) -> None:
    (tmp_path / "a.pdf").write_bytes(make_pdf(INVOICE))
    before = _load(tmp_path, [_row("a", "a.pdf", text="given text")]).samples[0]
    assert before.text == "given text"  # text given beside a document is what the model reads
    (tmp_path / "a.pdf").write_bytes(make_pdf(["Invoice INV-8", "Total: 99.00 EUR"]))
    after = _load(tmp_path, [_row("a", "a.pdf", text="given text")]).samples[0]
    assert sample_hash(before) != sample_hash(after)
    plain = _load(tmp_path, [{"id": "a", "text": "given text", "schema": SCHEMA, "expected": GOLD}]).samples[0]
    assert sample_hash(plain) not in (sample_hash(before), sample_hash(after))


def test_bytes_and_huggingface_image_columns_are_documents(tmp_path: Path) -> None:
    reader = DocumentReader(input_mode="image")
    rows = [
        ("row 1", _row("raw", make_pdf(INVOICE))),
        ("row 2", _row("hf", {"bytes": _png(40, 30), "path": "scan.png"}, text="Invoice INV-7")),
    ]
    dataset = parse_rows("mem", "mem", rows, documents=reader)
    assert dataset.problems == []
    raw, hf = dataset.samples
    assert raw.meta["document"]["pages"] == 2 and "Total: 12.50 EUR" in raw.text
    assert hf.meta["document"]["name"] == "scan.png" and (hf.document.width, hf.document.height) == (40, 30)


def test_a_parquet_binary_column_holds_the_pdf(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {
            "id": ["inv"],
            "document": pa.array([make_pdf(INVOICE)], pa.binary()),
            "schema": [json.dumps(SCHEMA)],
            "expected": [json.dumps(GOLD)],
        }
    )
    pq.write_table(table, tmp_path / "data.parquet")
    dataset = load_source(str(tmp_path / "data.parquet"))
    assert dataset.problems == [] and dataset.samples[0].meta["document"]["pages"] == 2
    assert "Invoice INV-7" in dataset.samples[0].text


@pytest.mark.slow
def test_a_huggingface_image_column_through_datasets(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "document": datasets.Image(),
            "text": datasets.Value("string"),
            "schema": datasets.Value("string"),
            "expected": datasets.Value("string"),
        }
    )
    datasets.Dataset.from_dict(
        {
            "id": ["scan"],
            "document": [{"bytes": _png(40, 30), "path": "scan.png"}],
            "text": ["Invoice INV-7"],
            "schema": [json.dumps(SCHEMA)],
            "expected": [json.dumps(GOLD)],
        },
        features=features,
    ).to_parquet(tmp_path / "d.parquet")
    dataset = load_source(f"hf:{tmp_path / 'd.parquet'}", documents=DocumentReader(input_mode="image"))
    assert dataset.problems == []
    assert dataset.samples[0].meta["document"] | {"sha256": "-"} == {
        "name": "scan.png",
        "kind": "image",
        "pages": 1,
        "bytes": len(_png(40, 30)),
        "sha256": "-",
        "width": 40,
        "height": 30,
    }


def test_an_image_without_text_is_a_problem_in_text_mode_only(tmp_path: Path) -> None:
    (tmp_path / "scan.png").write_bytes(_png(40, 30))
    in_text = _load(tmp_path, [_row("scan", "scan.png")])
    assert in_text.samples == []
    assert "is an image, which has no text" in str(in_text.problems[0])
    assert "--extractbench-input image" in str(in_text.problems[0])
    in_image = _load(tmp_path, [_row("scan", "scan.png")], mode="image")
    assert [s.id for s in in_image.samples] == ["scan"] and in_image.problems == []


# -- bad documents: one problem each, naming file, row and sample; the good row still loads ----------------------


def _problem(tmp_path: Path, document: Any, mode: str = "text", write: dict[str, bytes] | None = None) -> str:
    for name, data in (write or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    (tmp_path / "good.pdf").write_bytes(make_pdf(INVOICE))
    dataset = _load(tmp_path, [_row("good", "good.pdf"), _row("bad", document)], mode=mode)
    assert [s.id for s in dataset.samples] == ["good"]
    [problem] = dataset.problems
    text = str(problem)
    assert text.startswith(f"{tmp_path / 'data.jsonl'}:line 2, sample 'bad', field 'document': "), text
    return text


def test_encrypted_pdf(tmp_path: Path) -> None:
    text = _problem(tmp_path, "locked.pdf", write={"locked.pdf": make_pdf(INVOICE, encrypted=True)})
    assert "'locked.pdf' is an encrypted (password-protected) PDF" in text


def test_corrupt_pdf(tmp_path: Path) -> None:
    text = _problem(tmp_path, "torn.pdf", write={"torn.pdf": make_pdf(INVOICE)[:300]})
    assert "'torn.pdf' is not a readable PDF (corrupt or truncated)" in text


def test_empty_file(tmp_path: Path) -> None:
    text = _problem(tmp_path, "empty.pdf", write={"empty.pdf": b""})
    assert "'empty.pdf' is neither a PDF nor a PNG, JPEG, GIF or WebP image" in text


def test_pdf_with_no_pages(tmp_path: Path) -> None:
    text = _problem(tmp_path, "none.pdf", write={"none.pdf": make_pdf([])})
    assert "'none.pdf' is a PDF with no pages" in text


def test_pdf_with_no_text_in_text_mode(tmp_path: Path) -> None:
    text = _problem(tmp_path, "blank.pdf", write={"blank.pdf": make_pdf(["", " "])})
    assert "'blank.pdf': its 2 page(s) hold no text" in text and "--extractbench-input image" in text


def test_too_many_pages(tmp_path: Path) -> None:
    pages = [f"page {i}" for i in range(documents.MAX_PAGES + 1)]
    text = _problem(tmp_path, "long.pdf", write={"long.pdf": make_pdf(pages)})
    assert f"'long.pdf' has {documents.MAX_PAGES + 1} pages, more than the {documents.MAX_PAGES} read" in text


def test_a_file_past_the_byte_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "MAX_DOCUMENT_BYTES", 1000)
    text = _problem(tmp_path, "big.pdf", write={"big.pdf": make_pdf(INVOICE) + b"%" * 2000})
    assert "'big.pdf'" in text and "larger than 1,000 bytes" in text


def test_an_image_past_the_pixel_limit(tmp_path: Path) -> None:
    side = int(documents.MAX_IMAGE_PIXELS**0.5) + 100  # bilevel: a few kilobytes of PNG, 40+ million pixels
    text = _problem(tmp_path, "huge.png", mode="image", write={"huge.png": _png(side, side, "1")})
    assert f"'huge.png' is a {side} x {side} image, more than the 40,000,000 pixels" in text


def test_a_decompression_bomb_is_refused_before_decoding(tmp_path: Path) -> None:
    bomb = _png(20000, 10000, "1")  # 200 million pixels in ~25 KB: past Pillow's own guard (2 x 89 million)
    assert len(bomb) < 200_000
    text = _problem(tmp_path, "bomb.png", mode="image", write={"bomb.png": bomb})
    assert "'bomb.png' is refused as a decompression bomb" in text


def test_a_corrupt_image(tmp_path: Path) -> None:
    text = _problem(tmp_path, "bad.png", mode="image", write={"bad.png": _png(40, 30)[:60]})
    assert "'bad.png' is not a readable image" in text


@pytest.mark.parametrize("escape", ["../outside.pdf", "sub/../../outside.pdf", "/etc/passwd"])
def test_a_path_escaping_the_dataset_folder(tmp_path: Path, escape: str) -> None:
    folder = tmp_path / "dataset"
    folder.mkdir()
    (tmp_path / "outside.pdf").write_bytes(make_pdf(INVOICE))
    text = _problem(folder, escape)
    assert f"document {escape!r} is outside the dataset's folder" in text


def test_a_symlink_out_of_the_dataset_folder(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    folder.mkdir()
    (tmp_path / "outside.pdf").write_bytes(make_pdf(INVOICE))
    os.symlink(tmp_path / "outside.pdf", folder / "link.pdf")
    assert "document 'link.pdf' is outside the dataset's folder" in _problem(folder, "link.pdf")


def test_a_missing_file(tmp_path: Path) -> None:
    assert "document 'gone.pdf': no such file" in _problem(tmp_path, "gone.pdf")


def test_a_folder_named_as_a_document(tmp_path: Path) -> None:
    (tmp_path / "folder.pdf").mkdir()
    text = _problem(tmp_path, "folder.pdf")
    assert "document 'folder.pdf':" in text and "a directory" in text


def test_not_a_document_type(tmp_path: Path) -> None:
    text = _problem(tmp_path, "notes.txt", write={"notes.txt": b"just text"})
    assert "'notes.txt' is neither a PDF nor a PNG, JPEG, GIF or WebP image" in text


def test_a_document_value_of_the_wrong_type(tmp_path: Path) -> None:
    assert "'document' must be a file path or a file's bytes, got int" in _problem(tmp_path, 42)


def test_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    """A row given in memory (Python API, Parquet via datasets) can hold a name decoded with surrogateescape."""
    reader = DocumentReader(base_dir=tmp_path)
    name = b"caf\xe9.pdf".decode("utf-8", "surrogateescape")
    (tmp_path / os.fsencode(name).decode("latin-1")).write_bytes(make_pdf(INVOICE))
    dataset = parse_rows(
        "mem", "mem", [("row 1", _row("bad", name)), ("row 2", _row("good", make_pdf(INVOICE)))], documents=reader
    )
    assert [s.id for s in dataset.samples] == ["good"]
    assert str(dataset.problems[0]) == (
        "mem:row 1, sample 'bad', field 'document': document 'caf\\udce9.pdf': the file name is not valid UTF-8"
    )
    # from a JSONL file (a "\udce9" escape) the same: a problem, and the rest loads
    path = tmp_path / "data.jsonl"
    path.write_text(
        '{"id": "x", "document": "caf\\udce9.pdf", "schema": {}, "expected": {}}\n'
        + json.dumps(_row("good", "good.pdf"))
        + "\n",
        encoding="utf-8",
    )
    (tmp_path / "good.pdf").write_bytes(make_pdf(INVOICE))
    loaded = load_source(str(path))
    assert [s.id for s in loaded.samples] == ["good"]
    assert str(loaded.problems[0]).endswith("document 'caf\\udce9.pdf': the file name is not valid UTF-8")


def test_without_the_extra_the_message_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # import fails as when the package is not installed
    (tmp_path / "a.pdf").write_bytes(make_pdf(INVOICE))
    dataset = _load(tmp_path, [_row("a", "a.pdf"), {"id": "t", "text": "INV-7", "schema": SCHEMA, "expected": GOLD}])
    assert [s.id for s in dataset.samples] == ["t"]  # rows without a PDF still load
    assert str(dataset.problems[0]).endswith(
        "document 'a.pdf' (a PDF) needs pypdfium2, an optional extra: pip install 'pytest-extractbench[pdf]'"
    )


# -- images in requests: token accounting -----------------------------------------------------------------------


def test_image_parts_count_patch_tokens_not_their_base64_bytes() -> None:
    png = _png(1600, 1000)
    url = documents.data_url("image/png", png)
    expected = -(-1600 // IMAGE_TOKEN_SIDE) * -(-1000 // IMAGE_TOKEN_SIDE) + 4
    assert image_tokens(url) == expected
    message = {
        "role": "user",
        "content": [{"type": "text", "text": "abc"}, {"type": "image_url", "image_url": {"url": url}}],
    }
    text_only = prompt_token_bound([{"role": "user", "content": "abc"}])
    assert prompt_token_bound([message]) - text_only == expected + len(json.dumps({"type": "text", "text": "abc"})) - 3
    jpeg = io.BytesIO()
    Image.new("RGB", (300, 200)).save(jpeg, format="JPEG")
    assert image_tokens("data:image/jpeg;base64," + base64.b64encode(jpeg.getvalue()).decode()) == 11 * 8 + 4
    assert image_tokens("https://example.com/page.png") == IMAGE_TOKENS_UNKNOWN


def test_queued_image_requests_hold_no_image_until_they_go_out(tmp_path: Path) -> None:
    """Every request of a run is queued at once: one that carries page images builds them again when it is sent,
    so a queue of thousands holds none; text requests keep their messages."""
    from pytest_extractbench.live.endpoints import Route
    from pytest_extractbench.live.options import LiveOptions
    from pytest_extractbench.live.pipeline import LiveSource, load_templates
    from pytest_extractbench.live.prompts import sample_messages
    from pytest_extractbench.live.schedule import prompt_chars

    (tmp_path / "scan.png").write_bytes(_png(400, 300))
    rows = [_row(f"scan{i}", "scan.png", text="Invoice INV-7") for i in range(3)]
    rows.append({"id": "plain", "text": "Invoice INV-7", "schema": SCHEMA, "expected": GOLD})
    dataset = _load(tmp_path, rows, mode="image", cache=tmp_path / "cache")
    assert dataset.problems == []
    live = LiveOptions(base_urls=("http://127.0.0.1:9/v1",))
    templates = load_templates(live, tmp_path, "image")
    source = LiveSource(
        live,
        lambda: {"m": Route(live.base_urls, "m")},
        run_dir=tmp_path / "run",
        cache_dir=None,
        concurrency=1,
        api_key=None,
        templates=templates,
    )
    try:
        requests = {sample.id: (source._admit("m", sample), sample) for sample in dataset.samples}
    finally:
        source.close()
    for sample_id, (request, sample) in requests.items():
        assert request is not None
        built = sample_messages(sample, templates)
        assert request.messages == built and request.chars == prompt_chars(built)
        if sample_id == "plain":
            assert request.held == built and request.image_tokens == 0  # nothing to rebuild
        else:
            assert request.held is None
            # the prompt budget weighs the page: 400 x 300 pixels in 28-pixel patches, and its markers
            assert request.image_tokens == image_tokens(built[-1]["content"][1]["image_url"]["url"]) == 15 * 11 + 4
            assert request.messages[-1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
