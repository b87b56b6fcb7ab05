"""Documents through a whole run: page images reach a vision server as OpenAI image parts, and bad documents are
input problems while the session goes on.

No small vision model ships on PyPI that we know of, so the image path is tested against a real loopback HTTP
server (tests/faultserver.py) that records each request and checks its shape: the user message's content is a list
of a text part and ``image_url`` parts holding base64 PNG/JPEG data URLs, the shape OpenAI, vLLM and llama-server
(multimodal) accept. The PDF-to-text path runs end to end on the embedded text model in
tests/integration/test_documents_embedded.py.
"""

from __future__ import annotations

import base64
import io
import json
import re
from typing import Any

import pytest
from faultserver import FaultServer
from pdfs import make_pdf

pytest.importorskip("pypdfium2")
Image = pytest.importorskip("PIL.Image")
pytestmark = pytest.mark.slow  # whole pytest sessions

SCHEMA = {"type": "object", "properties": {"invoice": {"type": "string"}}, "required": ["invoice"]}
DATA_URL = re.compile(r"data:(image/(?:png|jpeg));base64,([A-Za-z0-9+/=]+)")


def _rows(pytester: pytest.Pytester) -> None:
    (pytester.path / "docs").mkdir()
    (pytester.path / "docs" / "inv.pdf").write_bytes(make_pdf(["Invoice INV-7", "Total: 12.50 EUR"]))
    scan = io.BytesIO()
    Image.new("RGB", (120, 80), "white").save(scan, format="JPEG")
    (pytester.path / "docs" / "scan.jpg").write_bytes(scan.getvalue())
    rows = [
        {"id": "inv", "document": "docs/inv.pdf", "schema": SCHEMA, "expected": {"invoice": "INV-7"}},
        {
            "id": "scan",
            "document": "docs/scan.jpg",
            "text": "Invoice INV-9",
            "schema": SCHEMA,
            "expected": {"invoice": "INV-9"},
        },
    ]
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _answer(body: dict[str, Any]) -> Any:
    """A vision server's reply, after checking the request is one it would accept."""
    system, user = body["messages"]
    assert system["role"] == "system" and isinstance(system["content"], str)
    assert user["role"] == "user" and isinstance(user["content"], list)
    text, *images = user["content"]
    assert text["type"] == "text" and isinstance(text["text"], str)
    assert images and all(
        set(part) == {"type", "image_url"} and part["type"] == "image_url" and set(part["image_url"]) == {"url"}
        for part in images
    )
    for part in images:
        mime, payload = DATA_URL.fullmatch(part["image_url"]["url"]).groups()
        with Image.open(io.BytesIO(base64.b64decode(payload, validate=True))) as image:
            assert image.format == {"image/png": "PNG", "image/jpeg": "JPEG"}[mime]
            image.load()
    return {"invoice": "INV-7" if len(images) == 2 else "INV-9"}


def _run(pytester: pytest.Pytester, server: FaultServer, out: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-base-url",
        server.url,
        "--model",
        "test-model",
        "--extractbench-output",
        out,
        "--extractbench-sla",
        "none",
        *args,
    )


def test_page_images_reach_a_vision_server_as_image_parts(pytester: pytest.Pytester, fault_server: FaultServer) -> None:
    _rows(pytester)
    fault_server.answer = _answer
    _run(pytester, fault_server, "img", "--extractbench-input", "image").assert_outcomes(passed=2)
    by_images = {len(body["messages"][1]["content"]) - 1: body for body in fault_server.requests}
    assert sorted(by_images) == [1, 2]  # the scan as it is; the PDF as one PNG a page
    pdf_text = by_images[2]["messages"][1]["content"][0]["text"]
    assert "attached as 2 image(s)" in pdf_text and "INV-7" not in pdf_text  # image mode: no page text
    assert DATA_URL.match(by_images[1]["messages"][1]["content"][1]["image_url"]["url"]).group(1) == "image/jpeg"
    img = json.loads((pytester.path / "img" / "metrics.json").read_text())
    assert img["run"]["config"]["options"]["input"] == {"value": "image", "source": "command line"}
    fault_server.reset()
    _run(pytester, fault_server, "both", "--extractbench-input", "both").assert_outcomes(passed=2)
    both = {len(body["messages"][1]["content"]) - 1: body for body in fault_server.requests}
    assert "--- page 2 of 2 ---\nTotal: 12.50 EUR" in both[2]["messages"][1]["content"][0]["text"]
    both_hash = json.loads((pytester.path / "both" / "metrics.json").read_text())["run"]["live"]["prompt_hash"]
    assert both_hash != img["run"]["live"]["prompt_hash"]  # asked another way: answers are not compared as equal
    fault_server.reset()
    fault_server.answer = lambda body: {"invoice": "INV-7" if "INV-7" in body["messages"][1]["content"] else "INV-9"}
    _run(pytester, fault_server, "text")  # the default.assert_outcomes(passed=2)
    assert all(isinstance(m["content"], str) for body in fault_server.requests for m in body["messages"])


def test_the_embedded_text_model_refuses_image_input_with_one_clear_line(pytester: pytest.Pytester) -> None:
    _rows(pytester)
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-input",
        "image",
        "--extractbench-output",
        "out",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*--extractbench-input image sends documents as images, which needs a vision "
            "model's server (--extractbench-base-url)*"
        ]
    )


def test_bad_documents_are_input_problems_and_the_session_goes_on(
    pytester: pytest.Pytester, fault_server: FaultServer
) -> None:
    _rows(pytester)
    (pytester.path / "docs" / "locked.pdf").write_bytes(make_pdf(["secret"], encrypted=True))
    with (pytester.path / "data.jsonl").open("a", encoding="utf-8") as fh:
        for sample_id, document in (("locked", "docs/locked.pdf"), ("escape", "../x.pdf"), ("gone", "docs/no.pdf")):
            fh.write(
                json.dumps({"id": sample_id, "document": document, "schema": SCHEMA, "expected": {"invoice": "x"}})
                + "\n"
            )
    fault_server.answer = lambda body: {"invoice": "INV-7"}
    result = _run(pytester, fault_server, "out")
    result.assert_outcomes(passed=2)  # the two good rows ran
    output = result.stdout.str()
    for line, sample_id, why in (
        (3, "locked", "is an encrypted (password-protected) PDF"),
        (4, "escape", "is outside the dataset's folder"),
        (5, "gone", "no such file"),
    ):
        assert re.search(
            rf"data.jsonl:line {line}, sample '{sample_id}', field 'document': document .*{re.escape(why)}", output
        ), output
    problems = json.loads((pytester.path / "out" / "metrics.json").read_text())["run"]["problems"]
    assert sorted(p["sample_id"] for p in problems) == ["escape", "gone", "locked"]
