"""A memory and process cap for the whole sandbox: one cgroup per run, v2 or v1, or none.

`cgroup_detect.detect()` finds what the host offers once and returns a Hierarchy: a v2 parent
fixbot may write (its own delegated cgroup, or as root a `fixbot` cgroup at the hierarchy's
root), writable v1 `memory` and `pids` hierarchies, or NoCgroups with the reasons.

Each run gets a child cgroup of its own with memory.max (swap 0) and pids.max (v1: the
equivalents). A fixed launcher, `sh -c` with paths fixbot made as its only arguments, writes its
own pid into the cgroup and then execs the sandbox, so nothing the sandbox runs ever starts
outside it; a failed write ends the run with 125 before anything runs. Afterwards everything
left in it is killed (cgroup.kill, else SIGKILL over cgroup.procs until it is empty: pids.max
bounds a fork bomb) and the cgroup removed. The cgroups are named after their owner (pid and
start time), so a crashed fixbot's are reaped by the next one.

While a run goes on, capwatch.held_cap reads its pids.events (processes_refused) and ends a run
whose cap keeps refusing: a fork bomb, which pids.max holds but never stops.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbot.errors import SandboxFailed
from fixbot.sandbox.host import is_alive, owner_tag

SUPERVISOR = "fixbot-supervisor"  # the leaf fixbot moves itself into, in a delegated v2 cgroup
_PREFIX = "fixbot-"
# what _name() makes: NS-PID-START-SERIAL (an older fixbot's PID-START-SERIAL is left alone)
_RUN_NAME = re.compile(rf"{_PREFIX}(\d+-\d+-\d+)-\d+")
# $1...: cgroup.procs files (fixbot's own paths), then "--", then the sandbox's command line.
ENTER = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
_SETTLE_SECONDS = 10.0


def write(path: Path, value: str) -> None:
    """Write a cgroup file; SandboxFailed (a run must not start uncapped) when it cannot."""
    try:
        with open(path, "w") as handle:
            handle.write(value)
    except OSError as exc:
        raise SandboxFailed(f"cannot write {value!r} to {path}: {exc.strerror}") from exc


def read_pids(path: Path) -> set[int]:
    try:
        return {int(line) for line in path.read_text().split()}
    except FileNotFoundError:
        return set()


def _keyed(path: Path, key: str) -> int:
    """A `key value` line of a flat-keyed cgroup file (memory.events, memory.oom_control)."""
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return 0


def _kill_all(procs: Sequence[Path]) -> None:
    """SIGKILL everything listed until nothing is. A process of a pid namespace this one cannot
    see is listed as 0: it cannot be signalled from here (and kill(0) would be this process's
    own group), so that is a failure, never a signal."""
    deadline = time.monotonic() + _SETTLE_SECONDS
    while alive := set().union(*(read_pids(path) for path in procs)):
        if any(pid <= 0 for pid in alive):
            raise SandboxFailed(
                f"processes of another pid namespace in {procs[0].parent}: cannot end them here"
            )
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            raise SandboxFailed(f"processes survive in {procs[0].parent}: {sorted(alive)}")
        time.sleep(0.01)


def _rmdir(path: Path) -> None:
    deadline = time.monotonic() + _SETTLE_SECONDS
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:  # EBUSY while the last tasks finish exiting
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                raise SandboxFailed(f"cannot remove {path}: {exc.strerror}") from exc
            time.sleep(0.02)


@dataclass(frozen=True)
class Cgroup:
    """One run's cgroup: one folder in v2, one per hierarchy (memory, pids) in v1."""

    folders: tuple[Path, ...]
    v2: bool

    @property
    def procs_files(self) -> tuple[Path, ...]:
        return tuple(folder / "cgroup.procs" for folder in self.folders)

    def launcher(self, shell: str = "/bin/sh") -> list[str]:
        """The argv prefix that puts itself into this cgroup, then execs the rest."""
        return [shell, "-c", ENTER, "fixbot-cgroup", *map(str, self.procs_files), "--"]

    def pids(self) -> set[int]:
        return set().union(*(read_pids(path) for path in self.procs_files))

    def limit(self, memory_bytes: int, pids: int) -> None:
        if self.v2:
            (group,) = self.folders
            write(group / "memory.max", str(memory_bytes))
            if (group / "memory.swap.max").exists():  # absent without swap accounting
                write(group / "memory.swap.max", "0")
            write(group / "pids.max", str(pids))
            return
        memory, pids_folder = self.folders
        write(memory / "memory.limit_in_bytes", str(memory_bytes))
        if (memory / "memory.memsw.limit_in_bytes").exists():  # with swap accounting
            write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
        write(pids_folder / "pids.max", str(pids))

    def oom_kills(self) -> int:
        """How many processes the memory cap killed so far (Linux 4.13+ on v1)."""
        if self.v2:
            return _keyed(self.folders[0] / "memory.events", "oom_kill")
        return _keyed(self.folders[0] / "memory.oom_control", "oom_kill")

    def processes_refused(self) -> int:
        """How many new processes the cap refused so far (pids.events' `max`)."""
        folder = self.folders[0] if self.v2 else self.folders[-1]
        return _keyed(folder / "pids.events", "max")

    def kill(self) -> None:
        if self.v2 and (self.folders[0] / "cgroup.kill").exists():  # Linux 5.14+: atomic
            write(self.folders[0] / "cgroup.kill", "1")
            deadline = time.monotonic() + _SETTLE_SECONDS
            while _keyed(self.folders[0] / "cgroup.events", "populated"):
                if time.monotonic() > deadline:
                    raise SandboxFailed(f"{self.folders[0]} is still populated")
                time.sleep(0.01)
        _kill_all([path for path in self.procs_files if path.exists()])

    def remove(self) -> None:
        for folder in self.folders:
            _rmdir(folder)


class Hierarchy:
    """What this host offers, found once; makes one capped cgroup per sandbox run."""

    kind = "none"

    def __init__(self, reason: str = "") -> None:
        self.reason = reason
        self._lock = threading.Lock()
        self._serial = itertools.count(1)

    @property
    def capped(self) -> bool:
        """Whether runs are capped as a whole (else the caller keeps its per-process rlimits)."""
        return self.kind != "none"

    def summary(self) -> str:
        """What it caps, in a few stable words (the evidence, a cache key)."""
        return "memory and processes capped per process (no writable cgroup): see docs/security.md"

    def details(self) -> str:
        """Where, or why not (`fixbot doctor`)."""
        return self.reason

    def parents(self) -> tuple[Path, ...]:
        return ()

    def _name(self) -> str:
        with self._lock:
            serial = next(self._serial)
        return f"{_PREFIX}{owner_tag(os.getpid())}-{serial}"

    def create(self, memory_bytes: int, pids: int) -> Cgroup | None:
        parents = self.parents()
        if not parents:
            return None
        name = self._name()
        made: list[Path] = []
        try:
            for parent in parents:
                (parent / name).mkdir()
                made.append(parent / name)
            group = Cgroup(tuple(made), v2=self.kind == "v2")
            group.limit(memory_bytes, pids)
        except (OSError, SandboxFailed) as exc:
            for folder in made:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            if isinstance(exc, SandboxFailed):
                raise
            raise SandboxFailed(f"cannot create the cgroup {name}: {exc.strerror}") from exc
        return group

    @contextlib.contextmanager
    def sandbox(self, memory_bytes: int, pids: int) -> Iterator[Cgroup | None]:
        """A capped cgroup for one run (None without one), emptied and removed afterwards."""
        group = self.create(memory_bytes, pids)
        try:
            yield group
        finally:
            if group is not None:
                try:
                    group.kill()
                finally:
                    group.remove()

    def reap(self) -> list[Path]:
        """Kill and remove the cgroups of fixbot processes that are gone (crashed mid-run)."""
        reaped = []
        for parent in self.parents():
            with contextlib.suppress(OSError):
                for child in parent.iterdir():
                    owner = _RUN_NAME.fullmatch(child.name)
                    if owner is None or not child.is_dir() or is_alive(owner.group(1)):
                        continue  # not a run's name (another tool's, a user's), or still running
                    with contextlib.suppress(OSError, SandboxFailed):
                        _kill_all([child / "cgroup.procs"])
                        _rmdir(child)
                        reaped.append(child)
        return reaped


class NoCgroups(Hierarchy):
    pass


class V2Hierarchy(Hierarchy):
    kind = "v2"

    def __init__(self, parent: Path, how: str) -> None:
        super().__init__()
        self.parent = parent
        self.how = how

    def summary(self) -> str:
        return "memory and processes capped per sandbox (cgroup v2)"

    def details(self) -> str:
        return f"under {self.parent} ({self.how})"

    def parents(self) -> tuple[Path, ...]:
        return (self.parent,)


class V1Hierarchy(Hierarchy):
    kind = "v1"

    def __init__(self, memory: Path, pids: Path) -> None:
        super().__init__()
        self.memory = memory
        self.pids = pids

    def summary(self) -> str:
        return "memory and processes capped per sandbox (cgroup v1)"

    def details(self) -> str:
        return f"memory under {self.memory}, pids under {self.pids}"

    def parents(self) -> tuple[Path, ...]:
        return (self.memory, self.pids)
