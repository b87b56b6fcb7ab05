"""A recursion limit lowered around a call, to reach the fallbacks that run when a walk is nested too deeply
without building a document thousands of levels deep."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def frames_to_spare(frames: int) -> Iterator[None]:
    """Lower the recursion limit to ``frames`` above the current depth; the old limit comes back on exit."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)
