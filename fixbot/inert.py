"""Untrusted text made inert in Markdown: the one spelling of code spans, fences and prose.

Test ids, messages, branch names, paths, model text and reasons come from the repository, the
model or the event; in report.md, the PR body, comments and the job summary they must render as
the text they are, never as a link, an image, HTML, a heading, a closed code block, an issue
reference or an `@mention` that notifies someone.

    code_span(text)       `text` on one line, in a backtick run longer than any inside it
    fence_marker(*texts)  a backtick fence that no run of backticks in the texts can close
    fenced(text, info)    text as a fenced block under that fence
    prose(text)           one line of text with Markdown's active characters escaped, and
                          mentions, issue references and bare links broken by a zero-width space

GitHub renders neither mentions nor links inside code, so spans and fences need nothing else;
a span inside a table cell still needs its `|` escaped (the table is split first).
"""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")
_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")
ZERO_WIDTH = "\u200b"
# Escaped with a backslash: what starts emphasis, code, links, images, tables, strikethrough.
_ESCAPED = re.compile(r"([\\`*_\[\]|~!])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# What makes a line a heading, a list item, a quote or a rule when it starts one.
_LINE_START = re.compile(r"\s*(?:[#+=-]|\d+[.)])")
# `@user`, `@org/team`, `#12`, `owner/repo#12`, `GH-12`, `http://`, `www.`: each notifies,
# cross-references or links; a zero-width space after the first character keeps the text.
_REFERENCES = re.compile(r"@(?=[A-Za-z0-9-])|#(?=\d)|(?<=\bGH)-(?=\d)|:(?=//)|(?<=\bww)(?=w\.)")


def one_line(text: str) -> str:
    """Line breaks (every kind Markdown or a browser honours) as spaces; NULs dropped."""
    return _BREAKS.sub(" ", text).replace("\x00", "")


def fence_marker(*texts: str) -> str:
    """A backtick fence (at least three) longer than any run of backticks in the texts."""
    longest = max((len(run) for text in texts for run in _BACKTICKS.findall(text)), default=2)
    return "`" * max(3, longest + 1)


def fenced(text: str, info: str = "") -> str:
    """`text` as a fenced code block; `info` (fixbot's own word, e.g. "diff") names its kind."""
    marker = fence_marker(text, info)
    return f"{marker}{info}\n{text.rstrip(chr(10))}\n{marker}"


def code_span(text: str) -> str:
    """`text` as one inline code span, whatever backticks it holds."""
    inner = one_line(text)
    if not inner:
        return "` `"
    longest = max((len(run) for run in _BACKTICKS.findall(inner)), default=0)
    ticks = "`" * (longest + 1)
    padded = inner.startswith("`") or inner.endswith("`")
    padded = padded or (inner.startswith(" ") and inner.endswith(" "))
    return f"{ticks} {inner} {ticks}" if padded else f"{ticks}{inner}{ticks}"


def prose(text: str) -> str:
    """One line of untrusted text to show as text among fixbot's own words."""
    escaped = _ESCAPED.sub(r"\\\1", one_line(text))
    escaped = re.sub(r"[&<>]", lambda m: _ENTITIES[m.group()], escaped)
    escaped = _REFERENCES.sub(lambda m: m.group() + ZERO_WIDTH, escaped)
    return ZERO_WIDTH + escaped if _LINE_START.match(escaped) else escaped
