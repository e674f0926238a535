"""Driving the loop over a checkpointer: run, resume, fork; one Clients assembly for every root.

open_clients / deps_for      the real clients of one run, and the nodes' dependencies
run_fix / resume_fix          a request run (or resumed after a crash), an answer applied
fork_fix                      a thread continued from an earlier attempt, in a new thread
recorded_at / judged_by       what a run records when it starts; the config a resume uses
reverify                      `fixbot verify`: a recorded fix checked again from scratch
"""

from __future__ import annotations

from fixbot.runs.answers import answer, unanswerable
from fixbot.runs.clients import NO_MODEL, choose_sandbox, open_clients, secrets_in
from fixbot.runs.fork import fork_fix, fork_id
from fixbot.runs.reverify import load_evidence, reverify
from fixbot.runs.session import (
    FixRequest,
    deps_for,
    judged_by,
    recorded_at,
    request_for,
    resume_fix,
    run_fix,
    start_state,
    thread_id,
)
from fixbot.runs.store import checkpointer_for, prune_threads, store_for

__all__ = [
    "NO_MODEL",
    "FixRequest",
    "answer",
    "checkpointer_for",
    "choose_sandbox",
    "deps_for",
    "fork_fix",
    "fork_id",
    "judged_by",
    "load_evidence",
    "open_clients",
    "prune_threads",
    "recorded_at",
    "request_for",
    "resume_fix",
    "reverify",
    "run_fix",
    "secrets_in",
    "start_state",
    "store_for",
    "thread_id",
    "unanswerable",
]
