"""Find the diff in a model's reply: the bodies of its fenced diff blocks, or a bare diff.

    extract_diff   reply text -> the diff inside its fenced block(s), or None
    closes         whether a line closes a fence (the one rule, code blocks' too)

Fences follow CommonMark closely enough for model replies: ``` or ~~~ of any length, an
optional info string, a closing fence no deeper than the opening one and with no info string
(so a " ```" context line inside a diff, or a docstring's indented ```pycon example inside a
python block, does not end the block), and an unclosed fence running to the end.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_FENCE = re.compile(r"(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)")
_DIFF_LANGUAGES = frozenset({"diff", "patch", "udiff"})
_DIFF_START = re.compile(r"^(?:diff --git |--- )", re.MULTILINE)
_HUNK_START = re.compile(r"^@@", re.MULTILINE)


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
        while i < len(lines) and not closes(lines[i], indent, fence):
            body.append(lines[i].removeprefix(indent))
            i += 1
        i += 1
        yield opening["info"].strip(), "\n".join(body)


def closes(line: str, indent: str, fence: str) -> bool:
    """Whether `line` closes the fence `fence` opened at `indent`: fence characters only (at
    least as many), indented no deeper than the opening fence (" ```" is a context line in a
    diff; an indented ``` in a docstring is the docstring's)."""
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
