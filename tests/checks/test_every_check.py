"""The pass definition over every check: the failing build is the checks that fail at baseline,
every check that passed must still pass, a red check must end green, a check that cannot run
is never a pass, and failing-first results are never a pass."""

from __future__ import annotations

import pytest

from fixbot.checks import problems, reproduced, require_completed
from fixbot.checks.part import Part, aggregate, finding_part, set_aside, without_set_aside
from fixbot.commands.spec import CheckSpec
from fixbot.errors import EnvironmentProblem
from fixbot.proc import Completed
from fixbot.records import CaseResult, CheckRun, Finding

LINT = CheckSpec("lint", "ruff check .", "ruff")
GATE = CheckSpec("lint", "python -m ruff check .", "ruff", gate=True)
RAN = Completed(("x",), 0, "", 0.1, False, 0)


def run_of(outcomes: dict[str, str], name: str = "tests") -> Part:
    """A pytest check's part with these outcomes."""
    tests = {t: CaseResult(outcome=o, message=o, detail="") for t, o in outcomes.items()}  # type: ignore[typeddict-item]
    failing = sorted(t for t, o in outcomes.items() if o in ("failed", "error"))
    run = CheckRun(
        name=name, kind="pytest", gate=False, status="tests_failed" if failing else "passed",
        exit_code=int(bool(failing)), seconds=1.0, summary="", command="pytest", failing=failing,
    )  # fmt: skip
    return Part(run, tests)


def lint_part(*found: str, spec: CheckSpec = LINT, status: str = "") -> Part:
    findings = [Finding(tool="ruff", path=p, line=1, code="F401", message="unused") for p in found]
    ran = status or ("passed" if spec.gate or not found else "failed")
    return finding_part(spec, ran, RAN, findings, f"{len(found)} findings", "ruff check .")  # type: ignore[arg-type]


def test_a_green_check_that_turns_red_is_never_a_pass() -> None:
    baseline = aggregate([lint_part(), run_of({"t::a": "failed"})])
    attempt = aggregate([lint_part("a.py"), run_of({"t::a": "passed"})])
    assert problems(baseline, attempt) == [
        "check: lint was passed before and now failed: ruff: 1 findings"
    ]


def test_a_red_check_must_end_green() -> None:
    baseline = aggregate([lint_part("a.py", "b.py"), run_of({"t::a": "passed"})])
    assert set(baseline["tests"]) == {"check: lint", "t::a"}
    fewer = aggregate([lint_part("a.py"), run_of({"t::a": "passed"})])
    assert problems(baseline, fewer) == ["check: lint still failed (it must pass)"]
    assert problems(baseline, aggregate([lint_part(), run_of({"t::a": "passed"})])) == []


def test_only_a_gates_new_findings_block_it() -> None:
    baseline = aggregate([lint_part("a.py", spec=GATE), run_of({"t::a": "failed"})])
    assert "check: lint" not in baseline["tests"]  # a gate never makes the build red
    same = aggregate([lint_part("a.py", spec=GATE), run_of({"t::a": "passed"})])
    assert problems(baseline, same) == []
    more = aggregate([lint_part("a.py", "b.py", spec=GATE), run_of({"t::a": "passed"})])
    assert problems(baseline, more) == ["new ruff error b.py:1: unused [F401]"]


def test_findings_of_a_check_count_through_the_check_not_as_new_findings() -> None:
    baseline = aggregate([lint_part("a.py"), run_of({"t::a": "failed"})])
    fixed = aggregate([lint_part(), run_of({"t::a": "passed"})])
    assert problems(baseline, fixed) == []
    moved = aggregate([lint_part("c.py"), run_of({"t::a": "passed"})])
    assert problems(baseline, moved) == ["check: lint still failed (it must pass)"]


def test_a_check_that_cannot_run_is_never_a_pass_and_stops_a_baseline() -> None:
    broken = lint_part(status="error")
    broken.run["summary"] = "could not run: ruff is not installed in fixbot's environment"
    baseline = aggregate([lint_part(), run_of({"t::a": "failed"})])
    attempt = aggregate([broken, run_of({"t::a": "passed"})])
    assert attempt["status"] == "error"
    assert problems(baseline, attempt) == [
        "the check lint did not complete: error: could not run: ruff is not installed in "
        "fixbot's environment"
    ]
    with pytest.raises(EnvironmentProblem, match="the check lint could not run at baseline"):
        require_completed(attempt)


def test_a_gate_that_cannot_run_at_baseline_is_set_aside_not_a_stop() -> None:
    broken = lint_part(spec=GATE, status="error")
    tests = run_of({"t::a": "failed"})
    kept, aside = set_aside([broken, tests])
    assert (kept, aside) == ([tests], [broken.run])
    # A check that must pass is never set aside: it still stops the baseline.
    assert set_aside([lint_part(status="error"), tests])[1] == []
    assert set_aside([lint_part("a.py", spec=GATE), tests])[1] == []  # it ran: it stays
    baseline = aggregate(kept) | {"set_aside": aside}
    assert require_completed(baseline)["status"] == "tests_failed"  # type: ignore[arg-type]
    assert without_set_aside([GATE, LINT], baseline) == [LINT]  # type: ignore[arg-type]
    assert without_set_aside([GATE, LINT], aggregate(kept)) == [GATE, LINT]


def test_a_gate_that_ran_at_baseline_must_run_in_every_attempt() -> None:
    baseline = aggregate([lint_part("a.py", spec=GATE), run_of({"t::a": "failed"})])
    broken = lint_part(spec=GATE, status="error")
    broken.run["summary"] = "exit code 2 with no findings"
    attempt = aggregate([broken, run_of({"t::a": "passed"})])
    assert problems(baseline, attempt) == [
        "the check lint did not complete: error: exit code 2 with no findings"
    ]


def test_a_failing_first_result_is_never_a_pass() -> None:
    baseline = aggregate([lint_part(), run_of({"t::a": "failed", "t::b": "passed"})])
    early = aggregate([run_of({"t::a": "failed"})], partial=True)
    assert problems(baseline, early) == ["t::a still failed (it must pass)"]
    passing = aggregate([run_of({"t::a": "passed"})], partial=True)
    assert problems(baseline, passing) == [
        "only the failing checks and tests ran (failing first); the rest did not"
    ]
    assert reproduced(baseline, passing) == []  # as a further verification run, it holds


def test_a_reproduction_needs_every_failure_of_the_checks_it_ran() -> None:
    baseline = aggregate([lint_part("a.py"), run_of({"t::a": "failed", "t::b": "failed"})])
    lost = aggregate([lint_part(), run_of({"t::a": "passed"})], partial=True)
    assert reproduced(baseline, lost) == ["t::b still missing (it must pass)"]
    only_lint = aggregate([lint_part()], partial=True)
    assert reproduced(baseline, only_lint) == []  # the tests' failures were not its to show


def test_the_run_is_as_its_first_unfinished_check() -> None:
    stuck = run_of({})
    stuck.run["status"] = "timeout"
    result = aggregate([lint_part(), stuck])
    assert result["status"] == "timeout"
    assert [c["name"] for c in result["checks"]] == ["lint", "tests"]
    assert aggregate([lint_part("a.py"), run_of({"t::a": "passed"})])["status"] == ("tests_failed")
