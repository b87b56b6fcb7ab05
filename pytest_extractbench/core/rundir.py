"""Run directories: owned by one session (checked before any item runs, then locked until it ends); their files
are read and written by :mod:`.rundoc`.

A session writes its responses, metrics and reports into one directory. Two sessions writing the
same directory lose data silently (the journal of one is replayed as the other's, the last
metrics.json wins), and a path that cannot be written (a file, a directory under a file, a
read-only folder) used to fail only after every item had run. So, at session start:

* the path must be a directory that can be created and written (the lock file is the probe);
* a new run needs an empty (or new) directory; only ``--extractbench-resume`` continues an old one,
  and only a folder that holds a run;
* the session holds an advisory lock on ``.extractbench.lock`` until it ends. The kernel drops the
  lock when the process dies, so a run killed with ``kill -9`` can still be resumed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
from pathlib import Path

from .errors import UsageProblem

LOCK_FILE = ".extractbench.lock"
# Files only a run directory holds (journal.JOURNAL_FILE, report.files.METRICS_FILE and SAMPLES_FILE).
RUN_MARKERS = (LOCK_FILE, "responses.jsonl", "metrics.json", "samples.jsonl")


class RunDirError(UsageProblem):
    """A run directory that cannot be made, locked or read back; the message names the file and says why."""


def _reason(exc: OSError) -> str:
    return os.strerror(exc.errno) if exc.errno else str(exc)


def _create(path: Path, what: str) -> None:
    """``mkdir -p`` that names the culprit: a file in the way, a read-only parent."""
    if path.exists() and not path.is_dir():
        raise RunDirError(f"{what} {path} is a file, not a directory")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise RunDirError(f"{what} {path}: {parent} is a file, not a directory")
            break
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(f"{what} {path} cannot be created: {_reason(exc)}") from None


def is_run(path: Path) -> bool:
    """True when ``path`` holds an extractbench run (its journal, metrics, samples or lock file)."""
    return path.is_dir() and any((path / name).exists() for name in RUN_MARKERS)


def prepare(path: Path, *, what: str, resume: bool = False, fresh: bool = True, resume_with: str | None = None) -> Path:
    """Make ``path`` ready for this session, or raise :class:`RunDirError` before anything runs.

    ``resume``: continue the run in ``path`` (it must be one). ``fresh``: a new run, so ``path``
    must be new or empty (files of an earlier run would be mixed with this one's). ``resume_with``: how the
    caller continues a run, named in the message (``--extractbench-resume PATH``, or ``resume=...`` from Python).
    """
    if resume:
        if not path.is_dir():
            raise RunDirError(f"{what} {path}: no such run directory")
        if not is_run(path):
            raise RunDirError(
                f"{what} {path} is not an extractbench run directory (it has none of {', '.join(RUN_MARKERS)}); "
                "resume the directory of an earlier run"
            )
        return path
    _create(path, what)
    if fresh:
        with os.scandir(path) as entries:
            found = next(iter(entries), None)
        if found is not None:
            kind = "run" if is_run(path) else "folder"
            raise RunDirError(
                f"{what} {path} is not empty (it holds {found.name!r}, from an earlier {kind}): a run needs a new "
                f"or empty directory; remove it, choose another, or continue that run with "
                f"{resume_with or f'--extractbench-resume {path}'}"
            )
    return path


def claim_new(base: Path) -> Path:
    """A new directory ``base``, ``base-2``, ``base-3``...: created atomically, so two sessions never share one."""
    _create(base.parent, "run directory parent")
    n = 1
    while True:
        path = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            n += 1
        except OSError as exc:
            raise RunDirError(f"run directory {path} cannot be created: {_reason(exc)}") from None


class RunLock:
    """An exclusive advisory lock on the run directory's lock file, held by one session at a time."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise :class:`RunDirError` (another live session has it, or the folder is read-only)."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise RunDirError(f"run directory {self.path.parent} is not writable: {_reason(exc)}") from None
        try:
            _lock(fd)
        except OSError as exc:
            owner = _read(fd)
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise RunDirError(
                    f"run directory {self.path.parent} is in use by another session ({owner or 'unknown process'}); "
                    "wait for it to end or choose another directory"
                ) from None
            raise RunDirError(f"run directory {self.path.parent} cannot be locked: {_reason(exc)}") from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
        except OSError as exc:  # a full disk: better said now than after every item ran
            os.close(fd)
            raise RunDirError(f"run directory {self.path.parent} is not writable: {_reason(exc)}") from None
        self._fd = fd

    def release(self) -> None:
        """Let the next session in. The file stays: removing it would let two sessions lock two files."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                _unlock(self._fd)
            os.close(self._fd)
            self._fd = None


def _read(fd: int) -> str:
    with contextlib.suppress(OSError):
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, 200).decode("utf-8", "replace").strip()
    return ""


try:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # Windows
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]  # declared on Windows only

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]  # declared on Windows only
