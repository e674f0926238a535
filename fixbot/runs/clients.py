"""The one assembly of a run's real clients, for every root (the CLI, the Action, the server).

open_clients(...)   the sandbox, the thread's lock, the checkpointer and the store, the
                    model (and the strong one, and the reviewer), released in reverse order
build_deps(...)     what the graph's nodes run with, for one snapshot
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from fixbot.checks import IndexSettings, index_settings
from fixbot.config import Config
from fixbot.errors import UsageError
from fixbot.loop import Deps, unpriced
from fixbot.model import Model, OpenAIModel
from fixbot.paths import StateDir
from fixbot.runs.store import checkpointer_for, store_for, thread_lock
from fixbot.sandbox import Backend, Sandbox, choose
from fixbot.secrets import CREDENTIALS
from fixbot.snapshot import Snapshot, repo_files, repository_identity

SECRET_VARIABLES = CREDENTIALS  # never logged, never sent to the model, never in an output
NO_MODEL = "no model named: pass --model, set FIXBOT_MODEL, or set model in .fixbot.yml"

Observer = Callable[[str, dict[str, Any]], None]


def _ignore(node: str, update: dict[str, Any]) -> None:
    """The default observer: progress goes nowhere."""


@dataclass(frozen=True)
class Clients:
    """Everything real a run drives the graph with."""

    model: Model
    sandbox: Sandbox
    checkpointer: BaseCheckpointSaver[Any] | None
    store: BaseStore | None = None
    strong_model: Model | None = None
    reviewer: Model | None = None  # reviews the verified diff (config.review)
    secrets: tuple[str, ...] = field(default=(), repr=False)
    observe: Observer = _ignore
    clock: Callable[[], float] = time.time
    index: IndexSettings = field(default_factory=IndexSettings)  # for the prepare step


def secrets_in(env: Mapping[str, str], extra: Sequence[str] = ()) -> tuple[str, ...]:
    """The credentials this environment holds (values of SECRET_VARIABLES), and `extra`."""
    return tuple(dict.fromkeys([*(env[k] for k in SECRET_VARIABLES if env.get(k)), *extra]))


def choose_sandbox(
    backend: Backend, env: Mapping[str, str], *, image: str | None = None
) -> Sandbox:
    """The backend asked for; DOCKER_* variables say where the Docker engine is."""
    docker_env = {k: v for k, v in env.items() if k.startswith("DOCKER_")}
    return choose(backend, image=image, environment=docker_env)


@dataclass(frozen=True)
class Models:
    model: Model
    strong: Model | None = None
    reviewer: Model | None = None


def models(config: Config, env: Mapping[str, str], stack: ExitStack) -> Models:
    """The model (and the strong one and the reviewer, when configured), each closed with
    `stack`; the reviewer at its own endpoint when it has one, with the same API key."""
    if not config.model:
        raise UsageError(NO_MODEL)

    def opened(name: str, base_url: str | None = config.base_url) -> Model:
        client = OpenAIModel(
            model=name,
            api_key=env.get("OPENAI_API_KEY"),
            base_url=base_url,
            timeout_seconds=config.request_timeout_seconds,
            context_tokens=config.model_context_tokens,
        )
        if config.model_context_tokens is None:
            client.discover_window()
        return stack.enter_context(client)

    review = config.review
    return Models(
        opened(config.model),
        opened(config.strong_model) if config.strong_model else None,
        opened(review.model, review.base_url or config.base_url) if review.model else None,
    )


@contextmanager
def open_clients(
    root: Path,
    thread: str,
    config: Config,
    env: Mapping[str, str],
    *,
    secrets: Sequence[str] = (),
    observe: Observer = _ignore,
    hosted: BaseStore | Literal[False] | None = False,
) -> Iterator[Clients]:
    """The clients one run of `thread` in the repository at `root` needs, held for the run:
    the thread's lock first (a second run of it exits 3), the rest released in reverse.
    `hosted`: the LangGraph server's run, whose own checkpointer holds the thread (no lock and
    no state database here) and whose store (given, or None) keeps the lessons."""
    state = StateDir(root)
    database_url = env.get("FIXBOT_DATABASE_URL")
    with ExitStack() as stack:
        opened = models(config, env, stack)
        sandbox = stack.enter_context(
            closing(choose_sandbox(config.sandbox.backend, env, image=config.sandbox.image))
        )
        checkpointer: BaseCheckpointSaver[Any] | None = None
        store: BaseStore | None = None
        if hosted is False:
            stack.enter_context(thread_lock(state, thread, database_url))
            checkpointer = stack.enter_context(checkpointer_for(state, database_url))
            store = stack.enter_context(store_for(state, database_url))
        else:
            store = hosted
        index = index_settings(env)
        yield Clients(
            model=opened.model,
            sandbox=sandbox,
            checkpointer=checkpointer,
            store=store,
            strong_model=opened.strong,
            reviewer=opened.reviewer,
            secrets=secrets_in(env, [*secrets, *index.secrets]),
            observe=observe,
            index=index,
        )


def build_deps(
    clients: Clients,
    config: Config,
    snapshot: Snapshot,
    base: Snapshot | None = None,
) -> Deps:
    """What the graph's nodes run with for this snapshot (and the configured base)."""
    used = [clients.model, clients.strong_model, clients.reviewer]
    missing = unpriced(config, [model.name for model in used if model is not None])
    if missing:
        raise UsageError(
            f"budget.cost_usd needs a price for {', '.join(missing)}: add it to prices in "
            ".fixbot.yml (US dollars per million prompt and completion tokens)"
        )
    return Deps(
        model=clients.model,
        sandbox=clients.sandbox,
        snapshot=snapshot,
        config=config,
        files=tuple(repo_files(snapshot)),
        base_snapshot=base,
        clock=clients.clock,
        known_secrets=clients.secrets,
        repository=repository_identity(snapshot.repo),
        strong_model=clients.strong_model,
        reviewer=clients.reviewer,
        index=clients.index,
    )
