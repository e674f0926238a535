"""The code blocks of a reply, and the file each names.

A block is fenced (``` or ~~~, an info string that may name the file: ```python calc.py; it
ends where fences.closes says, so a docstring's own ```pycon example stays inside it), or
indented four spaces (Markdown's indented code) right under a line naming a file. A fenced
block names its file in the info string, else on the line before the fence (a blank line
between them allowed), e.g. a bold heading `**calc.py**:`; an indented block only counts
under such a line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fixbot.edits.fences import closes
from fixbot.edits.search_replace import PATH_LINE

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})\s*([^\s`]*)\s*([^\s`]*)\s*$")
_INDENT = "    "
_CODE_LANGUAGES = frozenset({"", "python", "python3", "py"})


@dataclass(frozen=True)
class Block:
    path: str | None  # named in the info string or on a line before the block
    body: str
    language: str = ""  # the info string's first word, lowercased; "" for none


def code_blocks(text: str) -> list[Block]:
    """Every fenced block, and every indented block under a line naming a file, in order."""
    lines = text.split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is not None:
            block, i = _fenced(lines, i, opening)
            blocks.append(block)
            continue
        named = _named_before(lines, i)
        if named is not None and lines[i].startswith(_INDENT) and lines[i].strip():
            block, i = _indented(lines, i, named)
            blocks.append(block)
            continue
        i += 1
    return blocks


def is_code(block: Block) -> bool:
    """Whether the block holds code a file could be (not a diff, not a shell session)."""
    return block.language in _CODE_LANGUAGES or block.language.endswith(".py")


def _fenced(lines: list[str], i: int, opening: re.Match[str]) -> tuple[Block, int]:
    fence, first, second = opening.groups()
    path = _path_in(second) or _path_in(first)
    if path is None:
        path = _named_before(lines, i)
    indent = len(lines[i]) - len(lines[i].lstrip())
    j = i + 1
    while j < len(lines) and not closes(lines[j], lines[i][:indent], fence):
        j += 1
    body = [line[indent:] if line[:indent].isspace() else line for line in lines[i + 1 : j]]
    language = first.lower() if _path_in(first) is None or second else ""
    return Block(path, "\n".join(body) + "\n", language), j + 1


def _indented(lines: list[str], i: int, path: str) -> tuple[Block, int]:
    body: list[str] = []
    j = i
    while j < len(lines) and (lines[j].startswith(_INDENT) or not lines[j].strip()):
        body.append(lines[j][len(_INDENT) :] if lines[j].strip() else "")
        j += 1
    while body and not body[-1]:
        body.pop()
    return Block(path, "\n".join(body) + "\n"), j


def _named_before(lines: list[str], i: int) -> str | None:
    """The file a line just before line i names (one blank line may lie between)."""
    for back in (1, 2):
        if i - back < 0:
            return None
        line = lines[i - back]
        if line.strip():
            named = PATH_LINE.match(line)
            return _path_in(named.group(1)) if named else None
        if back == 2:
            return None
    return None


def _path_in(word: str) -> str | None:
    word = word.removeprefix("path=").removeprefix("file=")
    return word if "." in word and re.fullmatch(r"[\w./-]+", word) else None
