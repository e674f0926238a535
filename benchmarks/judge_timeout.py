"""The judge's per-test timeout, a pytest plugin (`-p judge_timeout`, JUDGE_TEST_TIMEOUT seconds).

A test that runs past it fails with JudgeTestTimeout (a BaseException, so that a test's own
`except Exception` cannot swallow it). A hang that no signal interrupts (inside C code) is
ended by faulthandler a few seconds later, which ends the whole run: a failing run. pytest-timeout
would do the same; this keeps the judge free of any package the task environment might lack.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from collections.abc import Generator
from types import FrameType
from typing import Any

import pytest

SECONDS = float(os.environ.get("JUDGE_TEST_TIMEOUT", "15"))
HARD_EXTRA_SECONDS = 5.0


class JudgeTestTimeout(BaseException):  # its name is what the judge counts in the output
    pass


def _expire(signum: int, frame: FrameType | None) -> None:
    raise JudgeTestTimeout(f"the test ran past {SECONDS:g} s (the judge's per-test timeout)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, SECONDS)
    faulthandler.dump_traceback_later(SECONDS + HARD_EXTRA_SECONDS, exit=True, file=sys.stderr)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)
