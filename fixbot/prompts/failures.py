"""The failing tests as the model is shown them: each id, the assertion that failed, and its
evidence, within a share of the budget (ids are never dropped; the longest messages are
shortened first, their heads and tails kept).

The assertion is the line pytest marks with `>` in the innermost frame of the traceback (the
test's own `assert ...`, or the line of the code that raised), with the place it is at: for a
small model it says more than the traceback around it. The evidence (`evidence`, the one rule
every ask and every feedback uses) is the test's message (pytest's: the error, the values it
compared), or for a check that is not a test run its message and its findings or output tail;
at most EVIDENCE_LINES lines, head and tail kept. Object addresses (`<function f at 0x7f...>`)
are written as the name alone: they are noise that differs from run to run. A test that fails
exactly as one listed before it (the same marked line, the same evidence) says so in one line.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import TypedDict

from fixbot.model import CHARS_PER_TOKEN
from fixbot.prompts.sources import cost, names_a_test, one_line
from fixbot.records import CaseResult, CheckResult, failing_tests

MESSAGE_FLOOR = 32  # characters of each message kept, however many tests fail
ASSERTION_CHARS = 300
EVIDENCE_LINES = 10  # of a message (and a check's findings or output), head and tail
EVIDENCE_CHARS = 1_500  # and of its characters

_ADDRESS = re.compile(
    r"<(?:function|bound method|built-in function) ([\w.]+)(?: of .*?)? at 0x[0-9a-fA-F]+>"
)
_MARKED = re.compile(r"^>\s+(?P<code>\S.*)$")
_PLACE = re.compile(r"^(?P<path>[\w./-]+\.py):(?P<line>\d+):")
# A frame of Python's own traceback in the sandbox's workspace (where the repository is).
_FRAME = re.compile(r'^\s*File "/workspace/(?P<path>[^"\n]+\.py)", line (?P<line>\d+)(?:, in |$)')


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
    """The innermost line pytest marks with `>` in a traceback, with the place it is at; in
    Python's own traceback (unittest's, a plain script's), the innermost frame of the
    repository's code and its line."""
    lines = detail.splitlines()
    marked = [i for i, line in enumerate(lines) if _MARKED.match(line)]
    if not marked:
        return _innermost_frame(lines)
    last = marked[-1]
    code = _MARKED.match(lines[last])
    shown = cleaned(code["code"].strip()) if code else ""
    place = next((m for line in lines[last + 1 :] if (m := _PLACE.match(line))), None)
    where = f"{one_line(place['path'])}:{place['line']}: " if place else ""
    return _capped(where + shown)


def _innermost_frame(lines: list[str]) -> str:
    """`path:line: code` of the last frame in the workspace that shows its line of code."""
    found = ""
    for frame, code in itertools.pairwise(lines):
        place = _FRAME.match(frame)
        if place and code.startswith("    ") and not _FRAME.match(code):
            found = f"{one_line(place['path'])}:{place['line']}: {cleaned(code.strip())}"
    return _capped(found)


def _capped(text: str) -> str:
    return text if len(text) <= ASSERTION_CHARS else text[: ASSERTION_CHARS - 1] + "…"


def evidence(test_id: str, case: CaseResult) -> str:
    """What a failure says, as every ask shows it: a test's message (the error, the values
    pytest compared); a check that is not a test run says it in its findings or output too
    (its message is "exit code 1", "ruff: 2 findings: ..."). At most EVIDENCE_LINES lines
    and EVIDENCE_CHARS characters, head and tail kept: a 10 MB log costs no more."""
    text = case["message"].strip("\n")
    output = case["detail"].strip("\n")
    if not names_a_test(test_id) and output.strip():
        text = f"{text}\n{output}"
    return head_tail(cleaned(head_tail_lines(text.rstrip(), EVIDENCE_LINES)), EVIDENCE_CHARS)


def noun(ids: Sequence[str]) -> str:
    """What the failing entries are, for a sentence: "test", or "check" when none is a test
    (ruff, mypy, a command: checks that are not test runs)."""
    return "test" if any(names_a_test(t) for t in ids) else "check"


def failing(check: CheckResult, limit: int = 30) -> list[FailingTest]:
    """The failing tests for the feedback: each one's evidence as its message, and its
    traceback (unless the evidence already holds it whole: a check's findings or output)."""
    shown: list[FailingTest] = []
    for t in failing_tests(check)[:limit]:
        case = check["tests"][t]
        message = evidence(t, case)
        detail = cleaned(case["detail"])
        shown.append(
            FailingTest(
                id=t,
                message=message,
                detail="" if detail.strip() and detail.strip() in message else detail,
                assertion=assertion(case["detail"]),
            )
        )
    return shown


def same_failures(check: CheckResult, ids: Sequence[str]) -> dict[str, str]:
    """The failing tests that fail exactly as an earlier one of `ids` does (the same line
    marked, the same evidence: a parametrized test's cases that all raise one error), each
    mapped to the first that fails so. A test with no marked line is never grouped."""
    first: dict[tuple[str, str], str] = {}
    same: dict[str, str] = {}
    for t in ids:
        case = check["tests"][t]
        marked = assertion(case["detail"])
        if not marked:
            continue
        key = (marked, evidence(t, case).strip())
        if key in first:
            same[t] = first[key]
        else:
            first[key] = t
    return same


def failures(check: CheckResult, ids: Sequence[str], tokens: int) -> tuple[list[Failure], int]:
    """Every failing test with its assertion and message, the longest messages shortened to
    fit `tokens` (to MESSAGE_FLOOR characters at most, ids are never dropped); and the tokens
    spent. Only the first `ASSERTED` tests show their assertion; a test that fails exactly
    as one listed before it (`same_failures`) says so instead of repeating both."""
    same = same_failures(check, ids)
    messages = [
        f"fails as {one_line(same[t])} does"
        if t in same
        else evidence(t, check["tests"][t]).strip()
        for t in ids
    ]
    asserted = [
        assertion(check["tests"][t]["detail"]) if i < ASSERTED and t not in same else ""
        for i, t in enumerate(ids)
    ]
    id_tokens = cost((t + "\n" + a for t, a in zip(ids, asserted, strict=True)), 1)
    room = int((tokens - id_tokens) * CHARS_PER_TOKEN) - 8 * len(ids)  # indents and newlines
    cap = _water_level([len(m) for m in messages], room)
    while True:
        shown = [
            Failure(id=one_line(t), assertion=a, message=_indent(head_tail(m, cap)))
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


HEAD_ONLY_CHARS = 80  # a text cut shorter than this keeps its head alone


def head_tail(text: str, chars: int) -> str:
    """The text, or its head and tail within about `chars` with the middle elided (whole
    lines where they fit); cut shorter than HEAD_ONLY_CHARS, its head alone."""
    if len(text) <= chars:
        return text
    if chars < HEAD_ONLY_CHARS:
        return text[: max(chars - 1, 0)].rstrip() + "…"
    half = (chars - 32) // 2  # the mark and its newlines
    head = text[:half].rsplit("\n", 1)[0] if "\n" in text[:half] else text[:half]
    tail = text[-half:].split("\n", 1)[-1] if "\n" in text[-half:] else text[-half:]
    elided = text.count("\n") - head.count("\n") - tail.count("\n")
    what = f"{elided} lines" if elided > 1 else f"{len(text) - len(head) - len(tail)} characters"
    return f"{head}\n[... {what} elided ...]\n{tail}"


def head_tail_lines(text: str, lines: int) -> str:
    """The text, or its first and last lines, `lines` in all, with the middle elided."""
    split = text.split("\n")
    if len(split) <= lines:
        return text
    head, tail = lines // 2, lines - lines // 2
    mark = f"[... {len(split) - lines} lines elided ...]"
    return "\n".join([*split[:head], mark, *split[-tail:]])


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines())
