"""Reproduction before spend: flaky and environment failures are recognised without a model."""

from __future__ import annotations

import pytest

from fixbot.checks import classify, environment_cause
from fixbot.records import CaseResult, CheckResult

FILES = ["calc.py", "pkg/__init__.py", "pkg/util.py", "tests/test_calc.py"]


def run(**outcomes: tuple[str, str]) -> CheckResult:
    tests = {
        name: CaseResult(outcome=outcome, message=message, detail="")  # type: ignore[typeddict-item]
        for name, (outcome, message) in outcomes.items()
    }
    return CheckResult(
        status="tests_failed",
        exit_code=1,
        seconds=0.1,
        tests=tests,
        findings=[],
        log_tail="",
        commands=[],
    )


BUG = ("failed", "assert 1.5 == 2.0")


def test_a_failure_that_reproduces_is_code() -> None:
    found = classify([run(a=BUG, b=("passed", "")), run(a=BUG, b=("passed", ""))], FILES)
    assert found.kind == "code"


def test_a_test_that_passes_in_one_run_is_flaky() -> None:
    found = classify([run(a=BUG, b=BUG), run(a=BUG, b=("passed", ""))], FILES)
    assert found.kind == "flaky"
    assert found.flaky_tests == ("b",)
    assert "flaky" in found.reason and "b" in found.reason


def test_a_single_run_is_never_flaky() -> None:
    assert classify([run(a=BUG)], FILES).kind == "code"


@pytest.mark.parametrize(
    ("message", "cause"),
    [
        ("ModuleNotFoundError: No module named 'requests'", "module 'requests' is not installed"),
        ("ModuleNotFoundError: No module named 'yaml.constructor'", "module 'yaml'"),
        ("socket.gaierror: [Errno -3] Temporary failure in name resolution", "network"),
        ("OSError: [Errno 101] Network is unreachable", "network"),
        ("ConnectionRefusedError: [Errno 111] Connection refused", "service"),
        ("psycopg2.OperationalError: could not connect to server", "database"),
        ("KeyError: 'DATABASE_URL'", "environment variable"),
    ],
)
def test_environment_causes(message: str, cause: str) -> None:
    assert cause in environment_cause(message, FILES)


@pytest.mark.parametrize(
    "message",
    [
        "assert 1.5 == 2.0",
        "ModuleNotFoundError: No module named 'pkg.missing'",  # pkg is the repo's own code
        "ModuleNotFoundError: No module named 'calc'",
        "KeyError: 'name'",  # an ordinary dict lookup, not an environment variable
        "ZeroDivisionError: division by zero",
    ],
)
def test_code_causes_are_not_environment(message: str) -> None:
    assert environment_cause(message, FILES) == ""


def test_environment_only_when_every_failure_is() -> None:
    missing = ("error", "ModuleNotFoundError: No module named 'requests'")
    assert classify([run(a=missing, b=missing)] * 2, FILES).kind == "environment"
    assert classify([run(a=missing, b=BUG)] * 2, FILES).kind == "code"
