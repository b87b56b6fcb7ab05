"""Documents as inputs: a row's ``document`` (a PDF or an image) read into page text, page images and a content hash.

A row may give ``document`` instead of (or beside) ``text``: a path relative to the dataset file (or folder), a
file's bytes, or a HuggingFace ``Image``/``Pdf`` column's ``{"bytes", "path"}``. PDFs become text with pypdfium2
(the ``pdf`` extra), one ``--- page N of M ---`` line before each page so the prompt keeps the page breaks; the text
is cached by the file's sha256 under ``.extractbench/cache/documents/``. For vision models (``--extractbench-input
image|both``) an image goes as it is and a PDF's pages are rendered to PNG (the ``vision`` extra: Pillow), cached
the same way. Every way a document can be bad (missing, outside the dataset folder, not UTF-8 named, corrupt,
encrypted, empty, too many pages, too large, a decompression bomb) raises :class:`DocumentError` with a sentence
the loader turns into a problem naming the file, row and sample; nothing here imports pytest.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import io
import json
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import files, userfiles
from ..core.errors import ExtractbenchError

__all__ = [
    "INPUT_MODES",
    "MAX_DOCUMENT_BYTES",
    "MAX_IMAGE_PIXELS",
    "MAX_PAGES",
    "Document",
    "DocumentError",
    "DocumentReader",
    "data_url",
    "page_header",
]

INPUT_MODES = ("text", "image", "both")
MAX_PAGES = 100
"""Pages read from one PDF; a longer one is an input problem (its prompt would not fit a model's context anyway)."""
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""Bytes read from one document file."""
MAX_IMAGE_PIXELS = 40_000_000
"""Pixels of one image (about 6300 x 6300); Pillow's own decompression-bomb guard stops at 2 x 89 million."""
RENDER_DPI = 110
RENDER_MAX_SIDE = 1600  # pixels of a rendered page's longer side: legible print, ~2 k image tokens at most
PDF_EXTRA = "pip install 'pytest-extractbench[pdf]'"
VISION_EXTRA = "pip install 'pytest-extractbench[vision]'"
_CACHE_VERSION = 1
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


class DocumentError(ExtractbenchError, ValueError):
    """A document that cannot be used; the message says why (the loader adds the file, row and sample)."""


def page_header(number: int, total: int) -> str:
    """The line that opens each page of a PDF's text."""
    return f"--- page {number} of {total} ---"


def data_url(mime: str, data: bytes) -> str:
    """``data:<mime>;base64,...``: how OpenAI, vLLM and llama-server accept an image inside a request."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _require(module: str, extra: str, what: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise DocumentError(f"{what} needs {module.split('.')[0]}, an optional extra: {extra}") from None


def _sniff(data: bytes) -> tuple[str, str] | None:
    """(kind, MIME type) from the first bytes: PDFs may have junk before ``%PDF-`` (readers allow 1 KB)."""
    if b"%PDF-" in data[:1024]:
        return "pdf", "application/pdf"
    for magic, mime in _IMAGE_MAGIC:
        if data.startswith(magic):
            return "image", mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image", "image/webp"
    return None


@dataclass(frozen=True, eq=False)
class Document:
    """One document of a sample: what it is, its content hash, and where its bytes are."""

    name: str  # as the row gave it (a path relative to the dataset), or the column's file name
    kind: str  # "pdf" or "image"
    mime: str
    sha256: str
    size: int
    pages: int = 1
    path: Path | None = None  # on disk; None when the bytes came in the row
    data: bytes | None = field(default=None, repr=False)
    cache_dir: Path | None = None
    width: int | None = None  # of an image document
    height: int | None = None

    def read(self) -> bytes:
        """The document's bytes (read again from disk; a file changed since loading is an error)."""
        if self.data is not None:
            return self.data
        assert self.path is not None
        data = userfiles.read_bytes(self.path, MAX_DOCUMENT_BYTES)
        if hashlib.sha256(data).hexdigest() != self.sha256:
            raise DocumentError(f"document {self.name!r} changed on disk since the dataset was loaded")
        return data

    def images(self) -> list[tuple[str, bytes]]:
        """``(MIME type, bytes)`` of each image a vision model gets: the image itself, or each PDF page as PNG."""
        if self.kind == "image":
            return [(self.mime, self.read())]
        return [("image/png", png) for png in render_pages(self.read(), self.sha256, self.cache_dir)]

    def as_meta(self) -> dict[str, Any]:
        """What a sample's metadata (and so its record) says of the document."""
        meta: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "pages": self.pages,
            "bytes": self.size,
            "sha256": self.sha256,
        }
        if self.width is not None:
            meta.update(width=self.width, height=self.height)
        return meta


@dataclass(frozen=True)
class DocumentReader:
    """How a dataset's documents are read: relative to ``base_dir`` (None: only bytes are allowed), with page text
    and renders cached in ``cache_dir``, and checked for what ``input_mode`` will send."""

    base_dir: Path | None = None
    cache_dir: Path | None = None
    input_mode: str = "text"

    def load(self, value: Any) -> tuple[Document, str | None]:
        """The document and its text (None for an image); :class:`DocumentError` when it cannot be used."""
        name, path, data = self._bytes(value)
        found = _sniff(data)
        if found is None:
            raise DocumentError(f"document {name!r} is neither a PDF nor a PNG, JPEG, GIF or WebP image")
        kind, mime = found
        sha = hashlib.sha256(data).hexdigest()
        keep = data if path is None else None
        if kind == "image":
            width, height = check_image(data, name) if self.input_mode != "text" else (None, None)
            return Document(name, kind, mime, sha, len(data), 1, path, keep, self.cache_dir, width, height), None
        pages = pdf_pages(data, sha, self.cache_dir, name)
        if self.input_mode != "text":
            render_pages(data, sha, self.cache_dir, name)  # fails here, as an input problem, rather than mid-run
        text = "\n\n".join(f"{page_header(i, len(pages))}\n{page}" for i, page in enumerate(pages, start=1))
        if self.input_mode == "text" and not any(page.strip() for page in pages):
            raise DocumentError(
                f"document {name!r}: its {len(pages)} page(s) hold no text (a scan? it needs OCR, or "
                "a vision model with --extractbench-input image)"
            )
        return Document(name, kind, mime, sha, len(data), len(pages), path, keep, self.cache_dir), text

    def _bytes(self, value: Any) -> tuple[str, Path | None, bytes]:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return "(bytes in the row)", None, bytes(value)
        if isinstance(value, dict):  # a HuggingFace Image / Pdf column: {"bytes": ..., "path": ...}
            raw, given = value.get("bytes"), value.get("path")
            if isinstance(raw, (bytes, bytearray, memoryview)):
                return (str(given) if given else "(bytes in the row)"), None, bytes(raw)
            if isinstance(given, str):
                return self._file(given)
            raise DocumentError("'document' is an object without 'bytes' or 'path'")
        if isinstance(value, str):
            return self._file(value)
        raise DocumentError(f"'document' must be a file path or a file's bytes, got {type(value).__name__}")

    def _file(self, given: str) -> tuple[str, Path, bytes]:
        shown = ascii(given) if _not_utf8(given) else repr(given)
        if _not_utf8(given):
            raise DocumentError(f"document {shown}: the file name is not valid UTF-8")
        if not given.strip() or "\x00" in given:
            raise DocumentError(f"document {shown}: not a file name")
        if self.base_dir is None:
            raise DocumentError(
                f"document {shown}: a path needs a dataset file or folder to be relative to "
                "(a dataset from the Hub gives its documents' bytes)"
            )
        base = self.base_dir.resolve()
        path = (base / given).resolve()
        if not path.is_relative_to(base):  # "../x.pdf", "/etc/passwd", a symlink that leads out
            raise DocumentError(
                f"document {shown} is outside the dataset's folder {str(base)!r}; give a path inside it"
            )
        try:
            data = userfiles.read_bytes(path, MAX_DOCUMENT_BYTES)
        except FileNotFoundError:
            raise DocumentError(f"document {shown}: no such file {str(path)!r}") from None
        except userfiles.NotAFile as exc:
            raise DocumentError(f"document {shown}: {exc}") from None
        except OSError as exc:
            raise DocumentError(f"document {shown}: cannot be read: {exc.strerror or exc}") from None
        return given, path, data


def _not_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: bytes a file system name held that are not UTF-8
        return True
    return False


# -- PDFs ---------------------------------------------------------------------------------------------------


def _cache_file(cache_dir: Path | None, name: str) -> Path | None:
    return None if cache_dir is None else cache_dir / name


def _open_pdf(data: bytes, name: str, extra: str = PDF_EXTRA) -> Any:
    pdfium = _require("pypdfium2", extra, f"document {name!r} (a PDF)")
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code == 4 or "password" in str(exc).lower():  # FPDF_ERR_PASSWORD
            raise DocumentError(f"document {name!r} is an encrypted (password-protected) PDF") from None
        if _no_pages(data):  # PDFium refuses an empty page tree as a format error
            raise DocumentError(f"document {name!r} is a PDF with no pages") from None
        raise DocumentError(f"document {name!r} is not a readable PDF (corrupt or truncated): {exc}") from None
    pages = len(pdf)
    if pages == 0:
        pdf.close()
        raise DocumentError(f"document {name!r} is a PDF with no pages")
    if pages > MAX_PAGES:
        pdf.close()
        raise DocumentError(f"document {name!r} has {pages} pages, more than the {MAX_PAGES} read from one PDF")
    return pdf


def _no_pages(data: bytes) -> bool:
    """True for a PDF whose page tree says it has no pages and that holds no page object."""
    return re.search(rb"/Count\s+0\b", data) is not None and re.search(rb"/Type\s*/Page\b(?!s)", data) is None


def pdf_pages(data: bytes, sha: str, cache_dir: Path | None, name: str = "(bytes)") -> list[str]:
    """The text of each page (pypdfium2), from the cache when this content was read before."""
    cached = _cache_file(cache_dir, f"{sha}.text.json")
    if cached is not None and cached.is_file():
        try:
            entry = json.loads(cached.read_text(encoding="utf-8"))
            if entry.get("version") == _CACHE_VERSION and isinstance(entry.get("pages"), list):
                return [str(page) for page in entry["pages"]]
        except (OSError, ValueError):
            pass  # unreadable: read the PDF again and rewrite it
    pdf = _open_pdf(data, name)
    try:
        pages = []
        for page in pdf:
            textpage = page.get_textpage()
            pages.append(textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n").strip())
            textpage.close()
            page.close()
    except Exception as exc:  # noqa: BLE001 - pdfium raises its own errors for damaged page content
        raise DocumentError(f"document {name!r}: a page cannot be read: {exc}") from None
    finally:
        pdf.close()
    if cached is not None:
        _store(cached, json.dumps({"version": _CACHE_VERSION, "extractor": "pypdfium2", "pages": pages}).encode())
    return pages


def _store(path: Path, data: bytes) -> None:
    """Write a cache entry; a cache that cannot be written only costs the work again next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with files.atomic(path) as handle:
            handle.write(data)
    except (OSError, files.OutputWriteError):
        pass


def render_pages(data: bytes, sha: str, cache_dir: Path | None, name: str = "(bytes)") -> list[bytes]:
    """Each page as a PNG of at most :data:`RENDER_MAX_SIDE` pixels a side, from the cache when rendered before."""
    tag = f"{sha}.{RENDER_DPI}dpi{RENDER_MAX_SIDE}"
    index = _cache_file(cache_dir, f"{tag}.pages")
    if index is not None and index.is_file():
        try:
            count = int(index.read_text(encoding="ascii"))
            return [(index.parent / f"{tag}.p{i}.png").read_bytes() for i in range(1, count + 1)]
        except (OSError, ValueError):
            pass
    _require("PIL.Image", VISION_EXTRA, f"document {name!r} as page images")
    pdf = _open_pdf(data, name, VISION_EXTRA)
    pngs = []
    try:
        for page in pdf:
            width, height = page.get_size()
            scale = min(RENDER_DPI / 72, RENDER_MAX_SIDE / max(width, height, 1))
            image = page.render(scale=scale).to_pil()
            out = io.BytesIO()
            image.save(out, format="PNG", optimize=True)
            pngs.append(out.getvalue())
            page.close()
    except DocumentError:
        raise
    except Exception as exc:  # noqa: BLE001 - a page pdfium cannot render
        raise DocumentError(f"document {name!r}: a page cannot be rendered: {exc}") from None
    finally:
        pdf.close()
    if index is not None:
        for i, png in enumerate(pngs, start=1):
            _store(index.parent / f"{tag}.p{i}.png", png)
        _store(index, str(len(pngs)).encode("ascii"))
    return pngs


# -- images -------------------------------------------------------------------------------------------------


def check_image(data: bytes, name: str) -> tuple[int, int]:
    """(width, height) of an image that Pillow can read and that is within :data:`MAX_IMAGE_PIXELS`.

    The size comes from the header, before any pixel is decoded, so a small file that claims a huge canvas (a
    decompression bomb) is refused without the memory it would take."""
    image_module = _require("PIL.Image", VISION_EXTRA, f"document {name!r} (an image)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", image_module.DecompressionBombWarning)
            with image_module.open(io.BytesIO(data)) as image:
                width, height = image.size
                if width * height > MAX_IMAGE_PIXELS:
                    raise DocumentError(
                        f"document {name!r} is a {width} x {height} image, more than the "
                        f"{MAX_IMAGE_PIXELS:,} pixels read from one image"
                    )
                image.verify()
    except DocumentError:
        raise
    except (image_module.DecompressionBombError, image_module.DecompressionBombWarning) as exc:
        raise DocumentError(f"document {name!r} is refused as a decompression bomb: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - Pillow raises many kinds for a damaged file
        raise DocumentError(f"document {name!r} is not a readable image: {exc}") from None
    if width == 0 or height == 0:
        raise DocumentError(f"document {name!r} is an empty image ({width} x {height})")
    return width, height


def cache_dir_for(rootdir: Path) -> Path:
    """Where document text and page renders are kept: beside the response cache."""
    return Path(os.fspath(rootdir)) / ".extractbench" / "cache" / "documents"
