"""The second judgement: the tests that decide `fixed`, judged again each in a fresh interpreter
that shares nothing with the first judgement's process but its exit (modes.py: how each test is
run, from the protected test file; runner.py: the staged runner, package data; judge.py: the
runs, the nonce, the verdicts, the disagreements)."""

from __future__ import annotations

from fixbot.checks.rejudge.decide import once_passed, rejudged
from fixbot.checks.rejudge.judge import (
    GRACE,
    JUDGE_MOUNT,
    Judgement,
    interpreter_of,
    judge_all,
)
from fixbot.checks.rejudge.modes import plans

__all__ = [
    "GRACE",
    "JUDGE_MOUNT",
    "Judgement",
    "interpreter_of",
    "judge_all",
    "once_passed",
    "plans",
    "rejudged",
]
