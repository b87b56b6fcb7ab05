"""What the live tests ask of a loopback address."""

from __future__ import annotations

import socket
import socketserver
import threading
from urllib.parse import urlsplit


def refused(url: str) -> bool:
    """True when nothing listens at the URL's host and port any more (a server that was stopped)."""
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=2):
            return False
    except OSError:
        return True


#: How often a test server's loop looks for a shutdown: serve_forever's default half second is what every
#: fixture's teardown would wait.
POLL_S = 0.05


def serve_in_thread(server: socketserver.BaseServer) -> threading.Thread:
    """Start ``server``'s loop in a daemon thread (stop it with ``server.shutdown()``)."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True)
    thread.start()
    return thread
