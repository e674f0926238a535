"""Where run state lives: the checkpointer for a run's thread.

SQLite by default (a file under the repository's .fixbot/ folder), in WAL mode with
synchronous=NORMAL: every checkpoint is on disk before the next step starts, so a killed
process loses nothing, without an fsync per step.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver


@contextmanager
def sqlite_checkpointer(path: Path) -> Iterator[SqliteSaver]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path, check_same_thread=False)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        yield SqliteSaver(db)
