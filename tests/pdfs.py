"""Small real PDFs written at test time: text pages, no pages, many pages, encrypted ones.

Plain PDF 1.4 syntax (a catalog, a page tree, Helvetica, one content stream a page, a correct cross-reference
table), so every reader opens them as it opens any PDF; no PDF writer library is needed.

    make_pdf(["Invoice INV-7", "Total: 12.50 EUR"])       # two pages, one line each ("\\n" splits lines)
    make_pdf([])                                          # a PDF with no pages
    make_pdf(["x"], encrypted=True)                       # needs a password: readers refuse it
"""

from __future__ import annotations

__all__ = ["make_pdf"]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str], *, encrypted: bool = False) -> bytes:
    """A PDF whose page ``i`` shows the lines of ``pages[i]`` (Latin-1 text)."""
    objects: dict[int, bytes] = {}
    page_ids = []
    next_id = 4
    for text in pages:
        page_id, content_id = next_id, next_id + 1
        next_id += 2
        lines = text.split("\n")
        ops = ["BT", "/F1 12 Tf", "72 720 Td"]
        for i, line in enumerate(lines):
            ops.append(("" if i == 0 else "0 -16 Td ") + f"({_escape(line)}) Tj")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects[content_id] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
        objects[page_id] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % content_id
        )
        page_ids.append(page_id)
    objects[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    kids = b" ".join(b"%d 0 R" % i for i in page_ids)
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))
    objects[3] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    trailer_extra = b""
    if encrypted:  # the standard security handler, RC4 40-bit, whose user password is not the empty one
        encrypt_id = next_id
        objects[encrypt_id] = (
            b"<< /Filter /Standard /V 1 /R 2 /P -4 /O <" + b"4f" * 32 + b"> /U <" + b"a5" * 32 + b"> >>"
        )
        trailer_extra = b" /Encrypt %d 0 R /ID [<%s> <%s>]" % (encrypt_id, b"01" * 16, b"01" * 16)
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    size = max(objects) + 1
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        out += b"%010d 00000 n \n" % offsets[number] if number in offsets else b"0000000000 65535 f \n"
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (size, trailer_extra, xref)
    return bytes(out)
