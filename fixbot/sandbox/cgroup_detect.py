"""Which cgroups this process may make its sandboxes' caps in, found once.

In this order (the first that works; each one that does not leaves its reason):

1. cgroup v2, fixbot's own cgroup, when it is delegated to fixbot's uid (systemd's
   `Delegate=yes`, or a chown): a v2 cgroup whose children have controllers may hold no process,
   so fixbot, if it is the cgroup's only process, moves itself into a leaf (`fixbot-supervisor`)
   and enables memory and pids for the children. Shared with other processes, it is left alone.
2. cgroup v2 as root: `<mount>/fixbot`, with memory and pids enabled at the hierarchy's root (a
   container's cgroup-namespace root that holds processes refuses this: `evacuate_root` first).
3. cgroup v1: fixbot's own cgroup in the `memory` and the `pids` hierarchies, when writable.
4. none: the runs keep per-process limits, and the reasons are reported.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbot.errors import SandboxFailed
from fixbot.sandbox.cgroups import (
    SUPERVISOR,
    Hierarchy,
    NoCgroups,
    V1Hierarchy,
    V2Hierarchy,
    read_pids,
    write,
)

REQUIRED = frozenset({"memory", "pids"})
FIXBOT_PARENT = "fixbot"


@dataclass(frozen=True)
class Mount:
    path: Path
    root: str  # the mount's root inside the hierarchy (mountinfo field 4)
    fstype: str  # cgroup or cgroup2
    options: frozenset[str]  # super options: the v1 controllers it holds


def parse_mounts(mountinfo: str) -> list[Mount]:
    found = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        path = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        found.append(Mount(Path(path), fields[3], tail[0], frozenset(tail[2].split(","))))
    return found


def parse_own(proc_cgroup: str) -> dict[str, str]:
    """{controller: path} from /proc/self/cgroup; "" names the v2 (unified) hierarchy."""
    own: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                own[name] = parts[2]
    return own


def inside(mount: Mount, path: str) -> Path | None:
    """Where the cgroup `path` (as /proc/self/cgroup names it) lies under this mount."""
    root = mount.root.rstrip("/")
    if path != root and not path.startswith(root + "/"):
        return None
    return mount.path / path[len(root) :].lstrip("/")


def detect(
    *,
    required: frozenset[str] = REQUIRED,
    mountinfo: str | None = None,
    proc_cgroup: str | None = None,
    root_fallback: bool = True,
) -> Hierarchy:
    """The best cgroup setup this process may use; NoCgroups, with the reasons, when none.
    `root_fallback`: whether root may make `<mount>/fixbot` at the hierarchy's root."""
    if mountinfo is None:
        mountinfo = Path("/proc/self/mountinfo").read_text()
    if proc_cgroup is None:
        proc_cgroup = Path("/proc/self/cgroup").read_text()
    mounts, own = parse_mounts(mountinfo), parse_own(proc_cgroup)
    reasons: list[str] = []
    unified = next((m for m in mounts if m.fstype == "cgroup2"), None)
    if unified is not None and "" in own:
        found = _detect_v2(unified, own[""], required, root_fallback, reasons)
        if found is not None:
            return found
    found_v1 = _detect_v1(mounts, own, reasons)
    if found_v1 is not None:
        return found_v1
    return NoCgroups("; ".join(reasons) or "no cgroup hierarchy is mounted")


def _detect_v2(
    mount: Mount, own_path: str, required: frozenset[str], root_fallback: bool, reasons: list[str]
) -> V2Hierarchy | None:
    own = inside(mount, own_path)
    if own is not None and _writable(own):
        try:
            return V2Hierarchy(_take_own(own, required), "delegated")
        except SandboxFailed as exc:
            reasons.append(f"v2: own cgroup {own} is writable, but {exc}")
    elif own is not None:
        reasons.append(f"v2: own cgroup {own} is not delegated to uid {os.geteuid()}")
    if os.geteuid() != 0 or not root_fallback:
        return None
    top = mount.path / FIXBOT_PARENT
    try:
        _enable(mount.path, required)
        top.mkdir(exist_ok=True)
        _enable(top, required)
    except (SandboxFailed, OSError) as exc:
        reasons.append(f"v2: cannot use {top}: {exc}")
        return None
    return V2Hierarchy(top, "root")


def _writable(path: Path) -> bool:
    files = (path, path / "cgroup.procs", path / "cgroup.subtree_control")
    return all(os.access(f, os.W_OK) for f in files)


def _enable(path: Path, controllers: frozenset[str]) -> None:
    """Enable `controllers` for the children of `path` (which must then hold no process, unless
    it is the real root)."""
    try:
        available = set((path / "cgroup.controllers").read_text().split())
        enabled = set((path / "cgroup.subtree_control").read_text().split())
    except OSError as exc:
        raise SandboxFailed(f"cannot read {path}: {exc.strerror}") from exc
    missing = controllers - available
    if missing:
        raise SandboxFailed(f"its controllers lack {' and '.join(sorted(missing))}")
    for name in sorted(controllers - enabled):
        write(path / "cgroup.subtree_control", f"+{name}")


def _take_own(own: Path, required: frozenset[str]) -> Path:
    """Make fixbot's own delegated cgroup the parent of its sandboxes: if fixbot is its only
    process, fixbot moves into a leaf and enables the controllers for the children."""
    with contextlib.suppress(OSError):
        if required <= set((own / "cgroup.subtree_control").read_text().split()):
            return own  # already a parent: fixbot lives in a leaf of it
    if own.name == SUPERVISOR and _writable(own.parent):
        _enable(own.parent, required)  # an earlier detect() of this process moved it here
        return own.parent
    others = read_pids(own / "cgroup.procs") - {os.getpid()}
    if others:
        raise SandboxFailed(f"it holds {len(others)} other processes")
    leaf = own / SUPERVISOR
    leaf.mkdir(exist_ok=True)
    write(leaf / "cgroup.procs", str(os.getpid()))
    try:
        _enable(own, required)
    except SandboxFailed:
        with contextlib.suppress(SandboxFailed):
            write(own / "cgroup.procs", str(os.getpid()))
        raise
    return own


def _detect_v1(mounts: list[Mount], own: dict[str, str], reasons: list[str]) -> V1Hierarchy | None:
    folders: dict[str, Path] = {}
    for controller in ("memory", "pids"):
        mount = next((m for m in mounts if m.fstype == "cgroup" and controller in m.options), None)
        path = inside(mount, own[controller]) if mount and controller in own else None
        if path is None:
            reasons.append(f"v1: no {controller} hierarchy")
            return None
        if not all(os.access(p, os.W_OK) for p in (path, path / "cgroup.procs")):
            reasons.append(f"v1: the {controller} cgroup {path} is not writable")
            return None
        folders[controller] = path
    return V1Hierarchy(folders["memory"], folders["pids"])


def evacuate_root(mount: Path = Path("/sys/fs/cgroup"), leaf: str = "init") -> int:
    """Move every process of a (container's) v2 cgroup root into a leaf, so that the root may
    enable controllers for children, as Docker-in-Docker's entrypoint does: what a privileged CI
    container runs before fixbot can cap its sandboxes there. fixbot never calls it on its own.
    Returns how many processes moved."""
    target = mount / leaf
    target.mkdir(exist_ok=True)
    moved = 0
    for _ in range(10):
        pids: Sequence[int] = sorted(read_pids(mount / "cgroup.procs"))
        if not pids:
            break
        for pid in pids:
            try:
                with open(target / "cgroup.procs", "w") as handle:
                    handle.write(str(pid))
                moved += 1
            except OSError as exc:
                if exc.errno not in (errno.ESRCH, errno.EINVAL):  # gone, or a kernel thread
                    raise
    return moved
