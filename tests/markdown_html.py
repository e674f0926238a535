"""Markdown as GitHub would render it, for tests that untrusted text stays inert: CommonMark
with GFM tables (markdown-it-py); GitHub's own extras (`@mentions`, `#12` references, bare
links) are looked for in the text outside code, where GitHub would make them live."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from markdown_it import MarkdownIt

_RENDERER = MarkdownIt("commonmark").enable("table")
# What GitHub turns into a notification, a cross-reference or a link in plain text.
GITHUB_ACTIVE = re.compile(r"(?<![\w@])@[A-Za-z0-9-]+|(?<![\w&])#\d+|https?://\S+|www\.\S+")


@dataclass
class Rendered:
    tags: list[str] = field(default_factory=list)  # every element, in order
    links: list[str] = field(default_factory=list)  # href and src values
    text: list[str] = field(default_factory=list)  # text outside <code>
    code: list[str] = field(default_factory=list)  # text inside <code> (spans and blocks)

    def live(self) -> list[str]:
        """The mentions, issue references and bare links GitHub would make of the text."""
        return GITHUB_ACTIVE.findall(" ".join(self.text))


class _Split(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Rendered()
        self._code = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.page.tags.append(tag)
        self.page.links += [v or "" for k, v in attrs if k in ("href", "src")]
        self._code += tag == "code"

    def handle_endtag(self, tag: str) -> None:
        self._code -= tag == "code"

    def handle_data(self, data: str) -> None:
        (self.page.code if self._code else self.page.text).append(data)


def render(markdown: str) -> Rendered:
    split = _Split()
    split.feed(_RENDERER.render(markdown))
    return split.page
