"""Stop early when stuck (pure): repeated candidates, stagnating failures, a model giving up.

One strike earns a plain warning in the next feedback (what was repeated and why it cannot
work); a second strike in a row escalates. A model that says it cannot fix the failure
escalates at once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from fixbot.records import Attempt, failing_tests

STRIKES_TO_ESCALATE = 2  # one stuck attempt earns a warning; a second one in a row escalates


@dataclass(frozen=True)
class Strike:
    """Why an attempt counts as stuck; `final` when it ends the run at once (the model gave up)."""

    reason: str
    final: bool = False


_GIVES_UP = re.compile(
    r"\b(?:I\s+(?:cannot|can't|can not|am unable to|was unable to)\s+"
    r"(?:fix|solve|resolve|find a fix)"
    r"|(?:this|it)\s+(?:cannot|can't)\s+be\s+fixed"
    r"|unable to (?:fix|resolve) (?:this|the))\b",
    re.IGNORECASE,
)


def normalised(attempt: Attempt) -> str:
    """The candidate's substance: the lines its diff adds (or, for a pure deletion, removes;
    headers, line numbers and context left out), else its reply; whitespace collapsed.
    Two fixes of the same broken line differ in what they add, not in what they remove."""
    if attempt["diff"]:
        lines = attempt["diff"].splitlines()
        added = [line for line in lines if line[:1] == "+" and line[:3] != "+++"]
        removed = [line for line in lines if line[:1] == "-" and line[:3] != "---"]
        text = "\n".join(added or removed)
    else:
        text = attempt["reply"]
    return " ".join(text.split())


def similarity(a: Attempt, b: Attempt) -> float:
    return float(fuzz.ratio(normalised(a), normalised(b))) / 100.0


def failure_signature(attempt: Attempt) -> tuple[tuple[str, str], ...] | None:
    check = attempt["check"]
    if check is None:
        return None
    return tuple((t, check["tests"][t]["message"]) for t in failing_tests(check))


def gives_up(attempt: Attempt) -> bool:
    return bool(_GIVES_UP.search(attempt["reply"])) and not attempt["diff"]


def strike(attempts: Sequence[Attempt], threshold: float, stagnation: int) -> Strike | None:
    """Why the newest attempt counts as stuck, or None when it made a new try."""
    last = attempts[-1]
    if gives_up(last):
        return Strike("the model said it cannot fix this", final=True)
    if len(attempts) >= 2:
        score = similarity(attempts[-2], last)
        if score >= threshold:
            return Strike(
                f"attempt {last['number']} repeats attempt {attempts[-2]['number']} "
                f"({score:.0%} similar)"
            )
    if stagnation >= 2 and len(attempts) >= stagnation:
        recent = [failure_signature(a) for a in attempts[-stagnation:]]
        if recent[0] is not None and all(sig == recent[0] for sig in recent):
            return Strike(
                f"the same tests failed with the same errors for the last {stagnation} attempts"
            )
    return None
