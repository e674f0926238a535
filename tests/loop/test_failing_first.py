"""Every check the CI runs, in-process: the failing build is the checks that fail at baseline, a
pass keeps every green check green, and an attempt runs the failing checks and tests first."""

from __future__ import annotations

from pathlib import Path

from fixbot.commands.spec import CheckSpec
from fixbot.config import Config, Verification
from tests.fakes import GOOD, PlayedSandbox, reply, wrong
from tests.loop.test_loop import TESTS, outcomes, run

LINT = CheckSpec("lint", "ruff check .", "ruff")
TESTS_CHECK = CheckSpec("tests", "python -m pytest", "pytest")
CHECKS = Config(
    checks=(LINT, TESTS_CHECK),
    max_iterations=4,
    verification=Verification(baseline_runs=2, final_runs=2),
)
UNUSED = ("calc.py", 1, "F401", "`os` imported but unused")


def lint_of(tree: Path) -> list[tuple[str, int, str, str]]:
    """ruff finds an unused `import os` at the top of calc.py."""
    return [UNUSED] if (tree / "calc.py").read_text().startswith("import os\n") else []


# GOOD, plus an unused import: the tests pass, the lint check that was green turns red.
GOOD_BUT_LINT = reply(
    """--- a/calc.py
+++ b/calc.py
@@ -1,1 +1,3 @@
+import os
+
 \"\"\"A tiny calculator with a bug for fixbot to fix.\"\"\"
@@ -10,3 +12,3 @@
 def mean(values: list[float]) -> float:
     \"\"\"The arithmetic mean of a non-empty list.\"\"\"
-    return sum(values) / (len(values) + 1)
+    return sum(values) / len(values)
"""
)


def pytest_runs(sandbox: PlayedSandbox) -> list[list[str]]:
    """Each pytest run's node ids (an empty list: the whole suite)."""
    return [[w for w in argv if "::" in w] for argv in sandbox.runs if "pytest" in argv]


def test_a_check_that_was_green_and_turns_red_is_never_a_pass(tmp_path: Path) -> None:
    final, _, _ = run(tmp_path, [GOOD_BUT_LINT, GOOD], CHECKS, played=outcomes, lint=lint_of)
    first, second = final["attempts"]
    assert first["verdict"] == "fail"
    assert any(
        p.startswith("check: lint was passed before and now failed") for p in first["problems"]
    ), first["problems"]
    assert second["verdict"] == "pass" and final["status"] == "fixed"
    assert "import os" not in final["final_diff"]


def test_a_red_check_must_end_green_and_the_green_ones_stay_green(tmp_path: Path) -> None:
    def lint(tree: Path) -> list[tuple[str, int, str, str]]:
        fixed = "return sum(values) / len(values)\n" in (tree / "calc.py").read_text()
        return [] if fixed else [("calc.py", 12, "E999", "the mean is wrong, says ruff")]

    def green(tree: Path) -> dict[str, str]:
        return dict.fromkeys(TESTS, "passed")

    final, _, sandbox = run(tmp_path, [wrong(1), GOOD], CHECKS, played=green, lint=lint)
    baseline = final["baseline"]
    assert [(c["name"], c["status"]) for c in baseline["checks"]] == [
        ("lint", "failed"),
        ("tests", "passed"),
    ]
    assert baseline["tests"]["check: lint"]["outcome"] == "failed"
    assert [a["verdict"] for a in final["attempts"]] == ["fail", "pass"]
    assert "check: lint still failed (it must pass)" in final["attempts"][0]["problems"]
    assert final["status"] == "fixed"
    assert [(c["name"], c["status"]) for c in final["verification"]["checks"]] == [
        ("lint", "passed"),
        ("tests", "passed"),
    ]
    # lint failed at baseline: the wrong attempt ran lint alone (first), no test at all
    assert pytest_runs(sandbox) == [[], []]  # the baseline's, the right attempt's: no more


def test_the_first_whole_file_ask_shows_what_a_red_check_found(tmp_path: Path) -> None:
    # The short one-shot ask names failing tests only; a red check's findings are its message.
    def lint(tree: Path) -> list[tuple[str, int, str, str]]:
        fixed = "return sum(values) / len(values)\n" in (tree / "calc.py").read_text()
        return [] if fixed else [("calc.py", 12, "E999", "the mean is wrong, says ruff")]

    def green(tree: Path) -> dict[str, str]:
        return dict.fromkeys(TESTS, "passed")

    final, model, _ = run(tmp_path, [GOOD], CHECKS, played=green, lint=lint)
    assert final["status"] == "fixed" and final["attempts"][0]["shape"] == "whole_file"
    task = model.asked[0][-1]["content"]
    assert "check: lint\n    ruff: 1 finding: calc.py:12 E999 the mean is wrong, says ruff" in task
    assert "## calc.py (whole file)" in task and "What the tests check" not in task
    assert task.rstrip().endswith(
        "Reply with the complete corrected `calc.py` in one ```python block."
    )


def test_an_attempt_runs_the_failing_tests_first_and_the_rest_only_when_they_pass(
    tmp_path: Path,
) -> None:
    final, _, sandbox = run(tmp_path, [wrong(1), GOOD], CHECKS, lint=lint_of)
    assert final["status"] == "fixed"
    mean = ["tests/test_calc.py::test_mean"]
    assert pytest_runs(sandbox) == [
        [],  # the baseline: everything
        mean,  # its reproduction: the failing test only
        mean,  # the wrong attempt: failing first, and failing, so nothing more
        mean,  # the right attempt: the failing test first...
        [],  # ...then the whole suite on a fresh copy: the first verification run
        mean,  # the second verification run: the failing test again
    ]
    wrong_attempt = final["attempts"][0]
    assert wrong_attempt["check"]["partial"] is True
    assert wrong_attempt["check"]["checks"][0]["selected"] == 1
    assert final["verification"].get("partial") is None  # the full run is what is shown
    assert set(final["verification"]["tests"]) == {*TESTS, "check: lint"}


def test_full_reruns_run_everything_again(tmp_path: Path) -> None:
    config = Config(
        checks=(LINT, TESTS_CHECK),
        verification=Verification(baseline_runs=2, final_runs=2, full_reruns=True),
    )
    final, _, sandbox = run(tmp_path, [GOOD], config, lint=lint_of)
    assert final["status"] == "fixed"
    mean = ["tests/test_calc.py::test_mean"]
    assert pytest_runs(sandbox) == [[], [], mean, [], []]


def test_a_failure_that_does_not_reproduce_is_still_flaky(tmp_path: Path) -> None:
    seen: list[int] = []

    def once(tree: Path) -> dict[str, str]:
        seen.append(1)
        broken = len(seen) == 1  # fails in the full run, passes when reproduced
        return {t: "failed" if broken and t.endswith("test_mean") else "passed" for t in TESTS}

    final, model, _ = run(tmp_path, [], CHECKS, played=once)
    assert final["status"] == "escalated" and final["escalation"] == "flaky"
    assert final["flaky_tests"] == ["tests.test_calc::test_mean"]
    assert model.asked == []
