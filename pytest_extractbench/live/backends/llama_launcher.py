"""`extractbench-llama-server`: llama.cpp's server from the prebuilt xllamacpp wheel, with llama-server's flags.

Why: building llama.cpp from source takes a 2-core machine many minutes and gigabytes of memory;
xllamacpp (PyPI) ships llama.cpp's own HTTP server compiled into a CPU wheel. This console script
accepts the subset of llama-server's command line that `llama_process.EmbeddedServer` passes, starts the
server in this process and serves until SIGTERM/SIGINT, so the embedded server runs it exactly like
a llama-server binary (own process, own log, /health, /v1/...).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# llama-server's --pooling values
_POOLING = {"none": 0, "mean": 1, "cls": 2, "last": 3, "rank": 4}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="extractbench-llama-server",
        description="llama.cpp's server from the xllamacpp wheel, started with llama-server's flags.",
    )
    parser.add_argument(
        "--model",
        "-m",
        required=True,
        help="a .gguf file, or an embedded model's name (qwen2.5-coder-0.5b, gemma3-270m, ...)",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--parallel", "-np", type=int, default=1)
    parser.add_argument("--ctx-size", "-c", type=int, default=4096)
    parser.add_argument("--threads", "-t", type=int, default=0)
    parser.add_argument("--batch-size", "-b", type=int, default=0)
    parser.add_argument("--ubatch-size", "-ub", type=int, default=0)
    parser.add_argument("--alias", "-a", default=None)
    parser.add_argument("--chat-template-file", default=None)
    parser.add_argument("--pooling", choices=sorted(_POOLING), default=None)
    parser.add_argument("--embeddings", "--embedding", action="store_true")
    parser.add_argument("--no-repack", "-nr", action="store_true")
    parser.add_argument("--jinja", action="store_true")  # always on: xllamacpp renders templates with jinja
    parser.add_argument("--no-webui", action="store_true")
    parser.add_argument("--metrics", action="store_true")
    parser.add_argument("--slots", action="store_true")
    return parser


def build_params(args: argparse.Namespace) -> Any:
    """xllamacpp.CommonParams from parsed llama-server flags (imported here: the package is an extra)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.hostnames = [args.host]
    params.port = args.port
    params.n_parallel = args.parallel
    params.n_ctx = args.ctx_size
    if args.threads > 0:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    if args.batch_size > 0:
        params.n_batch = args.batch_size
    if args.ubatch_size > 0:
        params.n_ubatch = args.ubatch_size
    if args.alias:
        params.model_alias = {args.alias}
    params.use_jinja = True
    params.ui = False
    params.endpoint_props = True
    params.endpoint_slots = True
    params.endpoint_metrics = True
    if args.chat_template_file:
        params.chat_template = Path(args.chat_template_file).read_text(encoding="utf-8")
    if args.embeddings:
        params.embedding = True
    if args.pooling:
        params.pooling_type = xllamacpp.llama_pooling_type(_POOLING[args.pooling])
    if args.no_repack:
        params.no_extra_bufts = True
    return params


def main(argv: Sequence[str] | None = None) -> int:
    args, unknown = _parser().parse_known_args(argv)
    if unknown:
        # A flag this launcher does not map would be silently dropped; say so in the server log.
        print(
            f"extractbench-llama-server: ignoring unsupported llama-server flags: {' '.join(unknown)}", file=sys.stderr
        )
    try:
        import xllamacpp
    except ImportError:
        print(
            "extractbench-llama-server needs the xllamacpp package: pip install 'pytest-extractbench[local]'",
            file=sys.stderr,
        )
        return 2
    if not Path(args.model).is_file():  # a registered name: its file, served under that name
        from .llama_models import ModelNotFoundError, resolve_model

        try:
            resolved = resolve_model(args.model)
        except ModelNotFoundError as exc:
            print(f"extractbench-llama-server: {exc}", file=sys.stderr)
            return 2
        args.model, args.alias = str(resolved.path), args.alias or resolved.name
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = xllamacpp.Server(build_params(args))
    print(f"extractbench-llama-server: listening on {server.listening_address}", file=sys.stderr, flush=True)
    while not stop.wait(0.5):
        pass
    del server  # stops the server's loop and frees the model before the process exits
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
