"""Each attempt's scratch folder: where its workspace lives, capped in size when fixbot is root.

As root, the folder is a tmpfs mount of `disk_mb` (plus what a full copy of the tree needs), so
a candidate that fills its workspace gets "no space left" at the cap, not a full host disk; the
per-file limit (RLIMIT_FSIZE) and the capped /tmp stay as well. As an ordinary user nothing can
be mounted and the folder is plain (the per-file limit still holds); `capped` says which.

The mount is named after its owner (`fixbot-scratch-PID-START`), so a crashed fixbot's mounts
are found and removed by the next one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fixbot import proc
from fixbot.sandbox.host import is_alive, owner_tag

_SOURCE = "fixbot-scratch-"
_MOUNT = "/usr/bin/mount"
_UMOUNT = "/usr/bin/umount"


@dataclass(frozen=True)
class Scratch:
    path: Path
    capped: bool


@contextmanager
def attempt_scratch(disk_mb: int, *, extra_bytes: int = 0) -> Iterator[Scratch]:
    """A fresh folder for one attempt, removed (and unmounted) whatever happens."""
    path = Path(tempfile.mkdtemp(prefix="fixbot-attempt-"))
    capped = False
    try:
        if can_mount():
            reap()
            size = disk_mb * 1024 * 1024 + extra_bytes
            mounted = proc.run(
                [_MOUNT, "-t", "tmpfs", "-o", f"size={size},mode=0700", _owner_tag(), str(path)],
                timeout=30,
                env={},
            )
            capped = mounted.returncode == 0
        yield Scratch(path=path, capped=capped)
    finally:
        if capped:
            _unmount(path)
        shutil.rmtree(path, ignore_errors=True)


def can_mount() -> bool:
    return os.geteuid() == 0 and Path(_MOUNT).exists() and Path(_UMOUNT).exists()


def reap() -> list[str]:
    """Unmount the scratch folders of fixbot processes that are gone (crashed mid-attempt)."""
    reaped = []
    for source, target in _mounts():
        if source.startswith(_SOURCE) and not is_alive(source[len(_SOURCE) :]):
            _unmount(Path(target))
            shutil.rmtree(target, ignore_errors=True)
            reaped.append(target)
    return reaped


def _unmount(path: Path) -> None:
    done = proc.run([_UMOUNT, str(path)], timeout=30, env={})
    if done.returncode != 0:
        proc.run([_UMOUNT, "--lazy", str(path)], timeout=30, env={})


def _mounts() -> list[tuple[str, str]]:
    """(source, mount point) of this mount namespace's tmpfs mounts."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 2 and tail[0] == "tmpfs":
            target = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
            found.append((tail[1], target))
    return found


def _owner_tag() -> str:
    return f"{_SOURCE}{owner_tag(os.getpid())}"
