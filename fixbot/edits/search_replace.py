"""SEARCH/REPLACE blocks: a path line, then <<<<<<< SEARCH / ======= / >>>>>>> REPLACE.

The search text must occur exactly once in the file (trailing whitespace ignored); anything else
is a named problem, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fixbot.edits.patch import DiffRejected, repo_path

_SEARCH = re.compile(r"^<{5,9} ?SEARCH\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_REPLACE = re.compile(r"^>{5,9} ?REPLACE\s*$")
PATH_LINE = re.compile(r"^[\s*`#:]*(?:file:?\s*)?([\w./-]+\.\w+)[\s*`:]*$", re.IGNORECASE)


def search_replace_blocks(text: str) -> list[tuple[str | None, str, str | None]]:
    lines = text.split("\n")
    blocks: list[tuple[str | None, str, str | None]] = []
    path: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        named = PATH_LINE.match(line)
        if named and not _SEARCH.match(line):
            path = named.group(1)
        if _SEARCH.match(line):
            search, i = _until(lines, i + 1, _DIVIDER)
            replace, i = _until(lines, i + 1, _REPLACE)
            if i >= len(lines):  # no ======= or no >>>>>>> REPLACE: a cut-off reply
                blocks.append((path, "", None))
                break
            blocks.append((path, search, replace))
        i += 1
    return blocks


def _until(lines: list[str], start: int, end: re.Pattern[str]) -> tuple[str, int]:
    i = start
    while i < len(lines) and not end.match(lines[i]):
        i += 1
    body = lines[start:i]
    return ("\n".join(body) + "\n") if body else "", i


def apply_search_replace(
    path: str | None,
    search: str,
    replace: str | None,
    current: Callable[[str], str | None],
    changes: dict[str, str],
    problems: list[str],
) -> None:
    if replace is None:
        problems.append(
            "a SEARCH/REPLACE block is not closed (no ======= or >>>>>>> REPLACE line): "
            "the reply may have been cut off; send the whole block"
        )
        return
    if path is None:
        problems.append("a SEARCH/REPLACE block names no file: put its path on the line above")
        return
    try:
        path = repo_path(path)
    except DiffRejected as exc:
        problems.extend(exc.problems)
        return
    content = current(path)
    if content is None:
        problems.append(f"{path}: no such file for a SEARCH/REPLACE block")
        return
    if not search.strip():
        problems.append(f"{path}: a SEARCH block is empty")
        return
    starts = _occurrences(content, search)
    if len(starts) != 1:
        how = "does not occur" if not starts else f"occurs {len(starts)} times"
        first = search.strip().splitlines()[0][:80]
        problems.append(f"{path}: the SEARCH text starting {first!r} {how} in the file")
        return
    start, stop = starts[0]
    changes[path] = content[:start] + replace + content[stop:]


def _occurrences(content: str, search: str) -> list[tuple[int, int]]:
    """(start, stop) character spans of whole-line matches, trailing whitespace ignored."""
    lines = content.splitlines(keepends=True)
    wanted = [line.rstrip() for line in search.splitlines()]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    found = []
    for i in range(len(lines) - len(wanted) + 1):
        if [line.rstrip() for line in lines[i : i + len(wanted)]] == wanted:
            found.append((offsets[i], offsets[i + len(wanted)]))
    return found
