"""A model's unified diff -> a Patch: normalised (reader.py), parsed with unidiff, each hunk
placed by its content (hunks.py), never by its line numbers."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk as ParsedHunk
from unidiff.patch import PatchedFile, PatchSet

from fixbot.edits.hunks import Hunk, HunkLine, apply_hunks
from fixbot.edits.patch import (
    NO_CHANGE,
    DiffRejected,
    FileChange,
    Patch,
    render_diff,
    repo_path,
)
from fixbot.edits.reader import DEV_NULL, EXPECTED_FORMAT, normalise

_KINDS: dict[str, Literal[" ", "-", "+"]] = {" ": " ", "-": "-", "+": "+"}


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


def _hunk(parsed: ParsedHunk, label: str) -> Hunk:
    lines: list[HunkLine] = []
    for line in parsed:
        if line.line_type == "\\":
            if lines:
                lines[-1] = HunkLine(lines[-1].kind, lines[-1].text, no_eol=True)
        elif line.line_type in _KINDS:
            lines.append(HunkLine(_KINDS[line.line_type], line.value.removesuffix("\n")))
    # The reader writes each hunk's counts itself and keeps the header the diff had as the
    # section text: its old start line is the one the diff said.
    said = _SAID_START.match(parsed.section_header or "")
    return Hunk(label, tuple(lines), int(said.group(1)) if said else 0)


_SAID_START = re.compile(r"@@ -(\d+)")


# --- plan ------------------------------------------------------------------------------


def plan_patch(
    diff_text: str, read: Callable[[str], str | None], files: Sequence[str] = ()
) -> Patch:
    """What `diff_text` changes in the repository that `read` shows, as a Patch.

    `read(path)` returns a repo-relative file's content, or None when it does not exist.
    A file the diff modifies that does not exist is the one file of `files` (the
    repository's) its hunks all apply to, when exactly one does; else the problem names the
    files that do exist. Raises DiffRejected naming every problem found.
    """
    before: dict[str, str | None] = {}
    after: dict[str, str | None] = {}
    problems: list[str] = []
    for file in _parse(diff_text):
        if file.kind == "modify" and read(file.path) is None and files:
            file, missing = _retargeted(file, read, files)
            if missing:
                problems.append(missing)
                continue
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
        raise DiffRejected(NO_CHANGE)
    return Patch(changes, render_diff(changes))


EXISTING_SHOWN = 8


def _retargeted(
    file: _FileDiff, read: Callable[[str], str | None], files: Sequence[str]
) -> tuple[_FileDiff, str]:
    """A diff of a missing file, moved to the one existing file its hunks all apply to; or,
    when none or several fit, the problem naming the files that do exist."""
    suffix = PurePosixPath(file.path).suffix
    same_kind = [f for f in files if PurePosixPath(f).suffix == suffix]
    fitting = []
    for path in same_kind:
        text = read(path)
        if text is not None and not apply_hunks(text, file.hunks)[1]:
            fitting.append(path)
    if len(fitting) == 1:
        return _FileDiff(fitting[0], file.kind, file.hunks), ""
    named = fitting or same_kind or list(files)
    shown = ", ".join(named[:EXISTING_SHOWN]) + (" ..." if len(named) > EXISTING_SHOWN else "")
    which = "the files its hunks fit" if len(fitting) > 1 else "the files that do exist"
    return file, (
        f"{file.path}: the diff modifies this file, but there is no such file; "
        f"{which}: {shown}; write the diff against one of them, with its path"
    )


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
