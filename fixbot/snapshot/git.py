"""git on the host: the repository's root, the pinned commit, and its export to a folder.

The repository, its config and the commit are untrusted: every command goes through HostGit
(hostgit.py), with no secret in its environment and no program of the repository's run, and
the commit is exported from a private git directory that borrows only its objects (never
`git archive`, never the repository's index or attributes): the snapshot is its blobs, byte for
byte. LFS content is never downloaded: an LFS file's snapshot is its pointer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from fixbot.errors import DirtyWorktree, NotAGitRepo, UsageError
from fixbot.snapshot.hostgit import HostGit
from fixbot.snapshot.protected import Snapshot, protect


def find_root(repo: Path) -> Path:
    """The top folder of the git repository that holds `repo`."""
    if not repo.is_dir():
        raise NotAGitRepo(f"{repo} is not a directory")
    with HostGit() as git:
        top = git.find_root(repo)
    if top is None:
        raise NotAGitRepo(f"{repo} is not a git repository (git rev-parse failed)")
    return top


def pin_commit(root: Path) -> str:
    """The HEAD commit of the repository at `root`; refuses a dirty tracked tree."""
    with HostGit() as git:
        head = git.resolve_commit(root, "HEAD")
        if head is None:
            raise NotAGitRepo(f"{root} has no commits yet: commit the code fixbot should fix")
        dirty = git.dirty_paths(root)
    if dirty:
        raise DirtyWorktree(
            f"{root} has uncommitted changes ({', '.join(dirty[:5])}); commit or stash them: "
            "fixbot fixes a commit and never touches your working tree"
        )
    return head


def repository_identity(repo: Path) -> str:
    """What names this repository across runs and machines: its origin's URL without any
    credentials, else its path (lessons are kept per repository)."""
    with HostGit() as git:
        url = git.origin_url(repo)
    if not url:
        return str(repo.resolve())
    url = re.sub(r"^(\w+://)[^/@]*@", r"\1", url)  # https://user:token@host/... -> https://host/...
    return url.removesuffix(".git").rstrip("/")


def resolve_commit(repo: Path, ref: str) -> str:
    """The commit a branch, tag or sha names in repo; a clear usage error when none."""
    if ref.startswith("-"):
        raise UsageError(f"base {ref!r} is not a git revision")
    with HostGit() as git:
        found = git.resolve_commit(repo, ref)
    if found is None:
        raise UsageError(f"base {ref!r} does not name a commit in {repo}")
    return found


def take_snapshot(repo: Path, globs: Iterable[str], workdir: Path, commit: str) -> Snapshot:
    """Export `commit` of `repo` into workdir/tree and record the protected-file manifest."""
    tree = workdir / "tree"
    tree.mkdir(parents=True)
    with HostGit() as git:
        full = git.resolve_commit(repo, commit) if not commit.startswith("-") else None
        if full is None:
            raise NotAGitRepo(f"{commit!r} does not name a commit in {repo}")
        git.export_commit(repo, full, tree)
    return protect(Snapshot(repo=repo, commit=commit, tree=tree, manifest={}), globs)


def apply_to_worktree(root: Path, diff_text: str) -> None:
    """`git apply` of fixbot's diff to the user's working tree (`fix --apply`), with no program
    of the repository's run (filters, hooks) and nothing of fixbot's environment."""
    with HostGit() as git:
        args = git.in_repo(root, "apply", "--whitespace=nowarn", "-", extra=git.filter_pairs(root))
        git.run(args, stdin=diff_text.encode(), check=True)
