"""A model's reply -> one canonical Patch (pure: nothing runs, nothing is written but by
write_changes). Loads nothing of fixbot but the exception tree.

    parse_reply    reply text + read access to the snapshot -> Patch, or DiffRejected
    placeable      the definitions of a module a reply's function can replace, by name
    plan_patch     a unified diff -> Patch (hunks placed by content, never by line numbers)
    render_diff    FileChanges -> the canonical diff
    changed_paths  the paths a canonical diff changes (the one header parser)
    hunks/without  a canonical diff's hunks, and the diff without some of them (minimize)
"""

from __future__ import annotations

from fixbot.edits.methods import placeable
from fixbot.edits.minimize import hunks, without
from fixbot.edits.patch import (
    NO_CHANGE,
    DiffRejected,
    FileChange,
    Patch,
    changed_paths,
    header_path,
    render_diff,
    repo_path,
    summary,
    write_changes,
)
from fixbot.edits.reply import parse_reply
from fixbot.edits.unified import plan_patch

__all__ = [
    "NO_CHANGE",
    "DiffRejected",
    "FileChange",
    "Patch",
    "changed_paths",
    "header_path",
    "hunks",
    "parse_reply",
    "placeable",
    "plan_patch",
    "render_diff",
    "repo_path",
    "summary",
    "without",
    "write_changes",
]
