"""Vary, then stop early, when stuck (pure): repeated candidates, replies that change
nothing, stagnating failures, a model giving up.

Attempt 1 asks at the first of `sampling.temperatures` (0: deterministic), a retry at the
second. A strike first varies the next attempt: a plain warning in its feedback (what was
repeated and why it cannot work), the next temperature, and another prompt shape (the task
asked afresh with the feedback under it, without the reply it would repeat). At temperature 0
a repeat is certain; a new temperature and prompt is what can change it. Only when the varied
attempts repeat too (a strike at the last temperature, after a strike before it) does the run
escalate as stuck. A model that says it cannot fix the failure
escalates at once. `varied` is the one rule for all of this; `asked_at` says what a variation
asks at.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from fixbot.edits import NO_CHANGE
from fixbot.records import Attempt, failing_tests

STRIKES_TO_ESCALATE = 2  # the varied attempts repeat too: two strikes in a row at the last step


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


def changes_nothing(attempt: Attempt) -> bool:
    return NO_CHANGE in attempt["problems"]


def strike(attempts: Sequence[Attempt], threshold: float, stagnation: int) -> Strike | None:
    """Why the newest attempt counts as stuck, or None when it made a new try."""
    last = attempts[-1]
    if gives_up(last):
        return Strike("the model said it cannot fix this", final=True)
    if changes_nothing(last):
        return Strike(f"attempt {last['number']} sent the code back unchanged")
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


@dataclass(frozen=True)
class Stuck:
    """Where the loop stands after an attempt: consecutive strikes, and the step of
    `sampling.temperatures` the next attempt asks at."""

    strikes: int
    variation: int


def varied(found: Strike | None, before: Stuck, temperatures: int) -> Stuck:
    """After an attempt: no strike resets the strikes, and a retry asks at least at the second
    temperature (a new sample, not the same greedy answer again); a strike moves the next
    attempt one temperature further while there is one (a warning, not a step towards
    escalating); at the last one, strikes add up, and STRIKES_TO_ESCALATE in a row escalate.
    A model that gives up escalates at once."""
    last = temperatures - 1
    if found is None:
        return Stuck(0, min(max(before.variation, 1), last))
    if found.final:
        return Stuck(STRIKES_TO_ESCALATE, before.variation)
    if before.variation < last:
        return Stuck(1, before.variation + 1)
    return Stuck(before.strikes + 1, before.variation)


@dataclass(frozen=True)
class AskedAt:
    temperature: float
    history: bool  # the last reply stays in the conversation; False: the task asked afresh


def asked_at(state: Stuck, temperatures: Sequence[float]) -> AskedAt:
    """What the next attempt asks at: its step's temperature; after a strike, the task asked
    afresh (without the reply it would repeat), else the conversation goes on."""
    step = min(state.variation, len(temperatures) - 1)
    return AskedAt(temperatures[step], history=state.strikes == 0)
