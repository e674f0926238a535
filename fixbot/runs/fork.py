"""`fixbot fork`: continue a thread from an earlier attempt, in a new thread, with other settings.

The original thread is only read; the new one starts from the checkpoint at which the attempt
was judged, its budget grown as an answer grows it (capped by `resume.*`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph.types import StateSnapshot

from fixbot.config import Config
from fixbot.errors import UsageError
from fixbot.records import Attempt, round_firsts
from fixbot.report import FixResult
from fixbot.runs.clients import Clients
from fixbot.runs.results import result_of
from fixbot.runs.session import drive, graph_for, run_config, waiting


def fork_id(thread: str, from_attempt: int, model_name: str, hint: str) -> str:
    """The same fork asked again maps to the same new thread (and continues it)."""
    identity = json.dumps([thread, from_attempt, model_name, hint])
    return f"{thread}-fork-" + hashlib.sha256(identity.encode()).hexdigest()[:8]


def fork_fix(
    thread: str,
    from_attempt: int,
    *,
    hint: str,
    extra_iterations: int | None,
    repo: Path,
    config: Config,
    clients: Clients,
) -> FixResult:
    """Continue `thread` from the moment attempt `from_attempt` was judged, in a new thread
    (the original untouched), with this model and hint and a budget grown as an answer grows
    it (capped)."""
    graph = graph_for(clients)
    new = fork_id(thread, from_attempt, clients.model.name, hint)
    if not graph.get_state(run_config(new, 1)).values:
        point = _judged(graph, thread, from_attempt)
        wanted = extra_iterations or config.resume.default_extra_iterations
        extra = max(1, min(wanted, config.resume.max_extra_iterations))
        values = point.values
        # The new thread starts at the fork point: the state as attempt `from_attempt` was
        # judged, as if judge had just written it; the original thread is only read.
        graph.update_state(
            run_config(new, 1),
            {
                **values,
                "thread_id": new,
                "hint": hint or values["hint"],
                "max_iterations": from_attempt + extra,
                "token_budget": values["tokens_used"] + config.resume.extra_tokens,
                "cost_budget": (
                    values["cost_used"] + config.resume.extra_cost_usd
                    if values["cost_budget"]
                    else 0.0
                ),
                "deadline": clients.clock() + config.resume.extra_seconds,
                "strikes": 0,
                "stuck_reason": "",
            },
            as_node="judge",
        )
        clients.observe(
            "resumed", {"thread_id": new, "forked_from": thread, "attempt": from_attempt}
        )
    saved = graph.get_state(run_config(new, 1))
    if not saved.next or waiting(saved):
        return result_of(saved.values, repo, config, clients.sandbox)
    iterations = saved.values["max_iterations"]
    return drive(graph, new, None, repo, saved.values["commit"], config, clients, iterations)


JUDGED = ("pass", "fail", "rejected")


def _judged(graph: Any, thread: str, number: int) -> StateSnapshot:
    """The checkpoint right after attempt `number` of `thread` was judged."""
    found: StateSnapshot | None = None
    last = 0
    longest: list[Attempt] = []  # the newest checkpoint's attempts
    snapshot: StateSnapshot
    for snapshot in graph.get_state_history(run_config(thread, 1)):
        values = snapshot.values
        attempts = values.get("attempts", [])
        newest = attempts[-1]["number"] if attempts else 0
        if newest > last:
            last, longest = newest, attempts
        judged = values.get("current") is None and values.get("verdict") in JUDGED
        if attempts and newest == number and judged:
            found = snapshot  # the history runs newest first: keep the earliest match
    if not last:
        raise UsageError(f"no run with attempts is recorded under thread {thread!r}")
    end = _round_end(longest, number) if found is None else None
    if end is not None:
        raise UsageError(
            f"attempt {number} of thread {thread!r} was one of a round of parallel candidates "
            f"judged together; fork from the round's end, attempt {end}"
        )
    if found is None:
        raise UsageError(f"thread {thread!r} has no attempt {number} (it has {last})")
    return found


def _round_end(attempts: Sequence[Attempt], number: int) -> int | None:
    """The last attempt of the parallel round that attempt `number` belongs to, if it does."""
    for attempt, first in zip(attempts, round_firsts(attempts), strict=True):
        size = int(attempt.get("round_size", 1))
        if attempt["number"] == number and size > 1:
            return first + size - 1
    return None
