"""What the live tests ask of a loopback address."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit


def refused(url: str) -> bool:
    """True when nothing listens at the URL's host and port any more (a server that was stopped)."""
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=2):
            return False
    except OSError:
        return True
