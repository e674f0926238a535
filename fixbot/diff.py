"""Model replies in; canonical diffs, or specific problems for the model, out.

    extract_diff   reply text -> the diff inside its fenced block(s)
    plan_patch     sloppy diff + read access to the repo -> Patch, or DiffRejected
    render_diff    FileChanges -> canonical unified diff that `git apply` accepts
    write_changes  the one impure step: put a Patch's contents under a root

A model's diff is a request, not a patch: it is normalised into a strict diff, parsed
with unidiff, its hunks are placed by content (hunks.py), and the diff fixbot shows and
applies is rendered from the resulting file contents.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk as ParsedHunk
from unidiff.patch import PatchedFile, PatchSet

from fixbot.hunks import Hunk, HunkLine, apply_hunks, split_lines

_FORMAT = (
    "expected a unified diff in a ```diff fenced block: for each file a '--- a/PATH' line "
    "and a '+++ b/PATH' line, then '@@' hunks whose lines start with ' ' (unchanged), "
    "'-' (removed) or '+' (added)"
)
_FENCE = re.compile(r"(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)")
_DIFF_LANGUAGES = frozenset({"diff", "patch", "udiff"})
_DIFF_START = re.compile(r"^(?:diff --git |--- )", re.MULTILINE)
_HUNK_START = re.compile(r"^@@", re.MULTILINE)
_GIT_PATHS = re.compile(r"(a/.+) (b/.+)")
_UNSUPPORTED = re.compile(r"(?:rename|copy) (?:from|to) |Binary files |GIT binary patch")
_DEV_NULL = "/dev/null"
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


# --- extract -------------------------------------------------------------------------


def extract_diff(reply: str) -> str | None:
    """The diff in a reply's ```diff / ```patch blocks (or bare ``` blocks holding a diff).

    Several blocks are concatenated. A reply that is nothing but a raw diff is taken as is.
    """
    text = reply.replace("\r\n", "\n")
    blocks = [body for info, body in _fenced_blocks(text) if _is_diff_block(info, body)]
    if not blocks:
        raw = _DIFF_START.search(text)
        if raw is None or not _HUNK_START.search(text) or "```" in text:
            return None
        blocks = [text[raw.start() :]]
    return "".join(block if block.endswith("\n") else block + "\n" for block in blocks)


def _fenced_blocks(text: str) -> Iterator[tuple[str, str]]:
    """(info string, body) per fenced block; an unclosed fence runs to the end."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opening = _FENCE.fullmatch(lines[i])
        i += 1
        if opening is None:
            continue
        indent, fence = opening["indent"], opening["fence"]
        body: list[str] = []
        while i < len(lines) and not _closes(lines[i], indent, fence):
            body.append(lines[i].removeprefix(indent))
            i += 1
        i += 1
        yield opening["info"].strip(), "\n".join(body)


def _closes(line: str, indent: str, fence: str) -> bool:
    # Not indented deeper than the opening fence: " ```" is a context line in a diff.
    stripped = line.strip()
    return (
        len(line) - len(line.lstrip()) <= len(indent)
        and len(stripped) >= len(fence)
        and set(stripped) == {fence[0]}
    )


def _is_diff_block(info: str, body: str) -> bool:
    language = info.split()[0].lower() if info else ""
    if language:
        return language in _DIFF_LANGUAGES
    return bool(_HUNK_START.search(body) or _DIFF_START.search(body))


# --- normalise: sloppy model diff -> strict diff that unidiff accepts ------------------


@dataclass
class _RawHunk:
    header: str  # as the model wrote it, for problems
    lines: list[str] = field(default_factory=list)


@dataclass
class _RawFile:
    git_paths: tuple[str, str] | None = None
    source: str | None = None
    target: str | None = None
    created: bool = False
    deleted: bool = False
    hunks: list[_RawHunk] = field(default_factory=list)


class _DiffReader:
    """Reads a sloppy diff line by line into files and hunks."""

    def __init__(self) -> None:
        self.files: list[_RawFile] = []
        self.problems: list[str] = []
        self._hunk: _RawHunk | None = None
        self._undecided: list[str] = []  # unprefixed lines in a hunk: context, or prose?

    def read(self, lines: list[str]) -> None:
        for i, line in enumerate(lines):
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if self._hunk is not None and not self._ends_hunk(line, following):
                self._hunk_line(self._hunk, line)
                continue
            self._hunk = None
            self._undecided.clear()  # trailing unprefixed lines were prose
            self._header_line(line)

    def _ends_hunk(self, line: str, following: str) -> bool:
        # An unprefixed line after a blank one starts a paragraph: prose after the diff.
        prose = line[:1] not in ("", " ", "+", "-", "\\") and self._undecided[-1:] == [""]
        return prose or _is_header(line, following, in_hunk=True)

    def _hunk_line(self, hunk: _RawHunk, line: str) -> None:
        if line[:1] not in (" ", "+", "-", "\\"):
            self._undecided.append(line)
            return
        # Unprefixed lines followed by more hunk lines are context missing its leading space.
        hunk.lines.extend(" " + undecided for undecided in self._undecided)
        self._undecided.clear()
        hunk.lines.append(line)

    def _header_line(self, line: str) -> None:
        current = self.files[-1] if self.files else None
        open_header = current is not None and not current.hunks
        if line.startswith("diff --git "):
            self.files.append(_RawFile(git_paths=_git_paths(line.removeprefix("diff --git "))))
        elif current is not None and open_header and line.startswith("new file mode "):
            current.created = True
        elif current is not None and open_header and line.startswith("deleted file mode "):
            current.deleted = True
        elif _UNSUPPORTED.match(line):
            self.problems.append(f"unsupported diff line {line!r}: only text edits can be applied")
        elif line.startswith("--- "):
            self._file_for("source").source = line.removeprefix("--- ")
        elif line.startswith("+++ "):
            self._file_for("target").target = line.removeprefix("+++ ")
        elif line.startswith("@@"):
            file = self.files[-1] if self.files else self._new_file()
            self._hunk = _RawHunk(_shown_header(line))
            file.hunks.append(self._hunk)
        # Anything else is prose or git metadata (index, mode lines): not needed.

    def _file_for(self, side: Literal["source", "target"]) -> _RawFile:
        current = self.files[-1] if self.files else None
        if current is None or current.hunks or getattr(current, side) is not None:
            return self._new_file()
        return current

    def _new_file(self) -> _RawFile:
        self.files.append(_RawFile())
        return self.files[-1]


def _is_header(line: str, following: str, *, in_hunk: bool) -> bool:
    if line.startswith(("@@", "diff --git ")):
        return True
    if line.startswith("--- "):
        # Inside a hunk "--- x" may be a removed "-- x" line (an SQL or Lua comment).
        return (
            not in_hunk
            or following.startswith("+++ ")
            or (following.startswith("@@") and len(line.split()) == 2)
        )
    return line.startswith("+++ ") and not in_hunk


def _git_paths(rest: str) -> tuple[str, str] | None:
    prefixed = _GIT_PATHS.fullmatch(rest)
    if prefixed:
        return prefixed[1], prefixed[2]
    half = len(rest) // 2
    if len(rest) % 2 and rest[:half] == rest[half + 1 :]:
        return rest[:half], rest[half + 1 :]
    return None


def _shown_header(line: str) -> str:
    closing = line.find("@@", 2)
    return line[: closing + 2] if closing != -1 else line.strip()


def _strict_diff(files: list[_RawFile]) -> tuple[str, list[str]]:
    """Strict unified diff text, with hunk counts computed from the lines the model wrote."""
    out: list[str] = []
    problems: list[str] = []
    for file in files:
        header = _header_paths(file)
        if header is None:
            problems.append(f"a hunk has no file header; {_FORMAT}")
            continue
        out += [f"--- {header[0]}\n", f"+++ {header[1]}\n"]
        for hunk in file.hunks:
            old = sum(line[0] in " -" for line in hunk.lines)
            new = sum(line[0] in " +" for line in hunk.lines)
            if old or new:
                # The model's header rides along as the section text, to name the hunk later.
                out.append(f"@@ -1,{old} +1,{new} @@ {hunk.header}\n")
                out += [line + "\n" for line in hunk.lines]
    return "".join(out), problems


def _header_paths(file: _RawFile) -> tuple[str, str] | None:
    git_source, git_target = file.git_paths or (None, None)
    source = file.source or git_source or file.target or git_target
    target = file.target or git_target or file.source or git_source
    if source is None or target is None:
        return None
    return (_DEV_NULL if file.created else source), (_DEV_NULL if file.deleted else target)


# --- parse: strict diff -> file diffs with repo-relative paths -------------------------


@dataclass(frozen=True)
class _FileDiff:
    path: str
    kind: Literal["create", "delete", "modify"]
    hunks: tuple[Hunk, ...]


def _parse(diff_text: str) -> list[_FileDiff]:
    reader = _DiffReader()
    reader.read(diff_text.replace("\r\n", "\n").split("\n"))
    if not reader.files and not reader.problems:
        raise DiffRejected(f"no unified diff found; {_FORMAT}")
    strict, problems = _strict_diff(reader.files)
    problems = reader.problems + problems
    try:
        parsed = PatchSet(strict)
    except UnidiffParseError as error:
        raise DiffRejected(*problems, f"could not parse the diff ({error}); {_FORMAT}") from error
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
    source = None if source is None else _repo_path(source)
    target = None if target is None else _repo_path(target)
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
    return None if path == _DEV_NULL else path


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


def _repo_path(path: str) -> str:
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


def _rendered_hunks(old: list[str], new: list[str]) -> Iterator[str]:
    # autojunk=False: difflib's popular-line heuristic makes poor diffs of long files.
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
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
    targets = [base / _repo_path(change.path) for change in patch.changes]
    for change, target in zip(patch.changes, targets, strict=True):
        if not target.resolve().is_relative_to(base):
            raise DiffRejected(f"path {change.path!r} leads outside the repository via a symlink")
    for change, target in zip(patch.changes, targets, strict=True):
        if change.new is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(change.new, encoding="utf-8", newline="")
