"""What the graph's nodes run with: the model, the sandbox, the snapshot and the config.

They arrive through the graph's runtime context, never through state, so checkpoints hold only
data and never a secret. `runs.build_deps` is the one place that builds them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fixbot.checks import IndexSettings
from fixbot.config import Config
from fixbot.model import Model
from fixbot.sandbox import Sandbox
from fixbot.snapshot import Snapshot

Update = dict[str, Any]  # what a node returns: the state fields it changed


@dataclass(frozen=True)
class Deps:
    model: Model
    sandbox: Sandbox
    snapshot: Snapshot
    config: Config
    files: tuple[str, ...]  # every file of the snapshot, repo-relative, sorted
    base_snapshot: Snapshot | None = None
    known_secrets: tuple[str, ...] = ()  # the run's own credentials: never sent to the model
    clock: Callable[[], float] = time.time
    repository: str = ""  # the repository's identity: its lessons' namespace
    strong_model: Model | None = None  # asked once config.strong_after attempts have failed
    reviewer: Model | None = None  # reviews the verified diff (config.review); None: no review
    # the host's package-index settings, for the prepare step
    index: IndexSettings = field(default_factory=IndexSettings)

    @property
    def protected_globs(self) -> list[str]:
        return list(self.config.protected_paths)
