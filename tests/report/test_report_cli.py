"""The extractbench CLI: report, compare and test-connection (against a real loopback HTTP server)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from _runs import Page, fixture_outputs, gold_outputs, make_run

from _net import serve_in_thread
from pytest_extractbench.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("runs")
    return (
        make_run(base / "run_001", {"model": fixture_outputs("demo.jsonl")}),
        make_run(base / "run_002", {"model": fixture_outputs("weak.jsonl"), "oracle": gold_outputs()}),
    )


@pytest.mark.slow
def test_report_writes_the_html_of_a_run_directory(runs: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(runs[0]), "--output", str(out), "--title", "Nightly <b>"]) == 0
    assert f"report written to {out}" in capsys.readouterr().out
    page = Page(out.read_text(encoding="utf-8"))
    assert "summary" in page.ids() and page.count("svg") > 5
    assert "Nightly <b>" in "".join(page.text) and page.count("b") == 0


@pytest.mark.slow
def test_report_default_output_and_python_m(runs: tuple[Path, Path]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_extractbench", "report", "--results-dir", str(runs[0])],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (runs[0] / "report.html").is_file()
    eqs = json.loads((runs[0] / "metrics.json").read_text(encoding="utf-8"))["models"]["model"][
        "extraction_quality_score"
    ]
    assert round(eqs, 3) == 0.974  # the demo predictions on the bundled dataset
    page = Page((runs[0] / "report.html").read_text(encoding="utf-8"))
    text = " ".join(part.strip() for part in page.text if part.strip())
    assert "Model Evaluation Report: model" in text
    assert "Executive summary model 0.974 [95% CI: " in text
    assert "summary" in page.ids()


def test_report_on_a_directory_without_results_names_the_file(tmp_path: Path, capsys) -> None:
    # the run directory positional, as compare and view take it, and by the earlier --results-dir
    for argv in (["report", str(tmp_path)], ["report", "--results-dir", str(tmp_path)]):
        assert main(argv) == 2
        assert f"{tmp_path / 'metrics.json'}: no such file" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["report"], ["report", "a", "--results-dir", "b"]])
def test_report_takes_its_run_directory_once(argv: list[str], capsys) -> None:
    assert main(argv) == 2
    assert "give the run directory once, as RUN_DIR or --results-dir DIR" in capsys.readouterr().err


@pytest.mark.slow
def test_compare_runs_pairs_models_across_run_directories(runs: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "comparison.html"
    assert main(["compare", "--runs", f"{runs[0]},{runs[1]}", "--output", str(out)]) == 0
    assert "comparison of 3 models" in capsys.readouterr().out
    text = out.read_text(encoding="utf-8")
    page = Page(text)
    assert "comparison" in page.ids() and "chart-winrate" in page.ids() and "chart-ranking" in page.ids()
    # the same model name in two runs is told apart by its run directory
    for label in ("run_001/model", "run_002/model", "oracle"):
        assert f"<h3>{label}</h3>" in text
    assert "run_001/model vs run_002/model" in text or "run_002/model vs run_001/model" in text


def test_compare_needs_two_runs(runs: tuple[Path, Path], capsys) -> None:
    assert main(["compare", "--runs", str(runs[0])]) == 2
    assert "at least two run directories" in capsys.readouterr().err


class _Models(BaseHTTPRequestHandler):
    key = "sk-test-secret"

    def do_GET(self) -> None:
        if self.path != "/v1/models":
            self.send_error(404)
            return
        if self.headers.get("Authorization") != f"Bearer {self.key}":
            self.send_error(401, "Unauthorized")
            return
        body = json.dumps({"object": "list", "data": [{"id": "gemma3-270m", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    serve_in_thread(httpd)
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_connection_ok_with_the_key_from_the_environment(server: str, monkeypatch, capsys) -> None:
    monkeypatch.delenv("EXTRACTBENCH_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", _Models.key)
    assert main(["test-connection", "--base-url", server, "--model", "gemma3-270m"]) == 0
    out = capsys.readouterr()
    assert "OK, 1 model(s): gemma3-270m" in out.out and _Models.key not in out.out + out.err


def test_connection_reports_a_missing_model_and_a_refused_key(server: str, monkeypatch, capsys) -> None:
    monkeypatch.setenv("EXTRACTBENCH_API_KEY", _Models.key)
    assert main(["test-connection", "--base-url", server + "/", "--model", "llama-3-8b"]) == 1
    assert "does not serve 'llama-3-8b'; it serves: gemma3-270m" in capsys.readouterr().err
    monkeypatch.setenv("EXTRACTBENCH_API_KEY", "wrong-key")
    assert main(["test-connection", "--base-url", server]) == 1
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "wrong-key" not in err


def test_connection_refused(capsys) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(["test-connection", "--base-url", f"http://127.0.0.1:{port}/v1", "--timeout", "5"]) == 1
    assert "cannot reach the model server" in capsys.readouterr().err


@pytest.mark.slow
def test_compare_takes_runs_as_arguments(runs: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "comparison.html"
    assert main(["compare", str(runs[0]), str(runs[1]), "--output", str(out)]) == 0
    assert "comparison of 3 models" in capsys.readouterr().out
    assert "run_001/model" in out.read_text(encoding="utf-8")
    # one of each spelling adds up; neither is refused like a single run
    assert main(["compare", str(runs[0]), "--runs", str(runs[1]), "--output", str(out)]) == 0
    assert main(["compare", "--output", str(out)]) == 2
    assert "at least two run directories" in capsys.readouterr().err


@pytest.mark.parametrize("track", ["toolcall", "generate", "repair"])
def test_report_of_a_track_run_writes_the_track_page(track: str, tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    source = ROOT / "tests" / "golden" / "expected" / f"track-{track}"
    for name in ("metrics.json", "samples.jsonl"):
        (run_dir / name).write_bytes((source / name).read_bytes())
    document = json.loads((source / "metrics.json").read_text(encoding="utf-8"))
    assert main(["report", str(run_dir)]) == 0
    assert f"report written to {run_dir / 'report.html'}" in capsys.readouterr().out
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert f"{track.capitalize()} Track Report: " + ", ".join(document["models"]) in page
