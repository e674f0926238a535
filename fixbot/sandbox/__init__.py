"""The Sandbox protocol: run one command over one attempt's workspace, contained.

A backend mounts `workspace` read-write at WORKSPACE and `outputs` (fixbot's report folder, outside
the workspace) at OUTPUTS, makes each path in `readonly` (relative to the workspace) read-only,
gives the command no network, no root, the `limits`, and an environment of BASE_ENV, PATH and
the `env` fixbot passes (never the host's), and kills
everything it started when the command ends or times out. A failure of the sandbox itself raises
`SandboxFailed`; whatever the command does is reported in the returned `Completed`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fixbot.proc import Completed

WORKSPACE = "/workspace"
OUTPUTS = "/fixbot-out"

# The whole environment a candidate sees, apart from PATH, which the backend sets.
BASE_ENV: Mapping[str, str] = {
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONNOUSERSITE": "1",
    "PYTHONUNBUFFERED": "1",
    "NO_COLOR": "1",
    "CI": "true",
}


@dataclass(frozen=True)
class Limits:
    timeout_seconds: float = 300
    memory_mb: int = 2048
    cpus: float = 2.0
    pids: int = 512
    file_size_mb: int = 512
    tmp_size_mb: int = 256
    output_bytes: int = 512 * 1024


DEFAULT_LIMITS = Limits()


class Sandbox(Protocol):
    name: str

    def run(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        outputs: Path,
        readonly: Sequence[str] = (),
        limits: Limits = DEFAULT_LIMITS,
        env: Mapping[str, str] | None = None,
    ) -> Completed: ...

    def describe(self) -> str:
        """One line naming the backend and its version, for the evidence."""
        ...

    def close(self) -> None:
        """Release what the backend holds (the Docker client); runs are all over by then."""
        ...
