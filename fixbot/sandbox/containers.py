"""What a fixbot container is, as plain data: its mounts, its labels, and whether a labelled
container someone left behind is past use. docker.py turns this into the engine's API calls (it
is the only module that imports the docker SDK)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbot.sandbox.host import (
    SYSTEM_DIRS,
    overlay_options,
    python_prefixes,
    readonly_sources,
    start_time,
)
from fixbot.sandbox.protocol import OUTPUTS, PREPARED, WORKSPACE, Persona

LABEL = "fixbot"
# The image has its own passwd and group (a `sandbox` user, uid 65534), and a real /sbin: the
# engine mounts its init at /sbin/docker-init, which a read-only /usr under /sbin would hide.
_ETC_FILES = (
    "/etc/nsswitch.conf",
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
)
_ROOT_DIRS = ("bin", "lib", "lib32", "lib64", "libx32")


@dataclass(frozen=True)
class MountSpec:
    """One mount: a host folder bound at `target`, or (source None) an overlay volume."""

    target: str
    source: str | None
    read_only: bool = False
    overlay: Mapping[str, str] | None = None  # the local volume driver's options


@dataclass(frozen=True)
class Plan:
    workspace: Path  # bound at WORKSPACE, or the upper layer over `lower`
    outputs: Path
    lower: Path | None
    readonly: Sequence[str]
    prepared: Path | None  # the prepared environment, at PREPARED
    setup: bool  # fixbot's prepare step: network, and the environment writable
    extra: tuple[tuple[Path, str], ...] = ()  # RunSpec.mounts, read-only: (host, target)
    persona: Persona | None = None  # the host's facts in place of the sandbox's (persona.py)

    @property
    def trees(self) -> tuple[str, ...]:
        """Where the tree is mounted, the working folder last: a persona's own path too, but
        over an overlay (the engine's volume is mounted once)."""
        if self.persona is None or self.lower is not None:
            return (WORKSPACE,)
        return (WORKSPACE, self.persona.workspace)


def toolchain_mounts() -> list[MountSpec]:
    """The host's toolchain, read-only: /usr, /opt, the Python installation, a few /etc files."""
    paths = [p for p in SYSTEM_DIRS if Path(p).is_dir()]
    paths += python_prefixes()
    # Merged-/usr hosts have /bin, /lib... as symlinks, which the image repeats; real folders
    # are mounted. /sbin never is (see _ETC_FILES).
    paths += [f"/{name}" for name in _ROOT_DIRS if Path(f"/{name}").is_dir()]
    paths = [p for p in paths if not Path(p).is_symlink()]
    paths += [p for p in _ETC_FILES if Path(p).exists()]
    return [MountSpec(path, path, read_only=True) for path in paths]


def mounts(plan: Plan, work: Path | None) -> list[MountSpec]:
    """A command's own mounts: the workspace (or its overlay), the outputs, the prepared
    environment, and the protected paths read-only from the pristine tree."""
    found = [workspace_mount(plan.workspace, plan.lower, work)]
    found += [MountSpec(at, str(plan.workspace)) for at in plan.trees[1:]]
    found.append(MountSpec(OUTPUTS, str(plan.outputs)))
    if plan.prepared is not None:
        found.append(MountSpec(PREPARED, str(plan.prepared), read_only=not plan.setup))
    found += [
        MountSpec(f"{at}/{rel}", source, read_only=True)
        for rel, source in readonly_sources(plan.lower or plan.workspace, plan.readonly)
        for at in plan.trees
    ]
    found += [MountSpec(target, str(host), read_only=True) for host, target in plan.extra]
    return found


def workspace_mount(workspace: Path, lower: Path | None, work: Path | None) -> MountSpec:
    """The workspace itself, or (layered) an anonymous local volume that the engine mounts as
    an overlay of workspace over lower; it goes with the container."""
    if lower is None or work is None:
        return MountSpec(WORKSPACE, str(workspace))
    options = {"type": "overlay", "device": "overlay", "o": overlay_options(workspace, lower, work)}
    return MountSpec(WORKSPACE, None, overlay=options)


def process_identity(pid: int) -> str | None:
    """boot id / pid namespace / pid / start time: a process of ours, distinct after pid reuse.

    The namespace is this process's own: only owners in it are ever looked up.
    """
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    start = start_time(pid)
    if not start:
        return None
    return f"{boot}/{namespace}/{pid}/{start}"


def is_leftover(labels: Mapping[str, str], mine: str) -> bool:
    """Whether a labelled container (not in flight here) is past use."""
    try:
        deadline = float(labels.get(f"{LABEL}.deadline", "0"))
    except ValueError:
        deadline = 0.0
    if time.time() > deadline:
        return True
    owner = labels.get(f"{LABEL}.owner", "")
    if owner == mine:
        return True  # this process's, and not one of its runs in flight
    parts = owner.split("/")
    if len(parts) != 4 or parts[:2] != mine.split("/")[:2] or not parts[2].isdigit():
        return False  # another machine or pid namespace: only its deadline says it is over
    return process_identity(int(parts[2])) != owner
