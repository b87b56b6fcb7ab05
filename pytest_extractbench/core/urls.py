"""The one check of a server's base URL, for the model, judge and embeddings clients alike.

No pytest import; cheap to import.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .redact import redact_url

__all__ = ["check_base_url"]


def check_base_url(value: str, *, key_variables: str = "EXTRACTBENCH_API_KEY (or OPENAI_API_KEY)") -> str:
    """The URL of an OpenAI-compatible API (``http://host:8000/v1``) without a trailing slash.

    Raises ``ValueError`` with one clear line (credentials never quoted) for anything the HTTP
    client would crash on or misuse: another scheme, no host, a port outside 1-65535, a broken
    IPv6 literal, or credentials (``user:pass@``): the HTTP client would send them as Basic auth
    in place of the API key, and a server that echoes headers would record them.
    """
    shown = redact_url(value)
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"expected an http:// or https:// URL, got {shown!r}")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:  # "Port out of range 0-65535", "Invalid IPv6 URL", ...
        raise ValueError(f"{shown!r} is not a valid URL: {exc}") from None
    if not parts.hostname:
        raise ValueError(f"{shown!r} has no host name; expected e.g. http://127.0.0.1:8000/v1")
    if port == 0:
        raise ValueError(f"{shown!r} has port 0; expected a port from 1 to 65535")
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            f"{shown!r} carries credentials (user:password@), which would be sent as HTTP Basic auth instead "
            f"of the API key; remove them from the URL and set the key in {key_variables}"
        )
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError(f"{shown!r} contains whitespace or control characters")
    return value.rstrip("/")
