"""A small persistent cache for embeddings and judge verdicts (sqlite, safe across xdist workers).

Without a cache directory it lives in memory only. Keys are hashes of what
decides the answer (backend, model, prompt version, texts), so a rerun or a CI
replay asks no server and loads no model for values it has already seen.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

_memory: dict[str, Any] = {}
_lock = threading.Lock()
_db: sqlite3.Connection | None = None
_db_path: Path | None = None


def set_cache_dir(directory: str | Path | None) -> None:
    """Persist cached values in ``directory/semantic.sqlite`` (None: memory only)."""
    global _db, _db_path
    with _lock:
        if _db is not None:
            _db.close()
        _db, _db_path = None, None
        if directory is not None:
            _db_path = Path(directory) / "semantic.sqlite"
            _db_path.parent.mkdir(parents=True, exist_ok=True)


def _connection() -> sqlite3.Connection | None:
    global _db
    if _db is None and _db_path is not None:
        _db = sqlite3.connect(_db_path, timeout=30, check_same_thread=False)
        _db.execute("PRAGMA journal_mode=WAL")
        _db.execute("CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    return _db


def cache_key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()


def get(key: str) -> Any:
    """The cached JSON value of ``key``, or None."""
    with _lock:
        if key in _memory:
            return _memory[key]
        db = _connection()
        if db is None:
            return None
        row = db.execute("SELECT value FROM cache WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        value = _memory[key] = json.loads(row[0])
        return value


def put_many(values: dict[str, Any]) -> None:
    """Cache JSON values (one transaction)."""
    if not values:
        return
    with _lock:
        _memory.update(values)
        db = _connection()
        if db is not None:
            with db:
                db.executemany(
                    "INSERT OR REPLACE INTO cache (key, value) VALUES (?, ?)",
                    [(k, json.dumps(v)) for k, v in values.items()],
                )


def clear_memory() -> None:
    """Forget what is cached in memory (tests use it to prove the persistent cache works)."""
    with _lock:
        _memory.clear()
