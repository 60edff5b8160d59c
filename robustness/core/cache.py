"""A SQLite cache of model results that makes every run resumable.

One row per model call result: ``key`` is the SHA-256 of the canonical JSON of the request
(backend, runner identity with model revision and dtype, call kind, prompt text or messages,
labels or response, decoding parameters), ``value`` is the result as JSON, ``request`` keeps the
canonical request itself so a cache can be audited.

Durability and concurrency
--------------------------
- WAL journal mode: readers never block the writer and a reader never sees a half-written
  batch; ``synchronous=NORMAL``, which in WAL mode survives any process crash (kill -9) and can
  lose only the last commits, never consistency, on power loss.
- Each ``put_many`` is one transaction committed before it returns, so a run killed at any
  point loses at most the batch in flight; ``INSERT OR IGNORE`` on the primary key means a
  result is stored once even when two workers compute it concurrently or a resumed run repeats
  a batch.
- Every value reaches SQL as a bound parameter; the only SQL built at run time is a list of
  ``?`` placeholders whose length is a count.
- One connection per thread (and per process, after a fork), with a busy timeout (the
  ``timeout`` argument, which sqlite3 installs as the busy handler), so the cache
  can be shared by a thread pool and by several processes.

Damage
------
Opening a cache checks its tables' columns and runs SQLite's ``quick_check`` (linear in the
file's size), so a foreign SQLite file or a corrupt one is one :class:`CacheError` before any
model is loaded; any SQLite error later is a CacheError too. A stored value that is not valid
JSON is not returned: :meth:`Cache.get_many` leaves it out, deletes it (so the caller recomputes
and stores it again) and counts it in :attr:`Cache.unreadable`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from robustness.core.errors import RobustnessError

SCHEMA_VERSION = "1"
#: The columns of our two tables, as ``PRAGMA table_info`` lists them.
_COLUMNS = {
    "meta": ("name", "value"),
    "results": ("key", "kind", "request", "value", "created_at"),
}
#: SQLite's default limit on bound parameters is 999 in old builds; stay well below it.
_CHUNK = 500


class CacheError(RobustnessError, RuntimeError):
    """A cache file that cannot be used (not ours, another schema version, unreadable)."""


def canonical_json(data: Any) -> str:
    """The one JSON spelling used for keys: sorted keys, no spaces, UTF-8 kept, no NaN."""
    return json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def make_key(request: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``request``."""
    return hashlib.sha256(canonical_json(request).encode("utf-8")).hexdigest()


class Cache:
    """A result cache in one SQLite file (created with its folder when missing)."""

    def __init__(self, path: str | Path, *, timeout: float = 60.0) -> None:
        self.path = Path(path).expanduser()
        self.timeout = timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        #: Stored values found unreadable (and deleted) since this object was made.
        self.unreadable = 0
        if self.path.is_dir():
            raise CacheError(f"cache {self.path} is a folder, not a cache file.")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._setup(self._connection())

    # ----------------------------------------------------------------- connections
    def _connection(self) -> sqlite3.Connection:
        held: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if held is not None and getattr(self._local, "pid", None) == os.getpid():
            return held
        try:
            conn = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as err:
            raise CacheError(f"cache {self.path} cannot be opened as SQLite: {err}") from err
        self._local.conn = conn
        self._local.pid = os.getpid()
        with self._lock:
            self._connections.append(conn)
        return conn

    def _setup(self, conn: sqlite3.Connection) -> None:
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, "
                "kind TEXT NOT NULL, request TEXT NOT NULL, value TEXT NOT NULL, "
                "created_at REAL NOT NULL)"
            )
            conn.execute(
                "INSERT OR IGNORE INTO meta (name, value) VALUES (?, ?)",
                ("schema_version", SCHEMA_VERSION),
            )
            row = conn.execute(
                "SELECT value FROM meta WHERE name = ?", ("schema_version",)
            ).fetchone()
            conn.execute("COMMIT")
            for table, columns in _COLUMNS.items():
                names = tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})"))
                if names != columns:
                    raise CacheError(
                        f"cache {self.path} is not a cache of this toolkit (its table {table!r} "
                        f"has columns {', '.join(names)}); use a new cache file."
                    )
            check = conn.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                reason = " ".join(str(check[0]).split()) if check else "no answer"
                raise CacheError(
                    f"cache {self.path} is damaged ({reason[:200]}); move it away and run "
                    "again (answers are recomputed)."
                )
        except sqlite3.DatabaseError as err:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise CacheError(
                f"cache {self.path} is not a usable cache ({err}); move it away and run again."
            ) from None
        if row is None or row[0] != SCHEMA_VERSION:
            found = None if row is None else row[0]
            raise CacheError(
                f"cache {self.path} has schema version {found!r}, this toolkit "
                f"writes {SCHEMA_VERSION!r}; use a new cache file."
            )

    def close(self) -> None:
        """Close every connection this object opened (in any thread)."""
        with self._lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- reads and writes
    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The decoded values of those ``keys`` that are stored (missing keys are absent).

        A stored value that is not valid JSON is left out and deleted, so the caller computes
        it again; :attr:`unreadable` counts them.
        """
        unique = list(dict.fromkeys(keys))
        found: dict[str, Any] = {}
        bad: list[str] = []
        with self._sql("read"):
            conn = self._connection()
            for start in range(0, len(unique), _CHUNK):
                chunk = unique[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(f"SELECT key, value FROM results WHERE key IN ({marks})", chunk)
                for key, value in rows:
                    try:
                        found[key] = json.loads(value)
                    except (ValueError, TypeError, RecursionError):
                        bad.append(key)
        if bad:
            self.discard(bad)
        return found

    def discard(self, keys: Sequence[str]) -> int:
        """Delete stored values that turned out unreadable; they count in :attr:`unreadable`."""
        removed = 0
        with self._sql("write"):
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                for start in range(0, len(keys), _CHUNK):
                    chunk = list(keys[start : start + _CHUNK])
                    marks = ",".join("?" * len(chunk))
                    removed += conn.execute(
                        f"DELETE FROM results WHERE key IN ({marks})", chunk
                    ).rowcount
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        with self._lock:
            self.unreadable += removed
        return removed

    @contextlib.contextmanager
    def _sql(self, what: str) -> Any:
        """Any SQLite failure inside becomes one CacheError naming the file."""
        try:
            yield
        except sqlite3.DatabaseError as err:
            raise CacheError(
                f"cache {self.path}: cannot {what} ({err}); move the file away and run again "
                "(answers are recomputed)."
            ) from None

    def put_many(self, rows: Sequence[tuple[str, str, Any, Any]]) -> int:
        """Store ``(key, kind, request, value)`` rows in one committed transaction; keys that
        are already stored keep their first value. Returns the number of rows added."""
        if not rows:
            return 0
        now = time.time()
        params = [
            (key, kind, canonical_json(request), json.dumps(value, ensure_ascii=False), now)
            for key, kind, request, value in rows
        ]
        with self._sql("write"):
            return self._put(params)

    def _put(self, params: list[tuple[Any, ...]]) -> int:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            before = conn.total_changes
            conn.executemany(
                "INSERT OR IGNORE INTO results (key, kind, request, value, "
                "created_at) VALUES (?, ?, ?, ?, ?)",
                params,
            )
            added = conn.total_changes - before
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return added

    def __len__(self) -> int:
        with self._sql("read"):
            return int(self._connection().execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def count(self, kind: str | None = None) -> int:
        """Number of stored results, of one call kind or of all."""
        if kind is None:
            return len(self)
        row = (
            self._connection()
            .execute("SELECT COUNT(*) FROM results WHERE kind = ?", (kind,))
            .fetchone()
        )
        return int(row[0])

    def integrity_ok(self) -> bool:
        """SQLite's own full consistency check of the file."""
        row = self._connection().execute("PRAGMA integrity_check").fetchone()
        return row is not None and row[0] == "ok"
