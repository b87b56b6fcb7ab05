"""Prompt speed of the embedded llama-server at llama-server's default ``--batch-size`` (2,048) against the 512 the
plugin starts it with, in alternating fresh servers on the same prompt.

    python benchmarks/bench_batch_size.py [--tokens 3000] [--rounds 2] [--model qwen2.5-coder-0.5b]

Why 512: between two turns of its loop llama-server answers no ``/slots`` query and notices no cancelled request,
and a 2,048-token turn takes a loaded 2-core CPU minutes. Its micro-batch (``--ubatch-size``) is 512 either way, so
the speed should not move; this measures that it does not. Prints one row per server: prompt tokens, the server's
own prompt time and tokens/s (``timings`` of the answer).
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from longdocs import contract  # noqa: E402

from pytest_extractbench.live.backends.llama_models import resolve_model  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _timings(model: Path, batch: int, text: str) -> dict[str, Any]:
    port = _free_port()
    launcher = Path(sys.executable).with_name("extractbench-llama-server")
    command = [str(launcher), "--model", str(model), "--port", str(port), "--parallel", "1", "--ctx-size", "8192"]
    command += ["--threads", "2", "--batch-size", str(batch), "--jinja", "--no-webui"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit(f"llama-server on port {port} did not start") from None
                time.sleep(0.5)
        body = {"messages": [{"role": "user", "content": text}], "max_tokens": 4, "temperature": 0}
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=1800) as answer:
            return dict(json.load(answer)["timings"])
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=3000, help="approximate tokens of the prompt")
    parser.add_argument("--rounds", type=int, default=2, help="servers of each batch size, alternating")
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", help="an embedded model's name or a .gguf file")
    args = parser.parse_args()
    model = resolve_model(args.model).path
    text = contract("batch", args.tokens, 1)["text"]
    print("| --batch-size | prompt tokens | prompt ms | tokens/s |\n|---:|---:|---:|---:|")
    for _ in range(args.rounds):
        for batch in (2048, 512):
            t = _timings(model, batch, text)
            print(f"| {batch} | {t['prompt_n']} | {t['prompt_ms']:,.0f} | {t['prompt_per_second']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
