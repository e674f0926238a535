"""The snapshot, the manifest of protected files, and copies of the tree for each check.

The snapshot is the committed tree at the pinned commit, exported once into a pristine folder
outside the user's repository (snapshot/git.py); every check gets its own copy or layer of it.
Protected files (tests and their configuration, by glob) are recorded by SHA-256, put back
before every check and compared after it.

The gates read more than their root configuration: ruff follows a config's `extend` to another
file, mypy imports the `plugins` its config names. The manifest protects those files of the
repository (`fixbot.commands.gate_files`) as it protects the globs'.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from fixbot.commands import gate_files


@dataclass(frozen=True)
class Snapshot:
    repo: Path  # the user's repository (never written, except its .fixbot/ folder)
    commit: str
    tree: Path  # pristine export of the commit
    manifest: Mapping[str, str]  # protected path -> sha256

    @property
    def protected(self) -> tuple[str, ...]:
        return tuple(sorted(self.manifest))


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def is_protected(path: str, globs: Iterable[str]) -> bool:
    """Whether a repo-relative posix path matches any protected glob (`**` spans folders)."""
    return any(_glob_regex(glob).match(path) for glob in globs)


def unprotect(snapshot: Snapshot, paths: Iterable[str]) -> Snapshot:
    """The snapshot without these paths in its manifest (a human allowed edits to them)."""
    drop = set(paths)
    if not drop:
        return snapshot
    return replace(snapshot, manifest={k: v for k, v in snapshot.manifest.items() if k not in drop})


def protect(snapshot: Snapshot, globs: Iterable[str]) -> Snapshot:
    """The snapshot with its manifest recorded for these protected globs and the files the
    gates' root configurations name."""
    globs = tuple(globs)
    tree = snapshot.tree
    named = set(gate_files(lambda rel: read_inside(tree, rel)))
    manifest = {
        rel: digest_of(tree / rel)
        for rel in _files(tree)
        if is_protected(rel, globs) or rel in named
    }
    return replace(snapshot, manifest=manifest)


def fresh_copy(snapshot: Snapshot, dest: Path) -> Path:
    """A new copy of the pristine tree at dest (which must not exist)."""
    shutil.copytree(snapshot.tree, dest, symlinks=True)
    return dest


def restore_protected(snapshot: Snapshot, workspace: Path) -> None:
    """Put every protected file back as the snapshot has it, whatever happened to it."""
    for rel in snapshot.manifest:
        target = workspace / rel
        _unlink_non_folders(workspace, rel)
        if target.is_symlink() or target.exists():
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(snapshot.tree / rel, target, follow_symlinks=False)


def _unlink_non_folders(workspace: Path, rel: str) -> None:
    """Remove links and files standing where rel's parent folders belong, so that writing
    rel can never go through a link out of the workspace."""
    current = workspace
    for part in rel.split("/")[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()


def read_inside(root: Path, rel: str) -> str | None:
    """A regular file's text, or None: never through a symlink, never outside root.

    Repository content is untrusted: a committed link to /root/.ssh/id_rsa must not reach
    the model, the evidence or a diff.
    """
    target = root / rel
    if target.is_symlink() or not target.is_file():
        return None
    if not target.resolve().is_relative_to(root.resolve()):
        return None
    return target.read_text(encoding="utf-8", errors="replace")


def manifest_mismatches(snapshot: Snapshot, workspace: Path) -> list[str]:
    """Protected files whose content differs from the manifest (or that are gone)."""
    bad = []
    for rel, digest in sorted(snapshot.manifest.items()):
        path = workspace / rel
        if not (path.is_symlink() or path.is_file()) or digest_of(path) != digest:
            bad.append(rel)
    return bad


def manifest_digest(manifest: Mapping[str, str]) -> str:
    lines = "".join(f"{digest}  {rel}\n" for rel, digest in sorted(manifest.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


def _files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()
    )


def digest_of(path: Path) -> str:
    if path.is_symlink():
        return hashlib.sha256(b"symlink:" + str(path.readlink()).encode()).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_bytes(snapshot: Snapshot) -> int:
    """What the snapshot's files take, for sizing a scratch folder that holds a copy."""
    return sum(p.lstat().st_size + 4096 for p in snapshot.tree.rglob("*") if not p.is_symlink())


def repo_files(snapshot: Snapshot) -> list[str]:
    """Every file of the snapshot, repo-relative, sorted."""
    return _files(snapshot.tree)
