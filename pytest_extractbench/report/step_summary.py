"""summary.md appended to a GitHub Actions job summary (``$GITHUB_STEP_SUMMARY``), so a run in CI shows its verdict
on the job's page without a workflow step. Only when the variable is set: nothing is written anywhere else.

One ``write`` on a file opened for appending: another step's (or xdist worker's) output is never interleaved into
it. GitHub refuses a job summary over 1 MiB (it then shows none of it), so an append that would pass that limit
is replaced by one line that says where the summary is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
GITHUB_LIMIT = 1024 * 1024  # bytes GitHub accepts in one step's summary


def step_summary_path(environ: Mapping[str, str] | None = None) -> Path | None:
    found = (os.environ if environ is None else environ).get(STEP_SUMMARY_ENV, "")
    return Path(found) if found.strip() else None


def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:  # a regular file takes it in one write; the loop is for the rare short write
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def append_step_summary(
    summary: Path, environ: Mapping[str, str] | None = None, limit: int = GITHUB_LIMIT
) -> Path | None:
    """Append ``summary`` (summary.md) to the job summary; returns the file written, or None when not in a job."""
    target = step_summary_path(environ)
    if target is None:
        return None
    from .exports import cap_summary

    text = cap_summary(summary.read_text(encoding="utf-8"))
    data = ("\n" + text.rstrip("\n") + "\n").encode("utf-8")
    try:
        used = target.stat().st_size
    except FileNotFoundError:
        used = 0
    if used + len(data) > limit:
        data = (
            f"\nextractbench: summary.md ({len(data):,} bytes) not added: the job summary would pass GitHub's "
            f"{limit // 1024} KiB limit; it is in {summary}.\n"
        ).encode()
        if used + len(data) > limit:
            return None
    _append(target, data)
    return target
