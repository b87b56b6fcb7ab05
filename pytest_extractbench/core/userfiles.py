"""Opening a file a user named (a config, subsets, prompt, dataset or predictions file): regular files only, and
never more than a limit read.

``/dev/zero`` has no end and reports size 0, a FIFO blocks ``open`` until some writer appears, a directory or a
socket is no file at all: each is refused with a message naming it, before anything is read. The file is opened
without blocking and checked on its descriptor, so what is checked is what is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from .errors import ExtractbenchError

__all__ = ["NotAFile", "open_regular", "read_bytes", "read_text"]


TEXT_LIMIT = 4 * 1024 * 1024
"""Largest prompt, config or subsets file read (each is a few kilobytes)."""


class NotAFile(ExtractbenchError, OSError):
    """The path names a device, a FIFO, a socket or a directory, or a file larger than the reader takes."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``open(path, "rb")`` for a regular file; :class:`NotAFile` for anything else (raised before any read)."""
    fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotAFile(f"{os.fspath(path)} is {_kind(mode)}, not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike[str], limit: int) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes; :class:`NotAFile` otherwise."""
    with open_regular(path) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise NotAFile(f"{os.fspath(path)} is larger than {limit:,} bytes, the most read from such a file")
    return data


def read_text(path: str | os.PathLike[str], limit: int, encoding: str = "utf-8") -> str:
    """:func:`read_bytes` decoded (``UnicodeDecodeError`` when it is not ``encoding``)."""
    return read_bytes(Path(path), limit).decode(encoding)
