"""The pinned commit, the manifest of protected files, and fresh copies of the tree for each check.

The snapshot is the committed tree at HEAD, exported once (git archive) into a pristine folder
outside the user's repository; every check gets its own copy of it. Uncommitted changes to
tracked files are refused: fixbot fixes commits, and a dirty tree is not one.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from fixbot import proc
from fixbot.errors import DirtyWorktree, NotAGitRepo, UsageError


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


def find_root(repo: Path) -> Path:
    """The top folder of the git repository that holds `repo`."""
    if not repo.is_dir():
        raise NotAGitRepo(f"{repo} is not a directory")
    top = proc.run(["git", "-C", str(repo), "rev-parse", "--show-toplevel"], timeout=60)
    if top.returncode != 0:
        raise NotAGitRepo(f"{repo} is not a git repository (git rev-parse failed)")
    return Path(top.output.strip())


def pin_commit(root: Path) -> str:
    """The HEAD commit of the repository at `root`; refuses a dirty tracked tree."""
    head = proc.run(["git", "-C", str(root), "rev-parse", "--verify", "HEAD^{commit}"], timeout=60)
    if head.returncode != 0:
        raise NotAGitRepo(f"{root} has no commits yet: commit the code fixbot should fix")
    status = ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"]
    dirty = [line for line in proc.check(status, timeout=120).output.splitlines() if line]
    if dirty:
        files = ", ".join(line[3:] for line in dirty[:5])
        raise DirtyWorktree(
            f"{root} has uncommitted changes ({files}); commit or stash them: "
            "fixbot fixes a commit and never touches your working tree"
        )
    return head.output.strip()


def repository_identity(repo: Path) -> str:
    """What names this repository across runs and machines: its origin's URL without any
    credentials, else its path (lessons are kept per repository)."""
    found = proc.run(["git", "-C", str(repo), "config", "--get", "remote.origin.url"], timeout=30)
    url = found.output.strip() if found.returncode == 0 else ""
    if not url:
        return str(repo.resolve())
    url = re.sub(r"^(\w+://)[^/@]*@", r"\1", url)  # https://user:token@host/... -> https://host/...
    return url.removesuffix(".git").rstrip("/")


def resolve_commit(repo: Path, ref: str) -> str:
    """The commit a branch, tag or sha names in repo; a clear usage error when none."""
    if ref.startswith("-"):
        raise UsageError(f"base {ref!r} is not a git revision")
    found = proc.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}"],
        timeout=60,
    )
    if found.returncode != 0:
        raise UsageError(f"base {ref!r} does not name a commit in {repo}")
    return found.output.strip()


def take_snapshot(repo: Path, globs: Iterable[str], workdir: Path, commit: str) -> Snapshot:
    """Export `commit` of `repo` into workdir/tree and record the protected-file manifest."""
    # A private index, not git archive: export-ignore/export-subst must not edit the snapshot.
    index = workdir / "snapshot.index"
    tree = workdir / "tree"
    tree.mkdir(parents=True)
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    proc.check(["git", "-C", str(repo), "read-tree", commit], env=env)
    proc.check(["git", "-C", str(repo), "checkout-index", "--all", f"--prefix={tree}/"], env=env)
    index.unlink()
    return protect(Snapshot(repo=repo, commit=commit, tree=tree, manifest={}), globs)


def unprotect(snapshot: Snapshot, paths: Iterable[str]) -> Snapshot:
    """The snapshot without these paths in its manifest (a human allowed edits to them)."""
    drop = set(paths)
    if not drop:
        return snapshot
    return replace(snapshot, manifest={k: v for k, v in snapshot.manifest.items() if k not in drop})


def protect(snapshot: Snapshot, globs: Iterable[str]) -> Snapshot:
    """The snapshot with its manifest recorded for these protected globs."""
    globs = tuple(globs)
    tree = snapshot.tree
    manifest = {rel: digest_of(tree / rel) for rel in _files(tree) if is_protected(rel, globs)}
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
