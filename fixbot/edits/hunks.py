"""Place a model's hunks in a file by their content, and apply them there.

Models get the numbers in `@@` headers wrong, so a hunk is placed by its context and
removed lines alone: an exact match first, then one that ignores leading and trailing
whitespace. A hunk that fits nowhere, or in more than one place, is a problem for the
model to fix, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

_LINE = re.compile(r"[^\n]*\n|[^\n]+")
# A context line such as "...", "# ... existing code ..." or "// …" stands for elided code.
_ELISION = re.compile(r"(?:#|//|/\*|<!--|--|;)?\s*(?:\.\.\.|…).*")
_SHOWN_PLACES = 5


@dataclass(frozen=True)
class HunkLine:
    kind: Literal[" ", "-", "+"]
    text: str  # without its line terminator
    no_eol: bool = False  # followed by "\ No newline at end of file"


@dataclass(frozen=True)
class Hunk:
    label: str  # how problems name it: "hunk 2 of src/calc.py (@@ -10,3 +10,3 @@)"
    lines: tuple[HunkLine, ...]
    start: int = 0  # the header's old start line (1-based); 0: none said

    @property
    def old(self) -> tuple[str, ...]:
        """The context and removed lines: what the hunk expects to find in the file."""
        return tuple(line.text for line in self.lines if line.kind != "+")

    @property
    def mentions_eof(self) -> bool:
        return any(line.no_eol for line in self.lines)


class _Unplaceable(Exception):
    """A hunk has no single place in the file; the message says why."""


def split_lines(text: str) -> list[str]:
    """Lines with their terminators, split at "\\n" only (str.splitlines also splits at \\f)."""
    return _LINE.findall(text)


def apply_hunks(content: str, hunks: Sequence[Hunk]) -> tuple[str, list[str]]:
    """Apply `hunks` in order; returns the new content and a problem for each misplaced hunk.

    Each hunk is looked for after the end of the previous one, then in the whole file.
    """
    lines = split_lines(content)
    eol = _dominant_eol(lines)
    problems: list[str] = []
    cursor = offset = 0
    for hunk in hunks:
        said = hunk.start - 1 + offset if hunk.start > 0 else None  # as git apply reads it
        try:
            start = _locate(lines, hunk.old, cursor, said)
        except _Unplaceable as why:
            problems.append(f"{hunk.label}: {why}")
            continue
        end = start + len(hunk.old)
        replacement = _replacement(lines[start:end], hunk, eol)
        lines[start:end] = replacement
        cursor = start + len(replacement)
        offset += len(replacement) - len(hunk.old)
    text = _join(lines, eol)
    if not any(hunk.mentions_eof for hunk in hunks) and content and not content.endswith("\n"):
        text = _without_final_eol(text)  # the model said nothing about it: keep the file's state
    return text, problems


def _locate(lines: list[str], old: tuple[str, ...], cursor: int, said: int | None = None) -> int:
    """Where the hunk's context is: its one place, or, where it matches exactly in several,
    the one its header names (as git apply takes it); else _Unplaceable."""
    if not old:
        if not lines:
            return 0
        raise _Unplaceable(
            "it has only added lines and no context, so its place in the file is ambiguous; "
            "include a few unchanged lines around the change"
        )
    for key in (_exact, _loose):
        hay = [key(_body(line)) for line in lines]
        needle = [key(text) for text in old]
        found = _find(hay, needle, cursor) or _find(hay, needle, 0)
        if len(found) == 1:
            return found[0]
        if found and key is _exact and said in found:
            return said
        if found:
            raise _Unplaceable(_ambiguous(found))
    raise _Unplaceable(_not_found(lines, old))


def _exact(text: str) -> str:
    return text


def _loose(text: str) -> str:
    return text.strip()


def _find(hay: list[str], needle: list[str], start: int) -> list[int]:
    width = len(needle)
    return [
        i
        for i in range(start, len(hay) - width + 1)
        if hay[i] == needle[0] and hay[i : i + width] == needle
    ]


def _ambiguous(found: list[int]) -> str:
    shown = ", ".join(str(i + 1) for i in found[:_SHOWN_PLACES])
    more = ", ..." if len(found) > _SHOWN_PLACES else ""
    return (
        f"ambiguous: its context/removed lines match {len(found)} places "
        f"(at lines {shown}{more}); add more context so that it matches only one"
    )


def _not_found(lines: list[str], old: tuple[str, ...]) -> str:
    hay = [_loose(_body(line)) for line in lines]
    matched, at = _longest_prefix(hay, [_loose(text) for text in old])
    problem = f"context/removed lines not found in the file; first line not found: {old[matched]!r}"
    if matched:
        after = at + matched
        there = repr(_body(lines[after])) if after < len(lines) else "the end of the file"
        problem += (
            f" (the lines before it match at line {at + 1}, but the file continues with {there})"
        )
    elided = next((text for text in old if _ELISION.fullmatch(text.strip())), None)
    if elided is not None:
        problem += (
            f"; {elided!r} looks like a placeholder for elided code: a diff must spell out "
            "every context and removed line exactly as the file has it"
        )
    return problem


def _longest_prefix(hay: list[str], needle: list[str]) -> tuple[int, int]:
    """How many leading lines of `needle` occur together in `hay`, and where (first best)."""
    best, best_at = 0, 0
    for at in range(len(hay)):
        length = 0
        while length < len(needle) and at + length < len(hay):
            if hay[at + length] != needle[length]:
                break
            length += 1
        if length > best:
            best, best_at = length, at
    return best, best_at


def _replacement(block: list[str], hunk: Hunk, eol: str) -> list[str]:
    """The file's own text for context lines, the model's text for added lines."""
    found = iter(block)
    out: list[str] = []
    for line in hunk.lines:
        if line.kind == "+":
            out.append(line.text if line.no_eol else line.text + eol)
        elif line.kind == " ":
            out.append(next(found))
        else:
            next(found)
    return out


def _join(lines: list[str], eol: str) -> str:
    """Concatenate, giving every line but the last a terminator."""
    ended = [line if line.endswith("\n") else line + eol for line in lines[:-1]]
    return "".join(ended + lines[-1:])


def _without_final_eol(text: str) -> str:
    return text.removesuffix("\n").removesuffix("\r") if text.endswith("\n") else text


def _body(line: str) -> str:
    return line.removesuffix("\n").removesuffix("\r")


def _dominant_eol(lines: list[str]) -> str:
    crlf = sum(line.endswith("\r\n") for line in lines)
    lf = sum(line.endswith("\n") for line in lines) - crlf
    return "\r\n" if crlf > lf else "\n"
