"""The pinned commit and its copies: what every check runs over.

take_snapshot   export a commit outside the repository, record its protected files
NO_PROGRAMS     git options under which an untrusted repository's config runs no program
Workspace       one attempt's tree: a layer over the snapshot, or a full copy
"""

from __future__ import annotations

from fixbot.snapshot.git import (
    apply_to_worktree,
    find_root,
    pin_commit,
    repository_identity,
    resolve_commit,
    take_snapshot,
)
from fixbot.snapshot.hostgit import NO_PROGRAMS, config_args
from fixbot.snapshot.protected import (
    Snapshot,
    fresh_copy,
    is_protected,
    manifest_digest,
    protect,
    read_inside,
    repo_files,
    tree_bytes,
    unprotect,
)
from fixbot.snapshot.workspace import (
    Workspace,
    code_digests,
    mismatches,
    prepare,
    put_back_protected,
)

__all__ = [
    "NO_PROGRAMS",
    "Snapshot",
    "Workspace",
    "apply_to_worktree",
    "code_digests",
    "config_args",
    "find_root",
    "fresh_copy",
    "is_protected",
    "manifest_digest",
    "mismatches",
    "pin_commit",
    "prepare",
    "protect",
    "put_back_protected",
    "read_inside",
    "repo_files",
    "repository_identity",
    "resolve_commit",
    "take_snapshot",
    "tree_bytes",
    "unprotect",
]
