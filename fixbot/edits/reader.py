"""Normalise a model's sloppy diff into a strict unified diff that unidiff accepts.

    normalise   sloppy diff text -> (strict diff text, problems for the model)

Models write diffs a parser rejects: wrong `@@` line counts, context lines that lost
their leading space, hunks without file headers, prose between or after the hunks. The
reader keeps what the model meant: it recomputes every hunk's counts from the lines
written, keeps the model's `@@` header as the hunk's section text (to name the hunk in
problems), and turns what cannot be an edit (renames, binary patches, missing headers)
into named problems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

EXPECTED_FORMAT = (
    "expected a unified diff in a ```diff fenced block: for each file a '--- a/PATH' line "
    "and a '+++ b/PATH' line, then '@@' hunks whose lines start with ' ' (unchanged), "
    "'-' (removed) or '+' (added)"
)
DEV_NULL = "/dev/null"
_GIT_PATHS = re.compile(r"(a/.+) (b/.+)")
_UNSUPPORTED = re.compile(r"(?:rename|copy) (?:from|to) |Binary files |GIT binary patch")


def normalise(diff_text: str) -> tuple[str, list[str]]:
    """The strict diff the model meant, and every problem that kept parts of it out."""
    reader = _DiffReader()
    reader.read(diff_text.replace("\r\n", "\n").split("\n"))
    if not reader.files and not reader.problems:
        return "", [f"no unified diff found; {EXPECTED_FORMAT}"]
    strict, problems = _strict_diff(reader.files)
    return strict, reader.problems + problems


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
            problems.append(f"a hunk has no file header; {EXPECTED_FORMAT}")
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
    return (DEV_NULL if file.created else source), (DEV_NULL if file.deleted else target)
