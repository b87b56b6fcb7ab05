"""PDFs end to end on the embedded text model (gemma3-270m, the session's shared server): each PDF becomes page
text, the prompt reaches the model, every answer comes back and is scored. Whether a 270M model reads the page
right is not what is tested; that the PDF path works on a real server is.

A real one-page PDF from fixtures/documents (a US Senate expenditure page, public domain) and a two-page invoice
written at test time (tests/pdfs.py). The image path needs a vision model, and none small enough ships on PyPI:
tests/plugin/test_documents_plugin.py checks its requests against a loopback server instead.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pdfs import make_pdf

pytest.importorskip("pypdfium2")
pytestmark = [pytest.mark.llm, pytest.mark.slow, pytest.mark.usefixtures("local_extra")]

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "documents"


def test_pdfs_become_page_text_that_the_embedded_model_answers(pytester: pytest.Pytester, gemma_server: object) -> None:
    docs = pytester.path / "docs"
    docs.mkdir()
    shutil.copy(FIXTURE / "pdfs" / "senate-expenditures.pdf", docs)
    (docs / "invoice.pdf").write_bytes(
        make_pdf(["INVOICE INV-2041\nSeller: Acme Tools GmbH", "Total due: 1,250.00 EUR"])
    )
    senate = next(
        json.loads(line)
        for line in (FIXTURE / "dataset.jsonl").read_text().splitlines()
        if json.loads(line)["id"] == "senate-expenditures"
    )
    invoice_schema = {
        "type": "object",
        "properties": {"invoice_number": {"type": "string"}, "seller": {"type": "string"}, "total": {"type": "number"}},
        "required": ["invoice_number", "seller", "total"],
    }
    rows = [
        {**senate, "document": "docs/senate-expenditures.pdf"},
        {
            "id": "invoice",
            "document": "docs/invoice.pdf",
            "schema": invoice_schema,
            "expected": {"invoice_number": "INV-2041", "seller": "Acme Tools GmbH", "total": 1250.0},
        },
    ]
    (pytester.path / "docs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    pytester.makeconftest("""
        import json
        def pytest_extractbench_request_done(config, model, sample_id, response):
            with open("requests.log", "a") as f:
                f.write(json.dumps({"sample": sample_id, "error": response.error_class,
                                    "prompt_tokens": response.usage.get("prompt_tokens")}) + "\\n")
    """)
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "docs.jsonl",
        "--extractbench-base-url",
        gemma_server.base_url,
        "--model",
        gemma_server.model,  # type: ignore[attr-defined]
        "--extractbench-output",
        "out",
        "--extractbench-sla",
        "none",
        "--extractbench-no-cache",
        "--extractbench-max-tokens",
        "160",
        "--extractbench-timeout",
        "900",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 2, result.stdout.str()[-3000:]
    requests = {r["sample"]: r for r in map(json.loads, (pytester.path / "requests.log").read_text().splitlines())}
    assert sorted(requests) == ["invoice", "senate-expenditures"]
    assert all(r["error"] in (None, "truncated") for r in requests.values()), requests
    # the page text is in the prompt: the Senate page's 4.5k characters are far more tokens than the invoice's
    assert requests["senate-expenditures"]["prompt_tokens"] > 1000 > requests["invoice"]["prompt_tokens"], requests
    rows_out = {
        r["sample_id"]: r for r in map(json.loads, (pytester.path / "out" / "samples.jsonl").read_text().splitlines())
    }
    assert {sid: r["meta"]["document"]["pages"] for sid, r in rows_out.items()} == {
        "invoice": 2,
        "senate-expenditures": 1,
    }
    # each PDF's page text is cached by its content hash beside the response cache
    cached = sorted(p.name for p in (pytester.path / ".extractbench" / "cache" / "documents").glob("*.text.json"))
    assert cached == sorted(f"{r['meta']['document']['sha256']}.text.json" for r in rows_out.values())
    metrics = json.loads((pytester.path / "out" / "metrics.json").read_text())
    assert metrics["models"][gemma_server.model]["num_samples"] == 2  # type: ignore[attr-defined]
