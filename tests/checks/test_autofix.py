"""Zero-token fixes: a failing ruff check is fixed by ruff's own safe fixes before any model
call."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixbot.checks import ruff_failing
from fixbot.commands.spec import CheckSpec, legacy_checks
from fixbot.records import CaseResult, CheckResult
from tests.conftest import RunFixbot, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import reply

CLEAN_CALC = (
    "def add(a, b):\n    return a + b\n\n\n"
    "def mean(values):\n    return sum(values) / len(values)\n\n\n"
    "def clamp(x, low, high):\n    return max(low, min(x, high))\n"
)
BWRAP = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
RUFF_CONFIG = (
    "test_command: python -m ruff check .\n"
    "gates: {lint: false, types: false}\n"
    "verification: {final_runs: 1}\n"
)


def _result(*failing: str) -> CheckResult:
    tests = {t: CaseResult(outcome="failed", message="exit code 1", detail="") for t in failing}
    return CheckResult(
        status="tests_failed",
        exit_code=1,
        seconds=0.1,
        tests=tests,
        findings=[],
        log_tail="",
        commands=[],
    )


def _names(failing: list[CheckSpec]) -> list[str]:
    return [spec.run for spec in failing]


def test_a_legacy_test_command_that_is_ruff_is_a_ruff_check() -> None:
    lint = legacy_checks("python -m ruff check .", lint=False, types=False)
    assert _names(ruff_failing(_result("command: python -m ruff check ."), lint)) == [
        "python -m ruff check ."
    ]
    fmt = legacy_checks("ruff format --check src", lint=False, types=False)
    assert _names(ruff_failing(_result("command: ruff format --check src"), fmt))
    mypy = legacy_checks("python -m mypy .", lint=False, types=False)
    assert not ruff_failing(_result("command: python -m mypy ."), mypy)
    assert not ruff_failing(_result(), lint)


def test_a_failing_ruff_check_is_fixed_whatever_else_fails() -> None:
    checks = (
        CheckSpec("format", "ruff format --check .", "ruff-format"),
        CheckSpec("lint", "ruff check src", "ruff"),
        CheckSpec("types", "mypy .", "mypy"),
        CheckSpec("tests", "pytest", "pytest"),
    )
    both = _result("check: format", "check: lint", "check: types", "tests.test_x::test_y")
    # the lint fixes first, then the formatter; mypy and pytest are the model's
    assert _names(ruff_failing(both, checks)) == ["ruff check src", "ruff format --check ."]
    assert _names(ruff_failing(_result("check: types", "check: lint"), checks)) == [
        "ruff check src"
    ]
    assert not ruff_failing(_result("check: types", "tests.test_x::test_y"), checks)


def test_a_legacy_lint_gate_is_never_fixed() -> None:
    gates = legacy_checks("pytest", lint=True, types=True)
    assert not ruff_failing(_result("tests.test_x::test_y"), gates)


@BWRAP
def test_a_lint_only_failure_is_fixed_with_zero_tokens(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    files = {
        ".fixbot.yml": RUFF_CONFIG,
        "tidy.py": "import os\nimport sys\n\n\ndef version():\n    return sys.version\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    with ScriptedOpenAI([]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert server.requests == []
    evidence = run.evidence
    assert evidence["status"] == "fixed" and "zero model tokens" in evidence["reason"]
    assert evidence["tokens"]["total"] == 0
    assert [(a["number"], a["model"]) for a in evidence["attempts"]] == [
        (0, "ruff --fix + ruff format (no model)")
    ]
    assert "-import os\n" in evidence["diff"]
    assert "tests/" not in evidence["diff"]  # protected files are never ruff's to change


@BWRAP
def test_what_ruff_cannot_fix_goes_to_the_model(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    files = {
        ".fixbot.yml": RUFF_CONFIG,
        "calc.py": CLEAN_CALC,  # ruff-clean: only tidy.py is at fault
        "tidy.py": "import os\n\n\ndef version():\n    return sys.version\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    fix = reply(
        "--- a/tidy.py\n+++ b/tidy.py\n@@ -1,5 +1,5 @@\n-import os\n+import sys\n \n \n"
        " def version():\n     return sys.version\n",
        "ruff removed the unused import; sys was never imported.",
    )
    with ScriptedOpenAI([fix]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert len(server.requests) == 1
    feedback = server.requests[0]["messages"][-1]["content"]
    assert "F821" in feedback or "sys" in feedback  # what ruff left is what the model is told
    verdicts = [(a["number"], a["verdict"]) for a in run.evidence["attempts"]]
    assert verdicts == [(0, "fail"), (1, "pass")]
