"""One fix run over a pinned snapshot: thread id, checkpointed graph, resume, FixResult.

Everything real (model, sandbox, checkpointer) comes in as arguments; cli.py builds them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore
from langgraph.types import Command, StateSnapshot

from fixbot.config import Config
from fixbot.errors import UsageError
from fixbot.llm import Model
from fixbot.loop.budget import unpriced
from fixbot.loop.graph import build_graph, recursion_limit
from fixbot.loop.nodes import Deps
from fixbot.loop.state import FixState, initial_state, validate
from fixbot.records import Attempt, FailedJob, round_firsts
from fixbot.report import result as report
from fixbot.report.result import FixResult
from fixbot.sandbox import Sandbox
from fixbot.snapshot.protected import (
    manifest_digest,
    repository_identity,
    resolve_commit,
    take_snapshot,
)

Observer = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class FixRequest:
    repo: Path
    commit: str
    config: Config
    model_name: str
    base_url: str | None
    hint: str = ""
    salt: str = ""  # set (to anything new) to start a fresh thread instead of resuming
    # The failed CI run, as context; not part of the thread's identity (logs differ per rerun).
    ci_jobs: tuple[FailedJob, ...] = ()


def thread_id(request: FixRequest) -> str:
    """The same repository, commit and settings always map to the same thread.

    The endpoint is left out: the same model behind a moved endpoint continues the same run.
    """
    settings = {**request.config.to_dict(), "base_url": None}
    identity = json.dumps(
        [
            str(request.repo),
            request.commit,
            settings,
            request.model_name,
            request.hint,
            request.salt,
        ],
        sort_keys=True,
    )
    return "fix-" + hashlib.sha256(identity.encode()).hexdigest()[:20]


def run_fix(
    request: FixRequest,
    *,
    model: Model,
    strong_model: Model | None = None,
    sandbox: Sandbox,
    checkpointer: BaseCheckpointSaver[Any],
    store: BaseStore | None = None,
    observe: Observer = lambda node, update: None,
    clock: Callable[[], float] = time.time,
    secrets: Sequence[str] = (),
) -> FixResult:
    """Run the graph for this request, resume it after a crash, or report it when it ended
    (or waits for a human): the same request never repeats work that was recorded."""
    thread = thread_id(request)
    graph = build_graph(checkpointer, clock=clock, store=store)
    saved = graph.get_state(_run_config(thread, request.config.max_iterations))
    start: FixState | Command[Any] | None = None
    if not saved.values:
        start = initial_state(
            thread_id=thread,
            commit=request.commit,
            manifest={},  # filled from the snapshot below
            max_iterations=request.config.max_iterations,
            token_budget=request.config.budget.tokens,
            cost_budget=request.config.budget.cost_usd or 0.0,
            deadline=clock() + request.config.budget.wall_clock_seconds,
            hint=request.hint,
            ci_jobs=request.ci_jobs,
        )
    elif not saved.next or _waiting(saved):
        observe("resumed", {"thread_id": thread, "finished": True})
        return _result(saved.values, request.repo, request.config, sandbox)
    else:
        observe("resumed", {"thread_id": thread, "next": list(saved.next)})
    return _drive(
        graph,
        thread,
        start,
        request.repo,
        request.commit,
        request.config,
        model=model,
        strong_model=strong_model,
        sandbox=sandbox,
        observe=observe,
        clock=clock,
        secrets=secrets,
    )


def resume_fix(
    thread: str,
    answer: dict[str, Any],
    *,
    repo: Path,
    config: Config,
    model: Model,
    strong_model: Model | None = None,
    sandbox: Sandbox,
    checkpointer: BaseCheckpointSaver[Any],
    store: BaseStore | None = None,
    observe: Observer = lambda node, update: None,
    clock: Callable[[], float] = time.time,
    secrets: Sequence[str] = (),
) -> FixResult:
    """Answer the question a paused run asked (Command(resume=answer)) and run on."""
    graph = build_graph(checkpointer, clock=clock, store=store)
    saved = graph.get_state(_run_config(thread, config.max_iterations))
    if not saved.values:
        raise UsageError(f"no run is recorded under thread {thread!r} in this state database")
    if not _waiting(saved):
        status = saved.values.get("status", "unknown")
        raise UsageError(
            f"thread {thread!r} has no pending question (status {status}): it was already "
            "answered, or it never escalated"
        )
    validate(saved.values)
    return _drive(
        graph,
        thread,
        Command(resume=answer),
        repo,
        saved.values["commit"],
        config,
        model=model,
        strong_model=strong_model,
        sandbox=sandbox,
        observe=observe,
        clock=clock,
        iterations=saved.values["max_iterations"] + config.resume.max_extra_iterations,
        secrets=secrets,
    )


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
    model: Model,
    strong_model: Model | None = None,
    sandbox: Sandbox,
    checkpointer: BaseCheckpointSaver[Any],
    store: BaseStore | None = None,
    observe: Observer = lambda node, update: None,
    clock: Callable[[], float] = time.time,
    secrets: Sequence[str] = (),
) -> FixResult:
    """Continue `thread` from the moment attempt `from_attempt` was judged, in a new thread
    (the original untouched), with this model and hint and a budget grown as an answer grows
    it (capped)."""
    graph = build_graph(checkpointer, clock=clock, store=store)
    new = fork_id(thread, from_attempt, model.name, hint)
    if not graph.get_state(_run_config(new, 1)).values:
        point = _judged(graph, thread, from_attempt)
        wanted = extra_iterations or config.resume.default_extra_iterations
        extra = max(1, min(wanted, config.resume.max_extra_iterations))
        values = point.values
        # The new thread starts at the fork point: the state as attempt `from_attempt` was
        # judged, as if judge had just written it; the original thread is only read.
        graph.update_state(
            _run_config(new, 1),
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
                "deadline": clock() + config.resume.extra_seconds,
                "strikes": 0,
                "stuck_reason": "",
            },
            as_node="judge",
        )
        observe("resumed", {"thread_id": new, "forked_from": thread, "attempt": from_attempt})
    saved = graph.get_state(_run_config(new, 1))
    if not saved.next or _waiting(saved):
        return _result(saved.values, repo, config, sandbox)
    return _drive(
        graph,
        new,
        None,
        repo,
        saved.values["commit"],
        config,
        model=model,
        strong_model=strong_model,
        sandbox=sandbox,
        observe=observe,
        clock=clock,
        iterations=saved.values["max_iterations"],
        secrets=secrets,
    )


JUDGED = ("pass", "fail", "rejected")


def _judged(graph: Any, thread: str, number: int) -> StateSnapshot:
    """The checkpoint right after attempt `number` of `thread` was judged."""
    found: StateSnapshot | None = None
    last = 0
    longest: list[Attempt] = []  # the newest checkpoint's attempts
    snapshot: StateSnapshot
    for snapshot in graph.get_state_history(_run_config(thread, 1)):
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


def recorded(thread: str, checkpointer: BaseCheckpointSaver[Any]) -> tuple[str, str] | None:
    """(status, commit) of the run recorded under `thread`, status "waiting" while it waits
    for a human's answer; None when this state database holds no such run."""
    saved = build_graph(checkpointer).get_state(_run_config(thread, 1))
    if not saved.values:
        return None
    status = "waiting" if _waiting(saved) else str(saved.values.get("status", "unknown"))
    return status, str(saved.values.get("commit", ""))


def _waiting(saved: StateSnapshot) -> bool:
    """The run is paused in await_human for an answer."""
    return any(task.interrupts for task in saved.tasks)


def _run_config(thread: str, iterations: int) -> Any:
    return {"configurable": {"thread_id": thread}, "recursion_limit": recursion_limit(iterations)}


def _drive(
    graph: Any,
    thread: str,
    start: FixState | Command[Any] | None,
    repo: Path,
    commit: str,
    config: Config,
    *,
    model: Model,
    strong_model: Model | None = None,
    sandbox: Sandbox,
    observe: Observer,
    clock: Callable[[], float],
    iterations: int | None = None,
    secrets: Sequence[str] = (),
) -> FixResult:
    workdir = Path(tempfile.mkdtemp(prefix="fixbot-run-"))
    try:
        snapshot = take_snapshot(repo, config.protected_paths, workdir, commit)
        base = None
        if config.base:
            (workdir / "base").mkdir()
            base_commit = resolve_commit(repo, config.base)
            base = take_snapshot(repo, config.protected_paths, workdir / "base", base_commit)
        missing = unpriced(config, [model.name, strong_model.name if strong_model else None])
        if missing:
            raise UsageError(
                f"budget.cost_usd needs a price for {', '.join(missing)}: add it to prices in "
                ".fixbot.yml (US dollars per million prompt and completion tokens)"
            )
        deps = Deps(
            model=model,
            sandbox=sandbox,
            snapshot=snapshot,
            config=config,
            base_snapshot=base,
            clock=clock,
            known_secrets=tuple(secrets),
            repository=repository_identity(repo),
            strong_model=strong_model,
        )
        if isinstance(start, dict):
            start = FixState(**{**start, "manifest": dict(snapshot.manifest)})
            validate(start)
        else:
            validate(graph.get_state(_run_config(thread, 1)).values)
        run_config = _run_config(thread, iterations or config.max_iterations)
        # durability="sync": each step's checkpoint is on disk before the next step starts,
        # so a crash never loses a model reply or a check result that was already paid for.
        for chunk in graph.stream(
            start, run_config, context=deps, stream_mode="updates", durability="sync"
        ):
            for node, update in chunk.items():
                if node == "__interrupt__":
                    observe("paused", {"thread_id": thread})
                else:
                    observe(node, update if isinstance(update, dict) else {})
        return _result(graph.get_state(run_config).values, repo, config, sandbox)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _result(state: Any, repo: Path, config: Config, sandbox: Sandbox) -> FixResult:
    manifest = state["manifest"]
    return report.from_state(
        state,
        repo=str(repo),
        sandbox=sandbox.describe(),
        config=config.to_dict(),
        manifest_sha256=manifest_digest(manifest),
        protected=sorted(manifest),
    )
