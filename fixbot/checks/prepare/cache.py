"""A cache of environments: each complete or absent, trusted only with its own key, sealed.

An environment is built under a temporary name beside its final place and renamed into it,
under a lock, so two runs never build the same one and a crash leaves no half-built entry that
looks finished. Its record (DONE, JSON) names its key: a folder without a record of exactly
that key is rebuilt, never trusted. Once built it is sealed: owned by fixbot's user, readable
by all, writable by no one else (the sandbox's user, which built it, included).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

DONE = ".fixbot-prepared"

Build = Callable[[Path], dict[str, Any]]  # builds into the folder; returns its record


def cached(
    folder: Path, key: str, build: Build, usable: Callable[[Path], bool] = lambda env: True
) -> Path:
    """folder/key, built by `build` (into a staging folder) unless a complete one is there
    that is `usable`."""
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / key
    if complete(final, key) and usable(final):
        _used(final)
        return final
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if complete(final, key) and usable(final):
            return final  # another run built it while this one waited
        remove(final)
        staging = Path(tempfile.mkdtemp(prefix=f"{key}.partial-", dir=folder))
        try:
            record = build(staging)
            (staging / DONE).write_text(json.dumps({**record, "key": key}) + "\n")
            seal(staging)
            os.rename(staging, final)
        finally:
            remove(staging)
    return final


def record_of(env: Path) -> dict[str, Any]:
    """What a built environment's record says ({} when it has none that can be read)."""
    marker = env / DONE
    if marker.is_symlink() or not marker.is_file():
        return {}
    try:
        found = json.loads(marker.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def complete(env: Path, key: str) -> bool:
    """A finished build of exactly this key (its record says so), never a bare marker."""
    return record_of(env).get("key") == key


def prune(envs: Path, older_than: float, now: float) -> list[str]:
    """Remove the environments (and leftovers of builds that never finished) unused for
    `older_than` seconds: a record's time is set when it is built and at each use."""
    gone = []
    for env in sorted(envs.iterdir()) if envs.is_dir() else []:
        if env.is_symlink() or not env.is_dir():
            continue
        marker = env / DONE
        used = (marker if marker.is_file() and not marker.is_symlink() else env).stat().st_mtime
        if now - used > older_than:
            remove(env)
            gone.append(env.name)
    return gone


def copy_into(source: Path, target: Path) -> None:
    """A sealed environment's files into a staging folder (links kept as links; the record
    and the kept tree files left behind): the start of another environment."""
    shutil.copytree(
        source,
        target,
        symlinks=True,
        dirs_exist_ok=True,
        ignore=lambda folder, names: [DONE] if Path(folder) == source else [],
    )


def _used(env: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(env / DONE)


def seal(env: Path) -> None:
    """The environment as every later run finds it: fixbot's user owns it; everyone may read
    it (the sandbox's user runs it), no one else may write it (that user wrote it while it was
    built)."""
    uid = os.getuid()
    for dirpath, dirnames, filenames in os.walk(env):
        for name in (".", *dirnames, *filenames):
            path = os.path.join(dirpath, name)
            if os.geteuid() == 0:
                os.chown(path, uid, -1, follow_symlinks=False)  # the group stays the sandboxes
            if os.path.islink(path):
                continue
            executable = os.path.isdir(path) or os.lstat(path).st_mode & stat.S_IXUSR
            os.chmod(path, 0o755 if executable else 0o644)


def remove(path: Path) -> None:
    """Remove a folder fixbot made, whatever modes the build left on its folders."""
    if not os.path.lexists(path):
        return
    for dirpath, dirnames, _ in os.walk(path):
        for name in dirnames:
            folder = os.path.join(dirpath, name)
            if not os.path.islink(folder):
                with contextlib.suppress(OSError):
                    os.chmod(folder, 0o700)
    shutil.rmtree(path, ignore_errors=True)
