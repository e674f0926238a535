"""Where run state lives: the checkpointer for a run's threads, and the lock on a thread.

SQLite by default (`.fixbot/state.db`, see paths.py), in WAL mode with
synchronous=NORMAL: every checkpoint is on disk before the next step starts, so a killed
process loses nothing, without an fsync per step. PostgreSQL when a database URL is given
(FIXBOT_DATABASE_URL or `database_url` in the config), for many jobs sharing one store.

One active run per thread: an advisory lock (flock on a file next to the SQLite database,
pg_try_advisory_lock on PostgreSQL). Both die with the process that holds them, so a crash
never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.base import BaseStore
from langgraph.store.sqlite import SqliteStore

from fixbot.errors import EnvironmentProblem
from fixbot.paths import StateDir


class RunInProgress(EnvironmentProblem):
    """Another live process is running this thread."""


@contextmanager
def sqlite_checkpointer(path: Path) -> Iterator[SqliteSaver]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path, check_same_thread=False)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        yield SqliteSaver(db)


@contextmanager
def postgres_checkpointer(url: str) -> Iterator[BaseCheckpointSaver[Any]]:
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError as exc:  # an optional dependency
        raise EnvironmentProblem(
            "FIXBOT_DATABASE_URL needs PostgreSQL support: pip install 'fixbot[postgres]'"
        ) from exc
    try:
        with PostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            yield saver
    except Exception as exc:
        if isinstance(exc, EnvironmentProblem) or not _is_connection_error(exc):
            raise
        raise EnvironmentProblem(
            f"cannot use the PostgreSQL database: {_scrub(exc, url)}"
        ) from None


def _is_connection_error(exc: Exception) -> bool:
    return type(exc).__module__.startswith("psycopg")


def _scrub(exc: Exception, url: str) -> str:
    """The error without the URL or its password (libpq quotes parts of it)."""
    text = str(exc).replace(url, "[database url]")
    password = urlsplit(url).password
    return text.replace(password, "[redacted]") if password else text


@contextmanager
def checkpointer_for(
    state: StateDir, database_url: str | None
) -> Iterator[BaseCheckpointSaver[Any]]:
    if database_url:
        with postgres_checkpointer(database_url) as saver:
            yield saver
    else:
        with sqlite_checkpointer(state.db) as saver:
            yield saver


@contextmanager
def store_for(state: StateDir, database_url: str | None) -> Iterator[BaseStore]:
    """The long-term store (lessons) beside the checkpoints: the same SQLite file, or the same
    PostgreSQL database."""
    if database_url:
        try:
            from langgraph.store.postgres import PostgresStore
        except ImportError as exc:  # an optional dependency
            raise EnvironmentProblem(
                "FIXBOT_DATABASE_URL needs PostgreSQL support: pip install 'fixbot[postgres]'"
            ) from exc
        try:
            with PostgresStore.from_conn_string(database_url) as pg_store:
                pg_store.setup()
                yield pg_store
        except Exception as exc:
            if isinstance(exc, EnvironmentProblem) or not _is_connection_error(exc):
                raise
            raise EnvironmentProblem(
                f"cannot use the PostgreSQL database: {_scrub(exc, database_url)}"
            ) from None
        return
    path = state.db
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path, check_same_thread=False, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        sqlite_store = SqliteStore(db)
        sqlite_store.setup()
        yield sqlite_store


def stale_threads(saver: BaseCheckpointSaver[Any], older_than: float, now: float) -> list[str]:
    """Threads whose latest checkpoint is older than `older_than` seconds."""
    latest: dict[str, float] = {}
    for found in saver.list(None):
        thread = str(found.config["configurable"]["thread_id"])
        stamp = _timestamp(str(found.checkpoint.get("ts", "")))
        latest[thread] = max(latest.get(thread, 0.0), stamp)
    cutoff = now - older_than
    return sorted(thread for thread, stamp in latest.items() if stamp < cutoff)


def prune_threads(saver: BaseCheckpointSaver[Any], older_than: float, now: float) -> list[str]:
    """Delete the checkpoints of every thread idle for longer than `older_than` seconds."""
    stale = stale_threads(saver, older_than, now)
    for thread in stale:
        saver.delete_thread(thread)
    return stale


def _timestamp(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return 0.0


@contextmanager
def thread_lock(state: StateDir, thread: str, database_url: str | None = None) -> Iterator[None]:
    if database_url:
        with _postgres_lock(database_url, thread):
            yield
        return
    locks = state.locks
    locks.mkdir(parents=True, exist_ok=True)
    path = locks / f"{thread}.lock"
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = path.read_text(encoding="utf-8", errors="replace").strip() or "another process"
            raise RunInProgress(
                f"thread {thread} is already running ({holder}); wait for it to finish, or stop "
                "it: its lock goes with the process"
            ) from None
        os.ftruncate(fd, 0)
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        os.write(fd, f"pid {os.getpid()} since {since}".encode())
        yield
    finally:
        os.close(fd)


@contextmanager
def _postgres_lock(url: str, thread: str) -> Iterator[None]:
    import psycopg

    key = int.from_bytes(hashlib.sha256(thread.encode()).digest()[:8], "big", signed=True)
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise EnvironmentProblem(
            f"cannot use the PostgreSQL database: {_scrub(exc, url)}"
        ) from None
    with conn:
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        if not row or not row[0]:
            raise RunInProgress(
                f"thread {thread} is already running in another job sharing this database"
            )
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
