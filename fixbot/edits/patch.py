"""Model replies in; canonical diffs, or specific problems for the model, out.

    extract_diff   reply text -> the diff inside its fenced block(s)    (from fences.py)
    plan_patch     sloppy diff + read access to the repo -> Patch, or DiffRejected
    render_diff    FileChanges -> canonical unified diff that `git apply` accepts
    write_changes  the one impure step: put a Patch's contents under a root

A model's diff is a request, not a patch: it is normalised into a strict diff
(diffreader.py), parsed with unidiff, its hunks are placed by content (hunks.py), and the
diff fixbot shows and applies is rendered from the resulting file contents.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk as ParsedHunk
from unidiff.patch import PatchedFile, PatchSet

from fixbot.edits.fences import extract_diff
from fixbot.edits.hunks import Hunk, HunkLine, apply_hunks, split_lines
from fixbot.edits.reader import DEV_NULL, EXPECTED_FORMAT, normalise

__all__ = [
    "DiffRejected",
    "FileChange",
    "Patch",
    "extract_diff",
    "plan_patch",
    "render_diff",
    "write_changes",
]

_KINDS: dict[str, Literal[" ", "-", "+"]] = {" ": " ", "-": "-", "+": "+"}


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


# --- parse: strict diff -> file diffs with repo-relative paths -------------------------


@dataclass(frozen=True)
class _FileDiff:
    path: str
    kind: Literal["create", "delete", "modify"]
    hunks: tuple[Hunk, ...]


def _parse(diff_text: str) -> list[_FileDiff]:
    strict, problems = normalise(diff_text)
    try:
        parsed = PatchSet(strict)
    except UnidiffParseError as error:
        raise DiffRejected(
            *problems, f"could not parse the diff ({error}); {EXPECTED_FORMAT}"
        ) from error
    files: list[_FileDiff] = []
    for patched in parsed:
        try:
            files.append(_file_diff(patched))
        except DiffRejected as rejected:
            problems += rejected.problems
    if problems:
        raise DiffRejected(*problems)
    return files


def _file_diff(patched: PatchedFile) -> _FileDiff:
    source, target = _strip_prefixes(
        _header_path(patched.source_file), _header_path(patched.target_file)
    )
    if source is None and target is None:
        raise DiffRejected("a file header has /dev/null on both sides")
    source = None if source is None else repo_path(source)
    target = None if target is None else repo_path(target)
    if source is not None and target is not None and source != target:
        raise DiffRejected(
            f"'{source}' -> '{target}': renaming is not supported; "
            "delete the old file and create the new one in two file sections"
        )
    path = target or source
    assert path is not None
    kind: Literal["create", "delete", "modify"] = (
        "create" if source is None else "delete" if target is None else "modify"
    )
    hunks = tuple(
        _hunk(h, f"hunk {n} of {path} ({h.section_header})") for n, h in enumerate(patched, 1)
    )
    return _FileDiff(path, kind, hunks)


def _header_path(raw: str) -> str | None:
    path = raw.strip()
    if len(path) > 1 and path[0] == path[-1] == '"':
        path = path[1:-1]
    return None if path == DEV_NULL else path


def _strip_prefixes(source: str | None, target: str | None) -> tuple[str | None, str | None]:
    """Drop git's a/ and b/ prefixes: from every named side, or from the one side that has
    it when that makes both sides name the same file."""
    named = [path for path in (source, target) if path is not None]
    if all(path.startswith(("a/", "b/")) for path in named):
        return (source and source[2:]), (target and target[2:])
    if source is not None and target is not None:
        bare_source = source.removeprefix("a/")
        if bare_source == target.removeprefix("b/"):
            return bare_source, bare_source
    return source, target


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


def _hunk(parsed: ParsedHunk, label: str) -> Hunk:
    lines: list[HunkLine] = []
    for line in parsed:
        if line.line_type == "\\":
            if lines:
                lines[-1] = HunkLine(lines[-1].kind, lines[-1].text, no_eol=True)
        elif line.line_type in _KINDS:
            lines.append(HunkLine(_KINDS[line.line_type], line.value.removesuffix("\n")))
    return Hunk(label, tuple(lines))


# --- plan ------------------------------------------------------------------------------


def plan_patch(diff_text: str, read: Callable[[str], str | None]) -> Patch:
    """What `diff_text` changes in the repository that `read` shows, as a Patch.

    `read(path)` returns a repo-relative file's content, or None when it does not exist.
    Raises DiffRejected naming every problem found.
    """
    before: dict[str, str | None] = {}
    after: dict[str, str | None] = {}
    problems: list[str] = []
    for file in _parse(diff_text):
        if file.path not in before:
            before[file.path] = after[file.path] = read(file.path)
        try:
            after[file.path] = _apply(file, after[file.path])
        except DiffRejected as rejected:
            problems += rejected.problems
    if problems:
        raise DiffRejected(*problems)
    changes = tuple(
        FileChange(path, before[path], after[path])
        for path in before
        if before[path] != after[path]
    )
    if not changes:
        raise DiffRejected("the diff changes nothing")
    return Patch(changes, render_diff(changes))


def _apply(file: _FileDiff, current: str | None) -> str | None:
    if file.kind == "create" and current is not None:
        raise DiffRejected(
            f"{file.path}: the diff creates this file, but it already exists; "
            "write a diff against its current content"
        )
    if file.kind != "create" and current is None:
        verb = "deletes" if file.kind == "delete" else "modifies"
        raise DiffRejected(
            f"{file.path}: the diff {verb} this file, but it does not exist; "
            f"to create it, use '--- /dev/null' and '+++ b/{file.path}'"
        )
    new, problems = apply_hunks(current or "", file.hunks)
    if problems:
        raise DiffRejected(*problems)
    return None if file.kind == "delete" else new


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
