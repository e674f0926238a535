"""fixbot.inert: untrusted text renders as the text it is, through a real CommonMark renderer."""

from __future__ import annotations

import pytest

from fixbot.inert import ZERO_WIDTH, code_span, fence_marker, fenced, prose
from tests.markdown_html import render

HOSTILE = [
    "tests/test_x.py::test_a[`x`]",
    "``` closes a fence",
    "`@someone` [link](http://x) <img src=x> ![i](http://y)",
    "a|b|c",
    " leading and trailing ",
    "`",
    "line one\nline two\r\n# heading",
    "ping @someone and @org/team about #12 at http://evil.example or www.evil.example",
    "<!-- fixbot:comment --> <details><summary>x</summary>",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_code_span_shows_exactly_the_text_on_one_line(text: str) -> None:
    page = render(f"before {code_span(text)} after")
    assert page.code == [" ".join(text.splitlines())], page
    assert page.links == [] and set(page.tags) == {"p", "code"}
    assert page.live() == []


@pytest.mark.parametrize("text", HOSTILE)
def test_a_code_span_in_a_table_cell_keeps_its_row(text: str) -> None:
    cell = code_span(text).replace("|", "\\|")
    page = render(f"| a | b |\n|---|---|\n| {cell} | after |\n")
    assert page.code == [" ".join(text.splitlines())]
    assert page.tags.count("td") == 2 and "after" in page.text


@pytest.mark.parametrize("text", HOSTILE)
def test_a_fence_holds_the_text_whatever_backticks_it_has(text: str) -> None:
    page = render(f"{fenced(text, 'diff')}\n\nafter")
    assert page.code == [text.replace("\r\n", "\n").rstrip("\n") + "\n"]
    assert page.links == [] and page.tags[:2] == ["pre", "code"] and "after" in page.text


@pytest.mark.parametrize("text", HOSTILE)
def test_prose_is_text_with_no_link_image_html_mention_or_reference(text: str) -> None:
    page = render(f"**Why:** {prose(text)}")
    assert page.links == [] and set(page.tags) <= {"p", "strong"}, page.tags
    assert page.live() == []
    shown = "".join(page.text).replace(ZERO_WIDTH, "")
    assert shown.split() == ("Why: " + text).split()


def test_the_fence_is_longer_than_any_run_inside() -> None:
    assert fence_marker() == "```"
    assert fence_marker("a ``` b", "````") == "`````"
    assert fenced("x\n").endswith("\n```") and fenced("```").startswith("````\n")


def test_mentions_and_references_keep_their_visible_text() -> None:
    text = prose("@someone #12 http://x www.y GH-3 user@example.org")
    assert text.replace(ZERO_WIDTH, "") == "@someone #12 http://x www.y GH-3 user@example.org"
    assert "@someone" not in text and "#12" not in text and "http://" not in text
