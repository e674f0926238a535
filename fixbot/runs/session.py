"""One fix run over a pinned snapshot: thread id, checkpointed graph, resume, FixResult.

Everything real (model, sandbox, checkpointer) comes in as one Clients value (clients.py).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, StateSnapshot

from fixbot.checks import reader
from fixbot.config import Config, checks_of
from fixbot.errors import UsageError
from fixbot.loop import (
    Deps,
    FixState,
    build_graph,
    initial_state,
    recorded_checks,
    recursion_limit,
    validate,
)
from fixbot.records import FailedJob
from fixbot.report import FixResult
from fixbot.runs.clients import NO_MODEL, Clients, build_deps
from fixbot.runs.results import result_of
from fixbot.snapshot import Snapshot, resolve_commit, take_snapshot


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
    review = {**asdict(request.config.review), "base_url": None}
    settings = {**request.config.to_dict(), "base_url": None, "review": review}
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
    clients: Clients,
) -> FixResult:
    """Run the graph for this request, resume it after a crash, or report it when it ended
    (or waits for a human): the same request never repeats work that was recorded."""
    thread = thread_id(request)
    graph = graph_for(clients)
    saved = graph.get_state(run_config(thread, request.config.max_iterations))
    start: FixState | Command[Any] | None = None
    if not saved.values:
        start = start_state(
            thread,
            request.commit,
            request.config,
            clients,
            hint=request.hint,
            ci_jobs=request.ci_jobs,
        )
    elif not saved.next or waiting(saved):
        clients.observe("resumed", {"thread_id": thread, "finished": True})
        return result_of(saved.values, request.repo, request.config, clients.sandbox)
    else:
        clients.observe("resumed", {"thread_id": thread, "next": list(saved.next)})
    return drive(graph, thread, start, request.repo, request.commit, request.config, clients)


def start_state(
    thread: str,
    commit: str,
    config: Config,
    clients: Clients,
    *,
    hint: str = "",
    ci_jobs: tuple[FailedJob, ...] = (),
    manifest: Mapping[str, str] | None = None,
) -> FixState:
    """A new run's first state, its budgets from the config and its deadline from the clients'
    clock: every root starts a run from this (the manifest is filled from the snapshot when
    the run is driven)."""
    return initial_state(
        thread_id=thread,
        commit=commit,
        manifest=dict(manifest or {}),
        max_iterations=config.max_iterations,
        token_budget=config.budget.tokens,
        cost_budget=config.budget.cost_usd or 0.0,
        deadline=clients.clock() + config.budget.wall_clock_seconds,
        hint=hint,
        ci_jobs=ci_jobs,
    )


def request_for(
    root: Path,
    commit: str,
    config: Config,
    *,
    hint: str = "",
    salt: str = "",
    ci_jobs: tuple[FailedJob, ...] = (),
) -> FixRequest:
    """The request to fix `commit` with this config; UsageError when it names no model."""
    if not config.model:
        raise UsageError(NO_MODEL)
    return FixRequest(
        repo=root,
        commit=commit,
        config=config,
        model_name=config.model,
        base_url=config.base_url,
        hint=hint,
        salt=salt,
        ci_jobs=ci_jobs,
    )


def resume_fix(
    thread: str,
    answer: dict[str, Any],
    *,
    repo: Path,
    config: Config,
    clients: Clients,
) -> FixResult:
    """Answer the question a paused run asked (Command(resume=answer)) and run on."""
    graph = graph_for(clients)
    saved = graph.get_state(run_config(thread, config.max_iterations))
    if not saved.values:
        raise UsageError(f"no run is recorded under thread {thread!r} in this state database")
    if not waiting(saved):
        status = saved.values.get("status", "unknown")
        raise UsageError(
            f"thread {thread!r} has no pending question (status {status}): it was already "
            "answered, or it never escalated"
        )
    validate(saved.values)
    iterations = saved.values["max_iterations"] + config.resume.max_extra_iterations
    commit = saved.values["commit"]
    return drive(graph, thread, Command(resume=answer), repo, commit, config, clients, iterations)


def recorded(thread: str, checkpointer: BaseCheckpointSaver[Any]) -> tuple[str, str] | None:
    """(status, commit) of the run recorded under `thread`, status "waiting" while it waits
    for a human's answer; None when this state database holds no such run."""
    saved = build_graph(checkpointer).get_state(run_config(thread, 1))
    if not saved.values:
        return None
    status = "waiting" if waiting(saved) else str(saved.values.get("status", "unknown"))
    return status, str(saved.values.get("commit", ""))


def waiting(saved: StateSnapshot) -> bool:
    """The run is paused in await_human for an answer."""
    return any(task.interrupts for task in saved.tasks)


def run_config(thread: str, iterations: int) -> Any:
    return {"configurable": {"thread_id": thread}, "recursion_limit": recursion_limit(iterations)}


def drive(
    graph: Any,
    thread: str,
    start: FixState | Command[Any] | None,
    repo: Path,
    commit: str,
    config: Config,
    clients: Clients,
    iterations: int | None = None,
) -> FixResult:
    """Snapshot the commit, build the nodes' dependencies, and stream the graph to its end (or
    its next interrupt), every step checkpointed before the next begins."""
    workdir = Path(tempfile.mkdtemp(prefix="fixbot-run-"))
    try:
        if not isinstance(start, dict):
            saved = graph.get_state(run_config(thread, 1)).values
            validate(saved)
            config = judged_by(config, saved)
        deps = deps_for(clients, config, repo, commit, workdir)
        snapshot = deps.snapshot
        if isinstance(start, dict):
            start = cast(FixState, {**start, **started_with(config, snapshot)})
            validate(start)
        settings = run_config(thread, iterations or config.max_iterations)
        # durability="sync": each step's checkpoint is on disk before the next step starts,
        # so a crash never loses a model reply or a check result that was already paid for.
        for chunk in graph.stream(
            start, settings, context=deps, stream_mode="updates", durability="sync"
        ):
            for node, update in chunk.items():
                if node == "__interrupt__":
                    clients.observe("paused", {"thread_id": thread})
                else:
                    clients.observe(node, update if isinstance(update, dict) else {})
        return result_of(graph.get_state(settings).values, repo, config, clients.sandbox)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def judged_by(config: Config, state: Mapping[str, Any]) -> Config:
    """The config a resumed run (an answer, a crash, a fork, a served resume) is judged by: the
    checks its baseline ran, recorded in its state, not those the config gives now (the Action's
    came from a failed CI run that a `/fix` comment does not carry; a configuration may have
    changed since), and the protected globs it started with beside the config's (a glob dropped
    since still protects). A state recorded before fixbot kept them: the config's (the files of
    its manifest stay protected all the same: attempts.screened)."""
    recorded = recorded_checks(state)
    globs = tuple(dict.fromkeys((*config.protected_paths, *state.get("protected_globs", []))))
    return replace(config, checks=recorded or config.checks, protected_paths=globs)


def started_with(config: Config, snapshot: Snapshot) -> dict[str, Any]:
    """What a run of this snapshot records in its state when it starts (a resume is judged by
    it): its manifest of protected files, its checks and its protected globs."""
    return {
        "manifest": dict(snapshot.manifest),
        "checks": [asdict(check) for check in checks_of(config, reader(snapshot.tree))],
        "protected_globs": list(config.protected_paths),
    }


def recorded_at(repo: Path, commit: str, config: Config) -> dict[str, Any]:
    """started_with for a commit, read from its own export (the server records it when it pins
    the commit, before the run can pause)."""
    workdir = Path(tempfile.mkdtemp(prefix="fixbot-checks-"))
    try:
        return started_with(config, take_snapshot(repo, config.protected_paths, workdir, commit))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def deps_for(clients: Clients, config: Config, repo: Path, commit: str, workdir: Path) -> Deps:
    """What the graph's nodes run with for `commit` (and the configured base), exported under
    `workdir`: every root (the CLI, the Action, the server, the bench) drives the loop with
    these."""
    snapshot, base = snapshots(repo, commit, config, workdir)
    return build_deps(clients, config, snapshot, base)


def snapshots(
    repo: Path, commit: str, config: Config, workdir: Path
) -> tuple[Snapshot, Snapshot | None]:
    """The commit (and the configured base) exported under `workdir`."""
    snapshot = take_snapshot(repo, config.protected_paths, workdir, commit)
    if not config.base:
        return snapshot, None
    (workdir / "base").mkdir()
    base_commit = resolve_commit(repo, config.base)
    return snapshot, take_snapshot(repo, config.protected_paths, workdir / "base", base_commit)


def graph_for(clients: Clients) -> Any:
    """The compiled loop over these clients' checkpointer and store."""
    return build_graph(clients.checkpointer, clock=clients.clock, store=clients.store)
