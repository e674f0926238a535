"""git on the host: the repository's root, the pinned commit, and its export to a folder.

The commit is untrusted content: it is read into a private index and checked out under a prefix
outside the repository, never through `git archive` (export-ignore/export-subst would edit it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from fixbot import proc
from fixbot.errors import DirtyWorktree, NotAGitRepo, UsageError
from fixbot.snapshot.protected import Snapshot, protect


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
