"""The reviewer's ask and its answer: the verified diff judged by a short rubric (review.j2),
and the reply read strictly.

The reviewer sees the failing tests (each id, where it failed and its evidence, the rule every
ask uses: failures.py) and the diff, within the room its window leaves (the diff's head and
tail when it is too long). Its reply must be exactly two lines, `VERDICT: <word>` with a word
of the rubric's and `REASON: <one line>`; anything else is no verdict, for the caller to
record: a reply in another form is never guessed at.
"""

from __future__ import annotations

import re

from fixbot.model import CHARS_PER_TOKEN, estimate_tokens
from fixbot.prompts.failures import failures, head_tail, noun
from fixbot.prompts.messages import Message
from fixbot.prompts.render import render
from fixbot.prompts.sources import fence
from fixbot.records import REVIEW_VERDICTS, CheckResult, ReviewVerdict, failing_tests

FAILING_SHARE = 0.25  # of the room, what the failing tests' evidence may take; the diff the rest
REASON_CHARS = 300
_LINE = re.compile(r"(VERDICT|REASON):[ \t]*(.*)", re.IGNORECASE)


def review_messages(baseline: CheckResult, diff: str, room_tokens: int) -> list[Message]:
    """The reviewer's one message: the rubric, the failing tests and the diff, within
    `room_tokens` (the diff gives way: its head and tail)."""
    ids = failing_tests(baseline)
    shown, _ = failures(baseline, ids, int(room_tokens * FAILING_SHARE))
    values = {
        "failing": shown,
        "failing_fence": fence(f"{f['id']}\n{f['assertion']}\n{f['message']}" for f in shown),
        "noun": noun(ids),
        "verdicts": list(REVIEW_VERDICTS),
    }
    bare = render("review.j2", diff="", diff_fence="```", cut=False, **values)
    chars = int((room_tokens - estimate_tokens(bare)) * CHARS_PER_TOKEN) - 60  # the heading
    shown_diff = head_tail(diff.rstrip("\n"), max(chars, 0))
    text = render(
        "review.j2",
        diff=shown_diff,
        diff_fence=fence([shown_diff]),
        cut=shown_diff != diff.rstrip("\n"),
        **values,
    )
    return [{"role": "user", "content": text}]


def read_verdict(reply: str) -> tuple[ReviewVerdict, str]:
    """(verdict, reason) of a reply that is exactly `VERDICT: <word>` and `REASON: <line>`
    (blank lines aside), the word one of REVIEW_VERDICTS; ("none", why not) for any other."""
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    if len(lines) != 2:
        return "none", f"the reviewer's reply is not two lines but {len(lines)}"
    verdict, reason = (_LINE.fullmatch(line) for line in lines)
    if verdict is None or reason is None:
        return "none", "the reviewer's reply is not a VERDICT line and a REASON line"
    if verdict[1].upper() != "VERDICT" or reason[1].upper() != "REASON":
        return "none", "the reviewer's reply is not a VERDICT line and a REASON line"
    word = next((v for v in REVIEW_VERDICTS if v == verdict[2].strip().lower()), None)
    if word is None:
        return "none", f"the reviewer's verdict is not one of {', '.join(REVIEW_VERDICTS)}"
    said = reason[2].strip()
    if not said:
        return "none", "the reviewer gave no reason"
    return word, said[:REASON_CHARS]
