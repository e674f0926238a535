"""One attempt's tree, on the host: a full copy of the snapshot, or a layer over it.

A layered workspace is only the attempt's own files (`root`, overlayfs's upper layer) over the
pristine snapshot tree (`lower`), merged by the sandbox when it runs a command: preparing it
costs what the diff costs, whatever the size of the repository. A deletion is a whiteout (a 0/0
character device, which needs root, as the overlay itself does). This module writes the diff
into either kind and reads either kind back as the command left it, with overlayfs's rules.

A diff that writes through a link of the snapshot (a path whose folder is a symlink there) gets a
full copy: only a real checkout shows what writing through that link does.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from fixbot.edits import Patch, repo_path, write_changes
from fixbot.snapshot.protected import Snapshot, digest_of, fresh_copy, restore_protected

_OPAQUE = "trusted.overlay.opaque"


@dataclass(frozen=True)
class Workspace:
    root: Path  # what the sandbox mounts read-write: the whole tree, or the attempt's layer
    lower: Path | None  # the snapshot tree under root when layered

    def locate(self, rel: str) -> Path | None:
        """Where rel's content is on the host, as the command sees it; None when it is gone."""
        if self.lower is None:
            path = self.root / rel
            return path if os.path.lexists(path) else None
        return _merged(self.root, self.lower, rel.split("/"))


def prepare(snapshot: Snapshot, dest: Path, *, layered: bool, patch: Patch | None) -> Workspace:
    """The attempt's workspace at dest (which must not exist), with the patch written in."""
    if layered and (patch is None or _layerable(snapshot.tree, patch)):
        dest.mkdir()
        workspace = Workspace(root=dest, lower=snapshot.tree)
        if patch is not None:
            _write_layer(patch, dest, snapshot.tree)
        return workspace
    fresh_copy(snapshot, dest)
    if patch is not None:
        write_changes(patch, dest)
    return Workspace(root=dest, lower=None)


def put_back_protected(snapshot: Snapshot, workspace: Workspace) -> None:
    """Every protected file as the snapshot has it, whatever happened to it."""
    if workspace.lower is None:
        restore_protected(snapshot, workspace.root)
        return
    for rel in snapshot.manifest:
        parts = rel.split("/")
        for depth in range(1, len(parts) + 1):
            path = workspace.root.joinpath(*parts[:depth])
            if not os.path.lexists(path):
                break
            if depth < len(parts) and path.is_dir() and not path.is_symlink():
                _clear_opaque(path)
                continue
            _remove(path)  # the file itself, or what stands where its folder belongs
            break


def mismatches(snapshot: Snapshot, workspace: Workspace) -> list[str]:
    """Protected files whose content differs from the manifest (or that are gone)."""
    bad = []
    for rel, expected in sorted(snapshot.manifest.items()):
        path = workspace.locate(rel)
        if path is None or not (path.is_symlink() or path.is_file()) or digest_of(path) != expected:
            bad.append(rel)
    return bad


# What the import system runs from a file: source, bytecode, extension modules.
CODE_SUFFIXES = (".py", ".pyw", ".pyc", ".pyo", ".so", ".pyd")


def code_digests(workspace: Workspace) -> dict[str, str]:
    """Every file Python could import from the tree as the command will see it (overlayfs's
    rules where layered), by path: the first 16 hex digits of its content's sha256. A folder
    link of the tree's own is walked as Python imports through it, its files read where the
    link leads (a change there shows under both paths). The pytest plugin names any such file
    compiled with other bytes (code written while the checks ran)."""
    rels: dict[str, str] = {}  # path as imported -> the path of its content in the tree
    for top in (workspace.root, workspace.lower):
        if top is None:
            continue
        inside = os.path.realpath(top)
        for folder, dirs, files in os.walk(top, followlinks=True):
            real = os.path.realpath(folder)
            up = Path(folder).relative_to(top).parents
            if os.path.commonpath([real, inside]) != inside or any(
                os.path.realpath(top / a) == real for a in up
            ):
                dirs[:] = []  # a link out of the tree, or back up its own path (a cycle)
                continue
            dirs[:] = [d for d in dirs if d != ".git"]
            base = Path(folder).relative_to(top)
            where = Path(os.path.relpath(real, inside))
            for name in files:
                if name.endswith(CODE_SUFFIXES):
                    rels.setdefault((base / name).as_posix(), (where / name).as_posix())
    found = {}
    for rel, content in sorted(rels.items()):
        path = workspace.locate(content.removeprefix("./"))
        if path is not None and path.is_file():
            with contextlib.suppress(OSError):
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return found


def _layerable(tree: Path, patch: Patch) -> bool:
    """No changed path goes through a link of the snapshot (its folders are real folders)."""
    for change in patch.changes:
        parts = repo_path(change.path).split("/")
        for depth in range(1, len(parts)):
            if tree.joinpath(*parts[:depth]).is_symlink():
                return False
        if change.new is not None and tree.joinpath(*parts).is_symlink():
            return False
    return True


def _write_layer(patch: Patch, upper: Path, lower: Path) -> None:
    for change in patch.changes:
        rel = repo_path(change.path)  # never outside the layer
        target = upper / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if change.new is None:
            if os.path.lexists(lower / rel):
                os.mknod(target, stat.S_IFCHR, os.makedev(0, 0))  # overlayfs's whiteout
        else:
            target.write_text(change.new, encoding="utf-8", newline="")
            below = lower / rel
            if below.is_file() and not below.is_symlink():
                target.chmod(stat.S_IMODE(below.stat().st_mode))  # a script stays executable


def _merged(upper: Path, lower: Path, parts: list[str]) -> Path | None:
    """overlayfs's lookup: the upper entry wins; a whiteout hides; an opaque folder hides the
    lower folder's entries; a name the upper layer lacks is the lower layer's."""
    see_lower = True
    for depth in range(1, len(parts) + 1):
        up = upper.joinpath(*parts[:depth])
        if not os.path.lexists(up):
            if not see_lower:
                return None
            down = lower.joinpath(*parts)
            return down if os.path.lexists(down) else None
        info = os.lstat(up)
        if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
            return None
        if depth == len(parts):
            return up
        if not stat.S_ISDIR(info.st_mode):
            return None  # a file (or a link) where a folder belongs: nothing under it is seen
        if _is_opaque(up):
            see_lower = False
    return None  # unreachable: the loop returns at the last part


def _is_opaque(path: Path) -> bool:
    try:
        return os.getxattr(path, _OPAQUE, follow_symlinks=False) == b"y"
    except OSError:
        return False


def _clear_opaque(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.removexattr(path, _OPAQUE, follow_symlinks=False)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
