"""The pass definition, table-tested: baseline and attempt results in, named problems out."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from fixbot import records
from fixbot.checks import problems, require_completed
from fixbot.checks.verdict import TAMPERED, new_findings
from fixbot.errors import EnvironmentProblem
from fixbot.records import CheckResult, Finding


def outcome(kind: str) -> records.CaseResult:  # via the module: pytest would collect Test*
    message = "" if kind == "passed" else f"it {kind}"
    return {"outcome": kind, "message": message, "detail": ""}  # type: ignore[typeddict-item]


def checked(
    tests: dict[str, str],
    findings: Sequence[Finding] = (),
    status: str = "",
) -> CheckResult:
    failing = any(kind in ("failed", "error") for kind in tests.values())
    return CheckResult(
        status=status or ("tests_failed" if failing else "passed"),
        exit_code=0 if all(kind == "passed" for kind in tests.values()) else 1,
        seconds=1.0,
        tests={test: outcome(kind) for test, kind in tests.items()},
        findings=list(findings),
        log_tail="",
        commands=["python -m pytest"],
    )


def ruff(
    path: str, line: int, code: str = "F401", message: str = "`os` imported but unused"
) -> Finding:
    return Finding(tool="ruff", path=path, line=line, code=code, message=message)


def mypy(path: str, line: int, message: str = "Incompatible return value type") -> Finding:
    return Finding(tool="mypy", path=path, line=line, code="return-value", message=message)


BASE = {"t::test_broken": "failed", "t::test_ok": "passed"}

CASES: list[tuple[str, CheckResult, CheckResult, list[str]]] = [
    (
        "all fixed",
        checked(BASE),
        checked({"t::test_broken": "passed", "t::test_ok": "passed"}),
        [],
    ),
    (
        "an error fixed",
        checked({"t::test_setup": "error", "t::test_ok": "passed"}),
        checked({"t::test_setup": "passed", "t::test_ok": "passed"}),
        [],
    ),
    (
        "still failing",
        checked(BASE),
        checked(BASE),
        ["t::test_broken still failed"],
    ),
    (
        "failure turned into an error",
        checked(BASE),
        checked({"t::test_broken": "error", "t::test_ok": "passed"}),
        ["t::test_broken still error"],
    ),
    (
        "now skipped",
        checked(BASE),
        checked({"t::test_broken": "skipped", "t::test_ok": "passed"}),
        ["t::test_broken still skipped"],
    ),
    (
        "now xfailed",
        checked(BASE),
        checked({"t::test_broken": "xfailed", "t::test_ok": "passed"}),
        ["t::test_broken still xfailed"],
    ),
    (
        "the failing test vanished",
        checked(BASE),
        checked({"t::test_ok": "passed"}),
        ["t::test_broken still missing"],
    ),
    (
        "a passing test now fails",
        checked(BASE),
        checked({"t::test_broken": "passed", "t::test_ok": "failed"}),
        ["t::test_ok was passed before and now failed"],
    ),
    (
        "a passing test now errors",
        checked(BASE),
        checked({"t::test_broken": "passed", "t::test_ok": "error"}),
        ["t::test_ok was passed before and now error"],
    ),
    (
        "a skipped test now fails",
        checked({**BASE, "t::test_later": "skipped"}),
        checked({"t::test_broken": "passed", "t::test_ok": "passed", "t::test_later": "failed"}),
        ["t::test_later was skipped before and now failed"],
    ),
    (
        "a passing test disappeared",
        checked(BASE),
        checked({"t::test_broken": "passed"}),
        ["t::test_ok is no longer collected"],
    ),
    (
        "a skipped test disappeared",
        checked({**BASE, "t::test_later": "skipped"}),
        checked({"t::test_broken": "passed", "t::test_ok": "passed"}),
        ["t::test_later is no longer collected"],
    ),
    (
        "a new test that fails",
        checked(BASE),
        checked({"t::test_broken": "passed", "t::test_ok": "passed", "t::test_new": "failed"}),
        ["t::test_new was not collected before and now failed"],
    ),
    (
        "a new test that passes",
        checked(BASE),
        checked({"t::test_broken": "passed", "t::test_ok": "passed", "t::test_new": "passed"}),
        [],
    ),
    (
        "a pre-existing ruff finding moved lines",
        checked(BASE, [ruff("calc.py", 1)]),
        checked({"t::test_broken": "passed", "t::test_ok": "passed"}, [ruff("calc.py", 7)]),
        [],
    ),
    (
        "a duplicate of a pre-existing finding",
        checked(BASE, [ruff("calc.py", 1)]),
        checked(
            {"t::test_broken": "passed", "t::test_ok": "passed"},
            [ruff("calc.py", 1), ruff("calc.py", 2)],
        ),
        ["new ruff error calc.py:"],
    ),
    (
        "the same code in another file",
        checked(BASE, [ruff("calc.py", 1)]),
        checked(
            {"t::test_broken": "passed", "t::test_ok": "passed"},
            [ruff("calc.py", 1), ruff("util.py", 1)],
        ),
        ["new ruff error util.py:1"],
    ),
    (
        "a new mypy error",
        checked(BASE),
        checked({"t::test_broken": "passed", "t::test_ok": "passed"}, [mypy("calc.py", 4)]),
        ["new mypy error calc.py:4: Incompatible return value type [return-value]"],
    ),
    (
        "a finding fixed along the way",
        checked(BASE, [ruff("calc.py", 1), mypy("calc.py", 4)]),
        checked({"t::test_broken": "passed", "t::test_ok": "passed"}, [mypy("calc.py", 9)]),
        [],
    ),
    (
        "several problems at once",
        checked({**BASE, "t::test_gone": "passed"}),
        checked({"t::test_broken": "skipped", "t::test_ok": "failed"}, [mypy("calc.py", 4)]),
        [
            "t::test_broken still skipped",
            "t::test_gone is no longer collected",
            "t::test_ok was passed before and now failed",
            "new mypy error calc.py:4",
        ],
    ),
]


@pytest.mark.parametrize(
    ("baseline", "attempt", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_problems(baseline: CheckResult, attempt: CheckResult, expected: list[str]) -> None:
    found = problems(baseline, attempt)
    assert len(found) == len(expected), found
    for problem, fragment in zip(found, expected, strict=True):
        assert fragment in problem, (fragment, found)


@pytest.mark.parametrize(
    "status",
    [
        "timeout",
        "no_report",
        "infra_error",
        "memory_exceeded",
        "output_exceeded",
        "no_tests_collected",
    ],
)
def test_a_run_that_did_not_complete_is_never_a_pass(status: str) -> None:
    attempt = checked({"t::test_broken": "passed", "t::test_ok": "passed"}, status=status)
    found = problems(checked(BASE), attempt)
    assert found == [f"the test run did not complete: {status}"]


def test_a_failing_test_message_is_part_of_the_problem() -> None:
    attempt = checked({"t::test_broken": "passed", "t::test_ok": "failed"})
    (problem,) = problems(checked(BASE), attempt)
    assert problem.endswith(": it failed")


def test_new_findings_counts_each_copy_beyond_the_baseline() -> None:
    baseline = checked(BASE, [ruff("a.py", 1), ruff("a.py", 5)])
    attempt = checked(BASE, [ruff("a.py", 2), ruff("a.py", 3), ruff("a.py", 4)])
    assert new_findings(baseline, attempt) == [ruff("a.py", 4)]


def test_problems_does_not_change_its_inputs() -> None:
    baseline = checked(BASE, [ruff("a.py", 1)])
    attempt = checked({"t::test_ok": "failed"}, [ruff("a.py", 1), mypy("b.py", 2)])
    before = (repr(baseline), repr(attempt))
    problems(baseline, attempt)
    assert (repr(baseline), repr(attempt)) == before


def test_a_tampered_run_is_never_a_pass_and_names_why_in_one_line() -> None:
    """Whatever its tests say; the model is told only that, the reasons stay in the evidence."""
    attempt = checked({"t::test_broken": "passed", "t::test_ok": "passed"}, status="tampered")
    attempt["tampering"] = ["fixbot's canary must_fail was reported passed (it must be failed)"]
    found = problems(checked(BASE), attempt)
    assert found == [TAMPERED]
    assert "canary" not in found[0]
    assert TAMPERED == "the run's report was inconsistent with pytest's own; the attempt is refused"


def test_a_timeout_names_the_test_that_was_running() -> None:
    attempt = checked({}, status="timeout")
    attempt["running"] = "tests/test_x.py::test_spins"
    assert problems(checked(BASE), attempt) == [
        "the test run did not complete: timeout while tests/test_x.py::test_spins was running"
    ]


def baseline_of(status: str, **extra: object) -> CheckResult:
    result = checked({}, status=status)
    result.update(extra)  # type: ignore[typeddict-item]
    return result


def test_a_baseline_the_repository_tampers_with_is_the_environments_problem() -> None:
    reasons = ["pytest's own tally says 1 failed where the per-test results have 0"]
    with pytest.raises(EnvironmentProblem) as raised:
        require_completed(baseline_of("tampered", tampering=reasons))
    assert "inconsistent with pytest's own" in str(raised.value)
    assert "untouched commit" in str(raised.value)
    assert reasons[0] in str(raised.value)


def test_a_baseline_that_timed_out_names_the_running_test() -> None:
    result = baseline_of("timeout", running="tests/test_x.py::test_spins")
    with pytest.raises(EnvironmentProblem, match=r"timeout while tests/test_x.py::test_spins"):
        require_completed(result)


def test_a_baseline_with_a_hang_that_became_a_failure_completes() -> None:
    """A hang stopped by the per-test timeout is a failing test: the model is asked."""
    result = checked({"t::test_spins": "failed", "t::test_ok": "passed"})
    result["tests"]["t::test_spins"]["message"] = "timed out after 60 s (in call)"
    assert require_completed(result) is result


def test_an_older_attempts_slimmed_result_keeps_why_it_was_refused() -> None:
    full = checked({"t::test_broken": "failed", "t::test_ok": "passed"}, status="tampered")
    full["tests"]["t::test_broken"]["nodeid"] = "t.py::test_broken"
    full["tests"]["t::test_broken"]["detail"] = "a long traceback"
    full.update(
        tampering=["a report line was not written by fixbot's plugin"],
        running="t.py::test_spins",
        hung=["t.py::test_hangs"],
        canaries={"integrity": "passed", "must_pass": "passed", "must_fail": "failed"},
    )
    slimmed = records.slim(full, ".fixbot/logs/t/attempt-1.json")
    assert slimmed["tests"] == {
        "t::test_broken": {
            "outcome": "failed",
            "message": "it failed",
            "detail": "",
            "nodeid": "t.py::test_broken",
        }
    }
    for key in ("tampering", "running", "hung", "canaries"):
        assert slimmed[key] == full[key]  # type: ignore[literal-required]
    assert slimmed["log_ref"] == ".fixbot/logs/t/attempt-1.json"


def quarantined(tests: dict[str, str], flaky: Sequence[str]) -> CheckResult:
    result = checked(tests)
    result["quarantined"] = dict.fromkeys(flaky, "flaky: failed in some baseline runs")
    return result


QUARANTINE = {**BASE, "t::test_flaps": "failed"}


@pytest.mark.parametrize(
    ("flaky_now", "expected"),
    [
        ("passed", []),
        ("failed", []),
        ("error", []),
        ("skipped", []),
        (None, []),  # not collected at all
    ],
)
def test_a_quarantined_test_neither_makes_nor_breaks_a_pass(
    flaky_now: str | None, expected: list[str]
) -> None:
    baseline = quarantined(QUARANTINE, ["t::test_flaps"])
    now = {"t::test_broken": "passed", "t::test_ok": "passed"}
    if flaky_now is not None:
        now["t::test_flaps"] = flaky_now
    assert problems(baseline, checked(now)) == expected


def test_passing_only_a_quarantined_test_earns_nothing() -> None:
    baseline = quarantined(QUARANTINE, ["t::test_flaps"])
    attempt = checked(
        {"t::test_broken": "failed", "t::test_ok": "passed", "t::test_flaps": "passed"}
    )
    assert problems(baseline, attempt) == ["t::test_broken still failed (it must pass)"]
    assert records.failing_tests(baseline) == ["t::test_broken"]


def test_a_test_that_passed_at_baseline_and_fails_now_is_a_regression_even_if_it_flaps() -> None:
    # Quarantine comes from the baseline alone: a test seen passing there and failing after a
    # candidate is that candidate's regression, whatever a re-run would say.
    baseline = quarantined(QUARANTINE, ["t::test_flaps"])
    attempt = checked(
        {"t::test_broken": "passed", "t::test_ok": "failed", "t::test_flaps": "passed"}
    )
    (problem,) = problems(baseline, attempt)
    assert problem.startswith("t::test_ok was passed before and now failed")


def test_an_attempts_quarantine_outlives_slimming() -> None:
    # decide() hands an attempt's check the baseline's quarantine; the state keeps it small.
    attempt = quarantined(
        {"t::test_broken": "failed", "t::test_flaps": "failed"}, ["t::test_flaps"]
    )
    slimmed = records.slim(attempt, ".fixbot/logs/x/attempt-1.json")
    assert slimmed["quarantined"] == attempt["quarantined"]
    assert records.failing_tests(slimmed) == ["t::test_broken"]
