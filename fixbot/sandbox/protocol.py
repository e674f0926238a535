"""The Sandbox protocol: run one command over one attempt's workspace, contained.

A backend mounts `workspace` read-write at WORKSPACE and `outputs` (fixbot's report folder, outside
the workspace) at OUTPUTS, makes each path in `readonly` (relative to the workspace) read-only,
gives the command no network, no root, the `limits`, and an environment of BASE_ENV, PATH and
the `env` fixbot passes (never the host's), and kills
everything it started when the command ends or times out. A failure of the sandbox itself raises
`SandboxFailed`; whatever the command does is reported in the returned `Completed`.

A `layered` backend also takes `lower`: the command then sees, at WORKSPACE, `workspace` laid
over `lower` by overlayfs. `lower` (the pristine snapshot, shared by every attempt) is never
written; `workspace` holds the attempt's own files (fixbot writes the diff's files there before
the run) and receives every write the command makes, deletions as overlayfs whiteouts. The
read-only paths are then bound from `lower`. Preparing an attempt costs what its diff costs,
whatever the size of the repository.

`host_toolchain` says whether the host's Python installation is mounted at its own path inside
(bubblewrap always; Docker with the local image): then fixbot's own interpreter
(`sys.executable`) runs its ruff and mypy in the sandbox; otherwise the image's `python` does.

`prepared` is the environment fixbot's prepare step made (a virtualenv holding the repository's
dependencies): mounted read-only at PREPARED and first on PATH. `prepare` is that step itself,
the only one with a network.

`mounts` are fixbot's own host folders (the staged pytest plugin), bound read-only at the paths
named; `fds` are descriptors the command inherits at the same numbers (the report channel's
writing end), which only a backend with `passes_fds` can give it: the others get the channel
as a unix socket in a mounted folder instead.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fixbot.proc import Completed

WORKSPACE = "/workspace"
OUTPUTS = "/fixbot-out"
PREPARED = "/fixbot-env"  # the prepared environment (a virtualenv), read-only to candidates
# The prepare step's own: `python -m pip` imports the toolchain's pip, never a `pip/` or
# `venv.py` at the repository's root (the working folder is not put on sys.path).
SETUP_ENV: Mapping[str, str] = {"PYTHONSAFEPATH": "1"}

# The whole environment a candidate sees, apart from PATH, which the backend sets.
BASE_ENV: Mapping[str, str] = {
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONBREAKPOINT": "0",  # breakpoint() is a no-op: no debugger reads a .pdbrc as code
    "PYTHONNOUSERSITE": "1",
    "PYTHONUNBUFFERED": "1",
    "NO_COLOR": "1",
    "CI": "true",
}


SYSTEM_BIN = ("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin")


def prepared_env(path: str) -> dict[str, str]:
    """PATH and VIRTUAL_ENV for a command that runs in the prepared environment: its bin first,
    and fixbot's own bin not at all (a `pytest` there is fixbot's, never the project's), unless
    fixbot runs from the system's own folders."""
    own = str(Path(sys.executable).parent)
    kept = [d for d in path.split(":") if d and (d != own or d in SYSTEM_BIN)]
    return {"PATH": ":".join([f"{PREPARED}/bin", *kept]), "VIRTUAL_ENV": PREPARED}


@dataclass(frozen=True)
class Limits:
    timeout_seconds: float = 300
    memory_mb: int = 2048  # the whole sandbox: its processes and its tmpfs files (a cgroup)
    cpus: float = 2.0
    pids: int = 512
    file_size_mb: int = 512
    tmp_size_mb: int = 256
    output_bytes: int = 512 * 1024
    disk_mb: int = 1024  # what one attempt may write in all (its workspace), where it is capped


DEFAULT_LIMITS = Limits()
OOM_NOTE = "\n[fixbot: memory limit exceeded]\n"  # appended to a run the memory cap killed in
# Appended to a run ended because its process cap kept refusing new processes (a fork bomb).
PROCESS_CAP_MARK = "[fixbot: the process cap was hit and held"


def process_cap_note(pids: int) -> str:
    return f"\n{PROCESS_CAP_MARK} ({pids} processes): the run was ended]\n"


def hit_process_cap(output: str) -> bool:
    """Whether a run was ended for holding its process cap (its output's last line says so)."""
    return PROCESS_CAP_MARK in output[-200:]


@dataclass(frozen=True)
class Persona:
    """Who and where a command seems to run, in place of the sandbox's usual facts (HOME /tmp,
    /workspace, user and host `sandbox`, CI set, a per-file cap): see persona.py."""

    user: str  # the run's uid's passwd name, USER and LOGNAME
    home: str  # HOME: an empty, writable folder at the host's home path
    workspace: str  # the tree is bound here too, and the command starts here
    hostname: str
    ci: str | None  # CI as the host has it; None: unset
    file_size: int | None  # the per-file limit in bytes; None: none (the scratch caps the disk)

    # BASE_ENV's other names as the host has them (CI, LANG, NO_COLOR, TMPDIR, ...): a name
    # the host lacks is not set (None)
    kept: tuple[tuple[str, str | None], ...] = ()

    def environment(self) -> dict[str, str]:
        """BASE_ENV as this persona's run sees it (PATH and fixbot's own added by the caller):
        HOME, USER and LOGNAME the host's, and each other name only as the host has it."""
        env = {"HOME": self.home, "USER": self.user, "LOGNAME": self.user}
        if self.ci is not None:
            env["CI"] = self.ci
        env.update({name: value for name, value in self.kept if value is not None})
        return env


@dataclass(frozen=True)
class RunSpec:
    """Where and how one command runs: everything but its argv (see the module docstring)."""

    workspace: Path
    outputs: Path
    lower: Path | None = None
    prepared: Path | None = None
    readonly: Sequence[str] = ()
    limits: Limits = DEFAULT_LIMITS
    env: Mapping[str, str] | None = None
    fds: tuple[int, ...] = ()
    mounts: tuple[tuple[Path, str], ...] = ()  # (host folder, where the command sees it)
    persona: Persona | None = None  # the host's facts in place of the sandbox's (persona.py)


class Sandbox(Protocol):
    name: str
    host_toolchain: bool

    @property
    def passes_fds(self) -> bool:
        """Whether run() can hand the command inherited descriptors (`spec.fds`)."""
        ...

    @property
    def layered(self) -> bool:
        """Whether run() takes `lower` on this host."""
        ...

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed: ...

    def prepare(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        env_dir: Path,
        limits: Limits = DEFAULT_LIMITS,
        env: Mapping[str, str] | None = None,
        mounts: Sequence[tuple[Path, str]] = (),
    ) -> Completed:
        """fixbot's own setup step, never a candidate's: argv over `workspace` (a copy of the
        snapshot) with the network, and `env_dir` writable at PREPARED; `env` added to
        SETUP_ENV, each (host path, target) of `mounts` read-only; else as run()."""
        ...

    def describe(self) -> str:
        """One line naming the backend and its version, for the evidence."""
        ...

    def close(self) -> None:
        """Release what the backend holds (the Docker client); runs are all over by then."""
        ...
