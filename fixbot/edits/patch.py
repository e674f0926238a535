"""A patch as data: file changes, the canonical diff rendered from them, and its paths.

    Patch          FileChanges and the canonical diff of exactly them
    render_diff    FileChanges -> canonical unified diff that `git apply` accepts
    write_changes  the one impure step: put a Patch's contents under a root
    header_path    the one parser of a canonical diff's `diff --git a/P b/P` lines

The diff fixbot shows and applies is always rendered here, from file contents, never copied
from a model's reply.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fixbot.edits.hunks import split_lines

# Every refusal of a reply whose edit leaves the files as they are says this, plainly.
NO_CHANGE = (
    "the reply changes nothing: the code it sends back is the code as it is, so the failing "
    "tests fail exactly as before; change the code where the bug is"
)


class DiffRejected(Exception):
    """The model's diff cannot be applied; each problem is fed back to the model."""

    def __init__(self, *problems: str) -> None:
        super().__init__(*problems)
        self.problems: tuple[str, ...] = problems

    def __str__(self) -> str:
        return "\n".join(self.problems)


@dataclass(frozen=True)
class FileChange:
    path: str  # repo-relative posix path
    old: str | None  # None: the file did not exist
    new: str | None  # None: the file is deleted


@dataclass(frozen=True)
class Patch:
    changes: tuple[FileChange, ...]
    diff: str  # canonical diff of exactly `changes`, `git apply`-able on the original tree

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(change.path for change in self.changes)

    def without(self, paths: Sequence[str]) -> Patch | None:
        """The patch without its changes to `paths` (its diff rendered anew); None when
        nothing is left."""
        kept = tuple(change for change in self.changes if change.path not in paths)
        return Patch(kept, render_diff(kept)) if kept else None


def repo_path(path: str) -> str:
    """A clean repo-relative posix path, or DiffRejected saying what is wrong with it."""
    if path.startswith("/") or re.match(r"[A-Za-z]:", path) or "\\" in path:
        raise DiffRejected(f"path {path!r} is not relative to the repository root")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise DiffRejected(f"path {path!r} leaves the repository")
    if any(part.lower() == ".git" for part in parts):
        raise DiffRejected(f"path {path!r} is inside .git/, which is never changed")
    if not parts or "\0" in path:
        raise DiffRejected(f"path {path!r} does not name a file")
    return "/".join(parts)


# --- render ----------------------------------------------------------------------------


def header_path(line: str) -> str | None:
    """The path a canonical diff's `diff --git a/P b/P` line names; None for any other line.
    The one parser of canonical diff headers (fixbot renders them, so a/ and b/ agree)."""
    if not line.startswith("diff --git a/"):
        return None
    paths = line.rstrip("\n").removeprefix("diff --git ")  # "a/P b/P"
    return paths[2 : (len(paths) - 1) // 2]


def changed_paths(diff_text: str) -> list[str]:
    """Every path a canonical diff changes, in its order."""
    return [path for line in diff_text.split("\n") if (path := header_path(line)) is not None]


def summary(diff_text: str) -> str:
    """`a.py, b.py (+3 -1)`: the files a canonical diff changes and its line counts."""
    if not diff_text:
        return "-"
    lines = diff_text.splitlines()
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return f"{', '.join(changed_paths(diff_text)) or '-'} (+{added} -{removed})"


def render_diff(changes: Sequence[FileChange]) -> str:
    """A git-style unified diff (3 lines of context) of `changes`."""
    return "".join(_render_change(change) for change in changes if change.old != change.new)


def _render_change(change: FileChange) -> str:
    path = change.path
    out = [f"diff --git a/{path} b/{path}\n"]
    if change.old is None:
        out.append("new file mode 100644\n")
    elif change.new is None:
        out.append("deleted file mode 100644\n")
    old, new = split_lines(change.old or ""), split_lines(change.new or "")
    if old == new:  # an empty file created or deleted: headers only, as git writes it
        return "".join(out)
    out.append("--- /dev/null\n" if change.old is None else f"--- a/{path}\n")
    out.append("+++ /dev/null\n" if change.new is None else f"+++ b/{path}\n")
    out += _rendered_hunks(old, new)
    return "".join(out)


_Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


class _TrimmedMatcher(difflib.SequenceMatcher[str]):
    """Matches only what lies between the common head and tail: a small edit to a long
    file costs what the edit costs, not what the file costs (difflib is quadratic)."""

    def __init__(self, old: list[str], new: list[str]) -> None:
        head = 0
        while head < min(len(old), len(new)) and old[head] == new[head]:
            head += 1
        tail = 0
        while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        self._head, self._tail, self._sizes = head, tail, (len(old), len(new))
        # autojunk=False: difflib's popular-line heuristic makes poor diffs of long files.
        super().__init__(
            None, old[head : len(old) - tail], new[head : len(new) - tail], autojunk=False
        )

    def get_opcodes(self) -> list[_Opcode]:
        h = self._head
        ops = [
            (tag, i1 + h, i2 + h, j1 + h, j2 + h) for tag, i1, i2, j1, j2 in super().get_opcodes()
        ]
        if h:
            ops.insert(0, ("equal", 0, h, 0, h))
        if self._tail:
            n_old, n_new = self._sizes
            ops.append(("equal", n_old - self._tail, n_old, n_new - self._tail, n_new))
        merged: list[_Opcode] = []
        for op in ops:
            if op[1] == op[2] and op[3] == op[4]:
                continue
            if merged and merged[-1][0] == op[0] == "equal":
                last = merged.pop()
                op = ("equal", last[1], op[2], last[3], op[4])
            merged.append(op)
        return merged


def _rendered_hunks(old: list[str], new: list[str]) -> Iterator[str]:
    matcher = _TrimmedMatcher(old, new)
    for group in matcher.get_grouped_opcodes(3):
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (_diff_line(" ", line) for line in old[i1:i2])
                continue
            yield from (_diff_line("-", line) for line in old[i1:i2])
            yield from (_diff_line("+", line) for line in new[j1:j2])


def _range(start: int, stop: int) -> str:
    """A hunk range as git writes it: "3" for one line, "2,0" for none after line 2."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def _diff_line(prefix: str, line: str) -> str:
    if line.endswith("\n"):
        return prefix + line
    return f"{prefix}{line}\n\\ No newline at end of file\n"


# --- write -----------------------------------------------------------------------------


def write_changes(patch: Patch, root: Path) -> None:
    """Write and delete `patch`'s files under `root`, after checking every path stays inside."""
    base = root.resolve()
    targets = [base / repo_path(change.path) for change in patch.changes]
    for change, target in zip(patch.changes, targets, strict=True):
        if not target.resolve().is_relative_to(base):
            raise DiffRejected(f"path {change.path!r} leads outside the repository via a symlink")
    for change, target in zip(patch.changes, targets, strict=True):
        if change.new is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(change.new, encoding="utf-8", newline="")
