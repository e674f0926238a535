"""Where fixbot keeps its own files: the `.fixbot/` folder of the repository it fixes.

    .fixbot/
      state.db        checkpoints and lessons (SQLite, WAL), unless FIXBOT_DATABASE_URL is set
      locks/THREAD    one active run per thread (flock)
      logs/THREAD/    older attempts' full check results, written once (attempt-N.json)
      envs/KEY        prepared environments (setup_command), cached by what they were built from
      out/            the last run's outputs (evidence.json, report.md, fix.diff) unless --out

The one spelling of this layout: every other module asks a StateDir.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DIRNAME = ".fixbot"


@dataclass(frozen=True)
class StateDir:
    repo: Path  # the repository's root

    @property
    def root(self) -> Path:
        return self.repo / DIRNAME

    @property
    def db(self) -> Path:
        return self.root / "state.db"

    @property
    def locks(self) -> Path:
        return self.root / "locks"

    @property
    def envs(self) -> Path:
        return self.root / "envs"

    @property
    def out(self) -> Path:
        return self.root / "out"

    def logs(self, thread: str) -> Path:
        return self.root / "logs" / thread


def is_state_path(path: str) -> bool:
    """Whether a repository-relative path is inside fixbot's own folder."""
    return path == DIRNAME or path.startswith(DIRNAME + "/")
