"""What every backend needs from the host: the toolchain it mounts read-only, the user the
command runs as, the ownership of the places it may write, the overlay's mount options, and the
identity of a process (to tell a dead owner's leftovers from a live one's)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from fixbot.errors import SandboxFailed

NOBODY = 65534  # the user (and group) a command runs as
SYSTEM_DIRS = ("/usr", "/opt")  # the host's toolchain, mounted read-only
_NOT_IN_OPTIONS = (",", ":", "\\", "\n")


def python_prefixes() -> list[str]:
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return sorted(p for p in prefixes if not any(p.startswith(s + "/") for s in SYSTEM_DIRS))


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


def give_to_nobody(root: Path) -> None:
    """The command runs as nobody, so nobody owns the places it may write."""
    os.chown(root, NOBODY, NOBODY)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            os.chown(os.path.join(dirpath, name), NOBODY, NOBODY, follow_symlinks=False)


def start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot ("" when it is gone): with the pid,
    it names one process, distinct after the pid is reused."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def hand_over(workspace: Path, outputs: Path, lower: Path | None, owned: set[Path]) -> None:
    """As root: the places a command may write belong to the user it runs as; the shared lower
    tree (never written) is handed over once per backend, `owned` remembering it."""
    give_to_nobody(workspace)
    give_to_nobody(outputs)
    if lower is not None and lower not in owned:
        give_to_nobody(lower)
        owned.add(lower)
