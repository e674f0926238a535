"""Hunk necessity: split a canonical diff into hunks and rebuild it without some of them (pure).

A verified fix may carry hunks the pass does not need (a stray reformat, a speculative
second change). The minimize node drops each hunk whose removal keeps the pass; this module
only does the text work, re-planned through plan_patch so the result is canonical.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from fixbot.edits.patch import DiffRejected, header_path
from fixbot.edits.unified import plan_patch


@dataclass(frozen=True)
class HunkRef:
    index: int  # position among all hunks of the diff
    path: str
    text: str  # the hunk, from its @@ line


def _file_blocks(diff_text: str) -> list[tuple[list[str], list[list[str]]]]:
    """[(file header lines, [hunk lines, ...]), ...] of a canonical diff."""
    blocks: list[tuple[list[str], list[list[str]]]] = []
    for line in diff_text.splitlines(keepends=True):
        if line.startswith("diff --git "):
            blocks.append(([line], []))
        elif not blocks:
            continue
        elif line.startswith("@@"):
            blocks[-1][1].append([line])
        elif blocks[-1][1]:
            blocks[-1][1][-1].append(line)
        else:
            blocks[-1][0].append(line)
    return blocks


def _path(header: list[str]) -> str:
    return header_path(header[0]) or ""


def hunks(diff_text: str) -> list[HunkRef]:
    refs: list[HunkRef] = []
    for header, file_hunks in _file_blocks(diff_text):
        for lines in file_hunks:
            refs.append(HunkRef(len(refs), _path(header), "".join(lines)))
    return refs


def without(diff_text: str, drop: Collection[int], read: Callable[[str], str | None]) -> str:
    """The canonical diff with the hunks at `drop` removed; "" when nothing is left."""
    kept: list[str] = []
    index = 0
    for header, file_hunks in _file_blocks(diff_text):
        chosen = []
        for lines in file_hunks:
            if index not in drop:
                chosen.append("".join(lines))
            index += 1
        if chosen:
            kept.append("".join(header) + "".join(chosen))
    if not kept:
        return ""
    try:
        return plan_patch("".join(kept), read).diff
    except DiffRejected:
        return ""  # what is left changes nothing, or no longer stands on its own
