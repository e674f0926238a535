"""What every backend needs from the host: the toolchain it mounts read-only, the user the
command runs as, the ownership of the places it may write and of the trees every sandbox reads,
the overlay's mount options, and the identity of a process (to tell a dead owner's leftovers
from a live one's)."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from fixbot.errors import SandboxFailed

NOBODY = 65534  # the user (and group) a command runs as without a uid of its own
SANDBOX_GID = 0x70010000  # the group every sandbox uid shares, as root (see uids.py)
SYSTEM_DIRS = ("/usr", "/opt")  # the host's toolchain, mounted read-only
_NOT_IN_OPTIONS = (",", ":", "\\", "\n")


def python_prefixes() -> list[str]:
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return sorted(p for p in prefixes if not any(p.startswith(s + "/") for s in SYSTEM_DIRS))


def unreadable_toolchain() -> list[str]:
    """The folders of fixbot's Python that the sandbox's users (neither their owner nor in
    their group) cannot enter: mounted, they are still closed to them (a virtualenv made in a
    mode-0700 temporary folder)."""
    closed = []
    for prefix in python_prefixes():
        try:
            mode = os.stat(prefix).st_mode
        except OSError:
            continue
        if mode & 0o005 != 0o005:
            closed.append(f"{prefix} (mode {mode & 0o777:04o})")
    return closed


def overlay_options(upper: Path, lower: Path, work: Path) -> str:
    """overlayfs's mount options for these folders (fixbot's own, never the repository's)."""
    for path in (upper, lower, work):
        if any(c in str(path) for c in _NOT_IN_OPTIONS):
            raise SandboxFailed(f"cannot lay an overlay over {path}: mount options forbid , : \\")
    return f"lowerdir={lower},upperdir={upper},workdir={work}"


def readonly_sources(root: Path, readonly: Sequence[str]) -> list[tuple[str, str]]:
    """(path in the workspace, host source) for each read-only path that resolves inside root.

    A link out of the tree (a committed `conftest.py -> /root/.ssh/id_rsa`) is not bound: the
    bind would follow it on the host and hand the sandbox the host's file.
    """
    base = root.resolve()
    sources = []
    for rel in readonly:
        path = root / rel
        if path.exists() and path.resolve().is_relative_to(base):
            sources.append((rel, str(path.resolve())))
    return sources


def give_to(root: Path, uid: int, gid: int = SANDBOX_GID) -> None:
    """The run's user owns the places only it writes (links are never followed)."""
    for path in (str(root), *_walk(root)):
        os.chown(path, uid, gid, follow_symlinks=False)


def share(root: Path) -> None:
    """A tree several runs read at once (an overlay's lower layer, the prepared environment)
    becomes root:SANDBOX_GID, the group's permission bits copied from the owner's: every sandbox
    uid reads it and, through an overlay, copies up and changes it. A 0644 file shows as 0664
    inside, as in a checkout made with umask 002; set-id bits are dropped, links left alone."""
    for path in (str(root), *_walk(root)):
        info = os.lstat(path)
        os.chown(path, 0, SANDBOX_GID, follow_symlinks=False)
        if not stat.S_ISLNK(info.st_mode):
            mode = stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID)
            os.chmod(path, (mode & ~0o070) | ((mode & 0o700) >> 3))


def _walk(root: Path) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            yield os.path.join(dirpath, name)


def start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot ("" when it is gone): with the pid,
    it names one process, distinct after the pid is reused."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def pid_namespace() -> str:
    """This process's pid namespace (its inode: what the kernel names it by)."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "0"


def owner_tag(pid: int) -> str:
    """`NS-PID-START`: names one process (a run's owner) in names on the host, after pid reuse
    and across pid namespaces (a pid means another process in a container's namespace)."""
    return f"{pid_namespace()}-{pid}-{start_time(pid)}"


def is_alive(tag: str) -> bool:
    """Whether the process an owner_tag names may still run: a tag of another pid namespace
    (a containerised run beside this one, or the host's run seen from a container) cannot be
    judged from here, so it is taken for alive: what is left behind is left, never a live
    run's cgroup or mount taken."""
    namespace, pid, start = [*tag.split("-"), "", ""][:3]
    if namespace != pid_namespace():
        return True
    return pid.isdigit() and bool(start) and start_time(int(pid)) == start


def hand_over(
    workspace: Path, outputs: Path, lower: Path | None, owned: set[Path], uid: int
) -> None:
    """As root: the places a command may write belong to the user it runs as; the shared lower
    tree (never written) is shared with every sandbox once per backend, `owned` remembering it."""
    give_to(workspace, uid)
    give_to(outputs, uid)
    if lower is not None and lower not in owned:
        share(lower)
        owned.add(lower)
