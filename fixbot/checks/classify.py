"""What kind of failure the baseline shows, decided before any model spend (pure).

code         the failing tests fail the same way every run: worth a fix attempt
flaky        a test failed in one baseline run and passed in another: no fix attempted
environment  every failure is caused by the environment (a module that is not in the
             repository, the network, a missing variable or service): no fix attempted
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from fixbot.records import CheckResult, failing_tests

Kind = Literal["code", "flaky", "environment"]

_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
_ENVIRONMENT = [
    (re.compile(p), why)
    for p, why in (
        (
            r"(?:socket\.gaierror|Name or service not known|Temporary failure in name resolution"
            r"|Network is unreachable|nodename nor servname)",
            "the network is not reachable",
        ),
        (r"(?:ConnectionRefusedError|Connection refused)", "a service is not running"),
        (
            r"(?:psycopg2?\.OperationalError|redis\.exceptions\.ConnectionError"
            r"|pymongo\.errors\.ServerSelectionTimeoutError|could not connect to server)",
            "a database or service is not reachable",
        ),
        (r"KeyError: '[A-Z][A-Z0-9_]{2,}'", "an environment variable is not set"),
        (r"command not found", "a program is not installed"),
    )
]


@dataclass(frozen=True)
class Classification:
    kind: Kind
    reason: str
    flaky_tests: tuple[str, ...] = ()


def classify(runs: Sequence[CheckResult], repo_files: Sequence[str]) -> Classification:
    """Classify the baseline from its repeated runs (at least one)."""
    sets = [set(failing_tests(run)) for run in runs]
    always = set(sets[0]).intersection(*sets[1:])
    flaky = sorted(set().union(*sets) - always)
    if flaky:
        return Classification(
            "flaky",
            f"flaky: {len(flaky)} test(s) failed in some baseline runs and passed in others "
            f"({', '.join(flaky[:5])}); fixbot does not fix flaky tests",
            tuple(flaky),
        )
    first = runs[0]
    causes = [
        environment_cause(
            first["tests"][t]["message"] + "\n" + first["tests"][t]["detail"], repo_files
        )
        for t in sorted(sets[0])
    ]
    if causes and all(causes):
        return Classification(
            "environment",
            f"environment: every failure comes from the environment, not the code "
            f"({'; '.join(sorted({c for c in causes if c}))})",
        )
    return Classification("code", "the failures reproduce")


def environment_cause(text: str, repo_files: Sequence[str]) -> str:
    """Why this failure text points at the environment, or "" when it may be the code."""
    for match in _MISSING_MODULE.finditer(text):
        top = match.group(1).split(".")[0]
        if not _in_repository(top, repo_files):
            return f"module {top!r} is not installed"
    for pattern, why in _ENVIRONMENT:
        if pattern.search(text):
            return why
    return ""


def _in_repository(module: str, repo_files: Sequence[str]) -> bool:
    """A module of that name is somewhere in the repository (then a missing import is code)."""
    for path in repo_files:
        parts = path.split("/")
        if module in parts[:-1] or parts[-1] in (f"{module}.py", f"{module}.pyi"):
            return True
    return False
