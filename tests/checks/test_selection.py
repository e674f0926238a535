"""Failing first, as data: which checks and tests an attempt runs first, and by which node ids."""

from __future__ import annotations

import pytest

from fixbot.checks.selection import as_rerun, failing_first, narrowed, node_id, positionals
from fixbot.commands.spec import CheckSpec
from fixbot.records import CaseResult, CheckResult, CheckRun

FILES = {"tests/test_calc.py", "pkg/tests/test_io.py", "test_top.py"}


def exists(rel: str) -> bool:
    return rel in FILES


def case(outcome: str = "failed", **extra: str) -> CaseResult:
    return {"outcome": outcome, "message": "", "detail": "", **extra}  # type: ignore[return-value]


def run(
    name: str, kind: str, status: str, failing: list[str] | None = None, gate: bool = False
) -> CheckRun:
    record: dict[str, object] = {
        "name": name, "kind": kind, "gate": gate, "status": status, "exit_code": 0,
        "seconds": 0.1, "summary": "", "command": "",
    }  # fmt: skip
    if failing is not None:
        record["failing"] = failing
    return record  # type: ignore[return-value]


def baseline(tests: dict[str, CaseResult], runs: list[CheckRun]) -> CheckResult:
    return CheckResult(
        status="tests_failed", exit_code=1, seconds=1.0, tests=tests, findings=[], log_tail="",
        commands=[], checks=runs,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("tests.test_calc::test_mean", "tests/test_calc.py::test_mean"),
        ("tests.test_calc.TestMean::test_one[2-3]", "tests/test_calc.py::TestMean::test_one[2-3]"),
        ("pkg.tests.test_io::test_read", "pkg/tests/test_io.py::test_read"),
        ("test_top::test_x", "test_top.py::test_x"),
        ("elsewhere.test_gone::test_x", None),  # no such file in the snapshot
        ("tests.test_calc", None),  # a module that failed to collect: no test to name
        ("../etc.passwd::x", None),  # never a path out of the JUnit classname's words
        ("command: ruff check .", None),
    ],
)
def test_node_ids_come_from_the_junit_id_and_the_snapshot(test: str, expected: str | None) -> None:
    assert node_id(test, case(), exists) == expected


def test_a_recorded_node_id_wins() -> None:
    recorded = case(nodeid="tests/sub/test_calc.py::test_mean")
    assert node_id("tests.sub.test_calc::test_mean", recorded, exists) == recorded["nodeid"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ("python -m pytest", ["python", "-m", "pytest", "N"]),
        ("python -m pytest tests/unit -q", ["python", "-m", "pytest", "-q", "N"]),
        ("pytest -k 'add and not slow' tests", ["pytest", "-k", "add and not slow", "N"]),
        (
            "pytest -kadd --tb=short -p no:randomly src",
            ["pytest", "-kadd", "--tb=short", "-p", "no:randomly", "N"],
        ),
        ("uv run pytest -n 4 tests", ["uv", "run", "pytest", "-n", "4", "N"]),
        ("coverage run -m pytest tests", ["coverage", "run", "-m", "pytest", "N"]),
        ("python -X dev -m pytest -- tests", ["python", "-X", "dev", "-m", "pytest", "--", "N"]),
    ],
)
def test_narrowing_replaces_the_commands_own_paths(argv: str, expected: list[str]) -> None:
    import shlex

    assert narrowed(shlex.split(argv), ["N"]) == expected


def test_a_command_that_is_not_pytest_cannot_be_narrowed() -> None:
    assert positionals(["make", "test"]) is None
    with pytest.raises(ValueError):
        narrowed(["tox", "-e", "py"], ["N"])


LINT = CheckSpec("lint", "ruff check .", "ruff")
TYPES = CheckSpec("types", "mypy .", "mypy", gate=True)
TESTS = CheckSpec("tests", "python -m pytest", "pytest")
UNIT = CheckSpec("unit", "python -m unittest", "unittest")
DOCS = CheckSpec("docs", "mkdocs build", "command")


def test_the_failing_checks_run_first_and_a_failing_pytest_check_only_its_failing_tests() -> None:
    tests = {
        "tests.test_calc::test_mean": case(),
        "tests.test_calc::test_add": case("passed"),
        "tests.test_unit.T::test_u": case(),
        "check: lint": case(),
        "command: mkdocs build": case("passed"),
    }
    runs = [
        run("lint", "ruff", "failed"),
        run("types", "mypy", "passed", gate=True),
        run("tests", "pytest", "tests_failed", ["tests.test_calc::test_mean"]),
        run("unit", "unittest", "tests_failed", ["tests.test_unit.T::test_u"]),
        run("docs", "command", "passed"),
    ]
    selection = failing_first(baseline(tests, runs), [LINT, TYPES, TESTS, UNIT, DOCS], exists)
    assert selection == {
        "lint": (),  # whole
        "tests": ("tests/test_calc.py::test_mean",),  # narrowed
        "unit": (),  # a unittest run: whole
    }


def test_a_test_without_a_node_id_runs_its_check_whole() -> None:
    tests = {"tests.test_calc::test_mean": case(), "gone.test_x::test_y": case()}
    runs = [run("tests", "pytest", "tests_failed", list(tests))]
    assert failing_first(baseline(tests, runs), [TESTS], exists) == {"tests": ()}


def test_a_record_older_than_per_check_ones_selects_nothing() -> None:
    tests = {"tests.test_calc::test_mean": case()}
    old = baseline(tests, [])
    del old["checks"]
    assert failing_first(old, [TESTS], exists) == {}


def test_the_first_run_is_compared_over_what_its_reproduction_ran() -> None:
    first = baseline({"a::t": case(), "b::t": case("passed"), "c::t": case()}, [])
    rerun = baseline({"a::t": case()}, [])
    assert set(as_rerun(first, rerun)["tests"]) == {"a::t", "c::t"}  # c lost: not reproduced
