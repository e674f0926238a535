"""Driving the loop over a checkpointer: run, resume, fork; one Clients assembly for every root.

open_clients / build_deps     the real clients of one run, and the nodes' dependencies
run_fix / resume_fix          a request run (or resumed after a crash), an answer applied
fork_fix                      a thread continued from an earlier attempt, in a new thread
reverify                      `fixbot verify`: a recorded fix checked again from scratch
"""

from __future__ import annotations

from fixbot.runs.answers import answer, unanswerable
from fixbot.runs.clients import (
    NO_MODEL,
    SECRET_VARIABLES,
    Clients,
    Observer,
    build_deps,
    choose_sandbox,
    models,
    open_clients,
    secrets_in,
)
from fixbot.runs.fork import fork_fix, fork_id
from fixbot.runs.reverify import Reverification, load_evidence, reverify
from fixbot.runs.session import (
    FixRequest,
    from_state,
    graph_for,
    recorded,
    resume_fix,
    run_config,
    run_fix,
    snapshots,
    thread_id,
    waiting,
)
from fixbot.runs.store import (
    RunInProgress,
    checkpointer_for,
    prune_threads,
    sqlite_checkpointer,
    store_for,
    thread_lock,
)

__all__ = [
    "NO_MODEL",
    "SECRET_VARIABLES",
    "Clients",
    "FixRequest",
    "Observer",
    "Reverification",
    "RunInProgress",
    "answer",
    "build_deps",
    "checkpointer_for",
    "choose_sandbox",
    "fork_fix",
    "fork_id",
    "from_state",
    "graph_for",
    "load_evidence",
    "models",
    "open_clients",
    "prune_threads",
    "recorded",
    "resume_fix",
    "reverify",
    "run_config",
    "run_fix",
    "secrets_in",
    "snapshots",
    "sqlite_checkpointer",
    "store_for",
    "thread_id",
    "thread_lock",
    "unanswerable",
    "waiting",
]
