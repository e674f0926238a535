"""One fix run over a pinned snapshot: thread id, checkpointed graph, resume, FixResult.

Everything real (model, sandbox, checkpointer) comes in as arguments; cli.py builds them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from fixbot import report
from fixbot.config import Config
from fixbot.graph import build_graph, recursion_limit
from fixbot.llm import Model
from fixbot.nodes import Deps
from fixbot.report import FixResult
from fixbot.sandbox import Sandbox
from fixbot.snapshot import manifest_digest, resolve_commit, take_snapshot
from fixbot.state import FixState, initial_state, validate

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
    sandbox: Sandbox,
    checkpointer: BaseCheckpointSaver[Any],
    observe: Observer = lambda node, update: None,
    clock: Callable[[], float] = time.time,
) -> FixResult:
    """Run (or resume) the graph for this request and return its result as data."""
    config = request.config
    thread = thread_id(request)
    workdir = Path(tempfile.mkdtemp(prefix="fixbot-run-"))
    try:
        snapshot = take_snapshot(request.repo, config.protected_paths, workdir, request.commit)
        base = None
        if config.base:
            (workdir / "base").mkdir()
            base_commit = resolve_commit(request.repo, config.base)
            base = take_snapshot(
                request.repo, config.protected_paths, workdir / "base", base_commit
            )
        deps = Deps(
            model=model,
            sandbox=sandbox,
            snapshot=snapshot,
            config=config,
            hint=request.hint,
            base_snapshot=base,
            clock=clock,
        )
        graph = build_graph(checkpointer, clock=clock)
        run_config: Any = {
            "configurable": {"thread_id": thread},
            "recursion_limit": recursion_limit(config.max_iterations),
        }
        saved = graph.get_state(run_config)
        if saved.values and not saved.next:
            observe("resumed", {"thread_id": thread, "finished": True})
            state: Any = saved.values
        else:
            if saved.values:
                validate(saved.values)
                observe("resumed", {"thread_id": thread, "next": list(saved.next)})
                start: FixState | None = None
            else:
                start = initial_state(
                    thread_id=thread,
                    commit=request.commit,
                    manifest=snapshot.manifest,
                    max_iterations=config.max_iterations,
                    token_budget=config.budget.tokens,
                    deadline=clock() + config.budget.wall_clock_seconds,
                )
                validate(start)
            # durability="sync": each step's checkpoint is on disk before the next step starts,
            # so a crash never loses a model reply or a check result that was already paid for.
            for chunk in graph.stream(
                start, run_config, context=deps, stream_mode="updates", durability="sync"
            ):
                for node, update in chunk.items():
                    observe(node, update if isinstance(update, dict) else {})
            state = graph.get_state(run_config).values
        return report.from_state(
            state,
            repo=str(request.repo),
            sandbox=sandbox.describe(),
            config=config.to_dict(),
            manifest_sha256=manifest_digest(snapshot.manifest),
            protected=list(snapshot.protected),
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
