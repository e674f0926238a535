"""The failing tests as the model is shown them: each id, the assertion that failed, and its
message, within a share of the budget (ids are never dropped; the longest messages are
shortened first).

The assertion is the line pytest marks with `>` in the innermost frame of the traceback (the
test's own `assert ...`, or the line of the code that raised), with the place it is at: for a
small model it says more than the traceback around it. Object addresses (`<function f at
0x7f...>`) are written as the name alone: they are noise that differs from run to run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypedDict

from fixbot.model import CHARS_PER_TOKEN
from fixbot.prompts.sources import cost, one_line
from fixbot.records import CheckResult, failing_tests

MESSAGE_FLOOR = 32  # characters of each message kept, however many tests fail
ASSERTION_CHARS = 300

_ADDRESS = re.compile(
    r"<(?:function|bound method|built-in function) ([\w.]+)(?: of .*?)? at 0x[0-9a-fA-F]+>"
)
_MARKED = re.compile(r"^>\s+(?P<code>\S.*)$")
_PLACE = re.compile(r"^(?P<path>[\w./-]+\.py):(?P<line>\d+):")


class FailingTest(TypedDict):
    id: str
    message: str
    detail: str
    assertion: str  # "tests/test_x.py:9: assert f(1) == 2", "" when the traceback says none


class Failure(TypedDict):
    """A failing test as the task prompt lists it: its id, its assertion and its (maybe
    shortened) message."""

    id: str
    assertion: str
    message: str  # indented four spaces, under the id


def cleaned(text: str) -> str:
    """Test output with object addresses written as the name alone."""
    return _ADDRESS.sub(r"\1", text)


def assertion(detail: str) -> str:
    """The innermost line pytest marks with `>` in a traceback, with the place it is at."""
    lines = detail.splitlines()
    marked = [i for i, line in enumerate(lines) if _MARKED.match(line)]
    if not marked:
        return ""
    last = marked[-1]
    code = _MARKED.match(lines[last])
    shown = cleaned(code["code"].strip()) if code else ""
    place = next((m for line in lines[last + 1 :] if (m := _PLACE.match(line))), None)
    where = f"{one_line(place['path'])}:{place['line']}: " if place else ""
    text = where + shown
    return text if len(text) <= ASSERTION_CHARS else text[: ASSERTION_CHARS - 1] + "…"


def failing(check: CheckResult, limit: int = 30) -> list[FailingTest]:
    return [
        FailingTest(
            id=t,
            message=cleaned(check["tests"][t]["message"]),
            detail=cleaned(check["tests"][t]["detail"]),
            assertion=assertion(check["tests"][t]["detail"]),
        )
        for t in failing_tests(check)[:limit]
    ]


def failures(check: CheckResult, ids: Sequence[str], tokens: int) -> tuple[list[Failure], int]:
    """Every failing test with its assertion and message, the longest messages shortened to
    fit `tokens` (to MESSAGE_FLOOR characters at most, ids are never dropped); and the tokens
    spent. Only the first `ASSERTED` tests show their assertion."""
    messages = [cleaned(check["tests"][t]["message"].strip()) for t in ids]
    asserted = [
        assertion(check["tests"][t]["detail"]) if i < ASSERTED else "" for i, t in enumerate(ids)
    ]
    id_tokens = cost((t + "\n" + a for t, a in zip(ids, asserted, strict=True)), 1)
    room = int((tokens - id_tokens) * CHARS_PER_TOKEN) - 8 * len(ids)  # indents and newlines
    cap = _water_level([len(m) for m in messages], room)
    while True:
        shown = [
            Failure(id=one_line(t), assertion=a, message=_indent(_shorten(m, cap)))
            for t, a, m in zip(ids, asserted, messages, strict=True)
        ]
        spent = cost((f"{f['id']}\n{f['assertion']}\n{f['message']}\n" for f in shown), 0)
        if spent <= tokens or cap <= MESSAGE_FLOOR:  # multi-line messages indent more
            return shown, spent
        cap = max(MESSAGE_FLOOR, cap * 9 // 10)


ASSERTED = 10  # the first failing tests whose assertion line is shown


def _water_level(lengths: list[int], room: int) -> int:
    """The largest cap for which the capped lengths sum to at most room (at least MESSAGE_FLOOR)."""
    left, count = room, len(lengths)
    for done, length in enumerate(sorted(lengths)):
        share = left // (count - done)
        if length > share:
            return max(share, MESSAGE_FLOOR)
        left -= length
    return max(lengths, default=0)


def _shorten(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: max(cap - 1, 0)].rstrip() + "…"


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines())
