"""What the install writes into the repository's tree, kept for every check's copy.

An editable install with hatch-vcs writes `_version.py` into the source tree, a build writes its
compiled extensions next to their sources, a setup step may generate modules: files a check
needs that the snapshot lacks. The prepare step runs over a copy of the snapshot; what it added
there (new regular files only: never a change to a committed file, which the checks see as
committed; never a link, `__pycache__`, `*.pyc` or the top-level `build/` folder) is kept in
the environment under TREE, and laid into each check's copy or layer where nothing stands yet.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

TREE = ".fixbot-tree"  # in an environment: the files the install wrote into the tree
_NOT_KEPT = ("__pycache__",)


def keep_generated(workspace: Path, pristine: Path, kept: Path) -> None:
    """Copy what the install added to the tree (new regular files only) into `kept`."""
    for dirpath, dirnames, filenames in os.walk(workspace):
        here = Path(dirpath)
        rel_dir = here.relative_to(workspace)
        dirnames[:] = [
            d
            for d in dirnames
            if d not in _NOT_KEPT and not (rel_dir == Path(".") and d == "build")
        ]
        for name in filenames:
            source = here / name
            rel = source.relative_to(workspace)
            if source.is_symlink() or not source.is_file() or name.endswith(".pyc"):
                continue
            if os.path.lexists(pristine / rel):
                continue  # a committed file: the checks see the commit's own
            target = kept / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def lay_generated(prepared: Path | None, root: Path) -> None:
    """Lay the files the install generated into a check's copy (or layer) at `root`, where
    nothing stands yet: a candidate's own file of that name wins."""
    kept = None if prepared is None else prepared / TREE
    if kept is None or not kept.is_dir():
        return
    for source in sorted(kept.rglob("*")):
        if source.is_symlink() or not source.is_file():
            continue
        target = root / source.relative_to(kept)
        if os.path.lexists(target):
            continue
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        except OSError:
            continue  # something not a folder stands where its folder belongs: the candidate's
