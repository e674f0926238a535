"""fixbot's graph served by LangGraph's own server (langgraph.json): threads, runs, interrupts.

A second composition root beside cli.py. The server hands each run JSON settings as its context
(`RunSettings`: repository, commit, model, endpoint); the API key comes from this process's
environment, never from a request. Two nodes wrap the loop:

    START -> pin -> fix -> END

`pin` records the thread id, the commit (HEAD unless one is named), and the checks and the
protected files a run of it starts with, so a resume snapshots the same commit and is judged by
the checks its baseline ran and the files it protected, not by the configuration it reads then.
`fix` builds the real dependencies with the same assembly as `fixbot fix` (runs.open_clients /
deps_for: the strong model, the money cap's prices, the secrets redacted) and runs the loop
(loop/graph.py) as a subgraph with them as its context: its checkpoints, its interrupt() and the
answer (`Command(resume=...)` through the runs API, as `fixbot resume` sends) live in the
server's thread, its lessons in the server's store.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from typing_extensions import TypedDict  # pydantic reads it on 3.11 (the server's schemas)

from fixbot.config import Inputs, load_config
from fixbot.errors import UsageError
from fixbot.loop import FixState, Update, build_graph, recursion_limit, validate
from fixbot.runs import deps_for, judged_by, open_clients, recorded_at, start_state
from fixbot.snapshot import find_root, pin_commit, resolve_commit


@dataclass(frozen=True)
class RunSettings:
    """A run's context in the runs API: JSON only, never a secret."""

    repo: str  # a git repository on the server's machine
    commit: str = ""  # a commit, branch or tag; default HEAD (a dirty tree is refused)
    model: str = ""  # default: $FIXBOT_MODEL, then `model` in .fixbot.yml
    # Refused unless it is the server's own endpoint: the server's key goes where this points.
    base_url: str = ""  # default: $OPENAI_BASE_URL, then `base_url`, then api.openai.com
    max_iterations: int | None = None
    sandbox: Literal["auto", "docker", "bwrap"] | None = None


class RunInput(TypedDict):
    hint: str  # "" for none; a run needs some input to start


def make_graph() -> CompiledStateGraph[FixState, RunSettings, RunInput, FixState]:
    """The factory langgraph.json names; the server calls it per request and adds its own
    checkpointer. It reads nothing until a run starts."""
    return server_graph(os.environ)


def server_graph(
    environ: Mapping[str, str],
) -> CompiledStateGraph[FixState, RunSettings, RunInput, FixState]:
    def pin(state: FixState, runtime: Runtime[RunSettings]) -> Update:
        return pin_run(settings_of(runtime), environ)

    def fix(state: FixState, runtime: Runtime[RunSettings]) -> Update:
        return run_loop(state, settings_of(runtime), environ, runtime.store)

    graph = StateGraph(FixState, context_schema=RunSettings, input_schema=RunInput)
    graph.add_node("pin", pin)
    graph.add_node("fix", fix)
    graph.add_edge(START, "pin")
    graph.add_edge("pin", "fix")
    graph.add_edge("fix", END)
    return graph.compile()


def pin_run(settings: RunSettings, environ: Mapping[str, str]) -> Update:
    """The thread, the commit, its checks and protected files, checkpointed before the loop
    can pause."""
    root = find_root(Path(settings.repo))
    commit = resolve_commit(root, settings.commit) if settings.commit else pin_commit(root)
    config = load_config(root, overrides=inputs(settings, environ).overrides())
    thread = str(get_config()["configurable"]["thread_id"])
    return {"thread_id": thread, "commit": commit, **recorded_at(root, commit, config)}


def settings_of(runtime: Runtime[RunSettings]) -> RunSettings:
    settings: RunSettings | None = runtime.context
    if settings is None:
        raise UsageError('a run needs a context naming the repository: {"repo": "/path"}')
    return settings


def run_loop(
    state: FixState,
    settings: RunSettings,
    environ: Mapping[str, str],
    store: BaseStore | None = None,
) -> Update:
    """One run (or resume) of graph.py's loop on the pinned commit; returns its final state.
    An escalation raises the subgraph's interrupt, which pauses the server's run. The clients
    are those `fixbot fix` builds (the strong model, the secrets it redacts), the lessons kept
    in the server's own store."""
    root = find_root(Path(settings.repo))
    config = judged_by(load_config(root, overrides=inputs(settings, environ).overrides()), state)
    workdir = Path(tempfile.mkdtemp(prefix="fixbot-server-"))
    thread, commit = state["thread_id"], state["commit"]
    try:
        with open_clients(root, thread, config, environ, hosted=store) as clients:
            deps = deps_for(clients, config, root, commit, workdir)
            hint, manifest = state.get("hint", ""), deps.snapshot.manifest
            start = start_state(thread, commit, config, clients, hint=hint, manifest=manifest)
            for field in ("checks", "protected_globs"):  # a thread pinned before: none
                if field in state:
                    start[field] = state[field]
            validate(start)
            # On a resume the subgraph ignores `start` and continues from its own checkpoint.
            iterations = config.max_iterations + config.resume.max_extra_iterations
            final: Update = build_graph(store=store).invoke(
                start,
                {"recursion_limit": recursion_limit(iterations)},
                context=deps,
                durability="sync",
            )
            return final
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def inputs(settings: RunSettings, environ: Mapping[str, str]) -> Inputs:
    """The run's settings over the server's defaults; never an endpoint of the run's own."""
    own = environ.get("OPENAI_BASE_URL", "")
    if settings.base_url and settings.base_url.rstrip("/") != own.rstrip("/"):
        raise UsageError(
            "a run cannot name its own base_url: the server's API key would go there; "
            "set OPENAI_BASE_URL where the server runs"
        )
    return Inputs(
        model=settings.model or None,
        max_iterations=settings.max_iterations,
        sandbox=settings.sandbox,
    ).over(environ)
