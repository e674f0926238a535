"""The pytest path and the legacy run_checks: the JUnit parser fed by real pytest, and the checks
end to end in the real sandbox (ruff and mypy's own readers: test_findings.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from fixbot import proc
from fixbot.checks import gates
from fixbot.checks.pytest import hangs, harness
from fixbot.checks.suite import run_checks
from fixbot.records import CheckResult, failing_tests
from fixbot.sandbox import BwrapSandbox, Limits

# gates.command_argv and gates.BadTestCommand are reached through the module: imported by
# name, pytest would try to collect them as tests.

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="bubblewrap (bwrap) is not installed here; CI installs it and runs these",
)

SAMPLE_TESTS = """\
import pytest


def test_pass():
    assert True


def test_fail():
    assert 1 == 2, "one is not two"


@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")


def test_error(broken):
    pass


@pytest.mark.skip(reason="not today")
def test_skip():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="fixed already")
def test_xpass():
    pass


@pytest.mark.xfail(strict=True, reason="must fail")
def test_xpass_strict():
    pass


class TestGroup:
    @pytest.mark.parametrize("n", [1, 2])
    def test_param(self, n):
        assert n == 1
"""


@pytest.fixture(scope="module")
def sample_result(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    """SAMPLE_TESTS through run_checks in the real sandbox, every outcome reported (a collection
    error does not stop the run): the per-test results as fixbot records them."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed here; CI installs it and runs these")
    root = tmp_path_factory.mktemp("sample")
    workspace = make_workspace(
        root,
        {
            "pytest.ini": "[pytest]\n",
            "test_sample.py": SAMPLE_TESTS,
            "test_broken.py": "import no_such_module_for_fixbot\n",
        },
    )
    return run_checks(
        BwrapSandbox(),
        workspace,
        test_command="python -m pytest --continue-on-collection-errors",
        lint=False,
        types=False,
        readonly=[],
        limits=FAST,
    )


# ---- per-test results, as the JUnit report had them


def test_every_outcome_is_read_as_the_junit_report_had_it(sample_result: CheckResult) -> None:
    assert sample_result["status"] == "tests_failed", sample_result["log_tail"]
    tests = sample_result["tests"]
    outcomes = {test_id: result["outcome"] for test_id, result in tests.items()}
    assert outcomes == {
        "test_broken": "error",
        "test_sample::test_pass": "passed",
        "test_sample::test_fail": "failed",
        "test_sample::test_error": "error",
        "test_sample::test_skip": "skipped",
        "test_sample::test_xfail": "xfailed",
        "test_sample::test_xpass": "passed",
        "test_sample::test_xpass_strict": "failed",
        "test_sample.TestGroup::test_param[1]": "passed",
        "test_sample.TestGroup::test_param[2]": "failed",
    }
    assert tests["test_sample::test_fail"]["message"].startswith("AssertionError: one is not two")
    assert 'assert 1 == 2, "one is not two"' in tests["test_sample::test_fail"]["detail"]
    assert "fixture exploded" in tests["test_sample::test_error"]["message"]
    assert tests["test_sample::test_skip"]["message"] == "not today"
    assert tests["test_sample::test_xfail"]["message"] == "known bug"
    assert "XPASS(strict)" in tests["test_sample::test_xpass_strict"]["message"]
    assert "no_such_module_for_fixbot" in tests["test_broken"]["detail"]
    assert tests["test_sample::test_pass"] == {
        "outcome": "passed",
        "message": "",
        "detail": "",
        "nodeid": "test_sample.py::test_pass",
    }
    assert tests["test_sample.TestGroup::test_param[2]"]["nodeid"] == (
        "test_sample.py::TestGroup::test_param[2]"
    )
    assert sample_result["canaries"] == {
        "integrity": "passed",
        "must_pass": "passed",
        "must_fail": "xfailed",
    }
    assert "tampering" not in sample_result


@needs_bwrap
def test_a_collection_error_is_one_error_and_hides_no_other_test(
    sandbox: BwrapSandbox, tmp_path: Path
) -> None:
    """pytest runs with --continue-on-collection-errors: a module that cannot be imported is
    one error, and every other test still has its outcome."""
    workspace = make_workspace(
        tmp_path, {"test_sample.py": SAMPLE_TESTS, "test_broken.py": "import no_such_module\n"}
    )
    result = run_checks(
        sandbox,
        workspace,
        test_command="python -m pytest",
        lint=False,
        types=False,
        readonly=[],
        limits=FAST,
    )
    assert result["status"] == "tests_failed", result["log_tail"]
    assert result["tests"]["test_broken"]["outcome"] == "error"
    assert "no_such_module" in result["tests"]["test_broken"]["detail"]
    assert result["tests"]["test_sample::test_pass"]["outcome"] == "passed"
    assert len(result["tests"]) > 1
    assert result["exit_code"] == 1  # the other tests ran: not interrupted


def test_long_tracebacks_keep_their_head_and_tail() -> None:
    text = "HEAD " + "x" * 20_000 + " TAIL"
    kept = hangs.head_tail(text, 4000)
    assert len(kept) < 4200
    assert kept.startswith("HEAD ") and kept.endswith(" TAIL")
    assert "characters elided" in kept


# ---- command_argv


PINNED = ["-p", "no:cacheprovider", "--color=no"]


@pytest.mark.parametrize(
    ("command", "user_part"),
    [
        ("python -m pytest", ["python", "-m", "pytest"]),
        ("python3 -m pytest -x tests", ["python3", "-m", "pytest", "-x", "tests"]),
        ("pytest", ["pytest"]),
        ("/usr/local/bin/pytest -q", ["/usr/local/bin/pytest", "-q"]),
        ("py.test", ["py.test"]),
        ('pytest -k "add and not slow"', ["pytest", "-k", "add and not slow"]),
    ],
)
def test_pytest_commands_get_the_pinned_options(command: str, user_part: list[str]) -> None:
    argv = gates.command_argv(command)
    assert argv[: len(user_part)] == user_part
    pinned = argv[len(user_part) :]
    assert pinned[: len(PINNED)] == PINNED  # no report file: the results come over a channel
    assert "--continue-on-collection-errors" in pinned  # a broken module hides no other test


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("make test", ["make", "test"]),
        ("tox -e py311", ["tox", "-e", "py311"]),
        ("python -m unittest", ["python", "-m", "unittest"]),
        ("python run_pytest.py", ["python", "run_pytest.py"]),
    ],
)
def test_other_commands_are_left_alone(command: str, argv: list[str]) -> None:
    assert gates.command_argv(command) == argv


@pytest.mark.parametrize("command", ["pytest 'unbalanced", 'make "test', "", "   "])
def test_unusable_commands_are_refused(command: str) -> None:
    with pytest.raises(gates.BadTestCommand):
        gates.command_argv(command)


# ---- run_checks, end to end in the real sandbox

CALC = "import os\n\n\ndef add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
CALC_TESTS = (
    "from calc import add, mul\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)
FAST = Limits(timeout_seconds=60, memory_mb=2048)


def make_workspace(root: Path, files: dict[str, str]) -> Path:
    workspace = root / "workspace"
    for rel, text in files.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return workspace


@pytest.fixture(scope="module")
def sandbox() -> BwrapSandbox:
    return BwrapSandbox()


@needs_bwrap
def test_run_checks_reports_each_test_and_each_finding(
    sandbox: BwrapSandbox, tmp_path: Path
) -> None:
    workspace = make_workspace(tmp_path, {"calc.py": CALC, "tests/test_calc.py": CALC_TESTS})
    result = run_checks(
        sandbox,
        workspace,
        test_command="python -m pytest",
        lint=True,
        types=True,
        readonly=["tests/test_calc.py"],
        limits=FAST,
    )
    assert result["status"] == "tests_failed", result["log_tail"]
    assert result["exit_code"] == 1
    assert {k: v["outcome"] for k, v in result["tests"].items()} == {
        "tests.test_calc::test_add": "failed",
        "tests.test_calc::test_mul": "passed",
    }
    assert "assert -1 == 5" in result["tests"]["tests.test_calc::test_add"]["message"]
    assert failing_tests(result) == ["tests.test_calc::test_add"]
    ruff = [f for f in result["findings"] if f["tool"] == "ruff"]
    assert [(f["path"], f["line"], f["code"]) for f in ruff] == [("calc.py", 1, "F401")]
    assert [f for f in result["findings"] if f["tool"] == "mypy"] == []
    # The gates first, as fixbot's own tools (`-I`: the workspace off sys.path), then the tests.
    assert [c.split()[:4] for c in result["commands"][:2]] == [
        [sys.executable, "-I", "-m", "ruff"],
        [sys.executable, "-I", "-m", "mypy"],
    ]
    assert result["commands"][2].startswith("python -m pytest -p no:cacheprovider")
    assert [(c["name"], c["kind"], c["gate"], c["status"]) for c in result["checks"]] == [
        ("lint", "ruff", True, "passed"),
        ("types", "mypy", True, "passed"),
        ("tests", "pytest", False, "tests_failed"),
    ]
    # pytest's own summary counts fixbot's three canaries too, one of them failing on purpose
    assert "1 failed, 3 passed, 1 xfailed" in result["log_tail"]  # the xfail: the canary
    assert result["seconds"] > 0
    # The pinned report went to the outputs folder, never into the workspace.
    assert sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*")) == [
        "calc.py", "tests", "tests/test_calc.py",
    ]  # fmt: skip


@needs_bwrap
def test_run_checks_reports_type_errors(sandbox: BwrapSandbox, tmp_path: Path) -> None:
    workspace = make_workspace(
        tmp_path,
        {
            "typed.py": "def f(x: int) -> str:\n    return x\n",
            "test_typed.py": "def test_ok():\n    pass\n",
        },
    )
    result = run_checks(
        sandbox,
        workspace,
        test_command="pytest",
        lint=False,
        types=True,
        readonly=[],
        limits=FAST,
    )
    assert result["status"] == "passed", result["log_tail"]
    assert {k: v["outcome"] for k, v in result["tests"].items()} == {
        "test_typed::test_ok": "passed"
    }
    assert [(f["tool"], f["path"], f["line"], f["code"]) for f in result["findings"]] == [
        ("mypy", "typed.py", 2, "return-value")
    ]


@needs_bwrap
def test_a_missing_test_command_is_an_infra_error(sandbox: BwrapSandbox, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, {"calc.py": CALC})
    result = run_checks(
        sandbox,
        workspace,
        test_command="no-such-test-runner --all",
        lint=False,
        types=False,
        readonly=[],
        limits=FAST,
    )
    assert result["status"] == "infra_error"
    assert result["exit_code"] == 127
    assert result["tests"] == {}


@needs_bwrap
def test_a_test_run_past_the_timeout_is_a_timeout(sandbox: BwrapSandbox, tmp_path: Path) -> None:
    workspace = make_workspace(
        tmp_path, {"test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"}
    )
    result = run_checks(
        sandbox,
        workspace,
        test_command="python -m pytest",
        lint=False,
        types=False,
        readonly=[],
        limits=Limits(timeout_seconds=3, memory_mb=2048),
    )
    assert result["status"] == "timeout"
    assert result["tests"] == {}
    assert result["running"] == "test_slow.py::test_slow"  # the whole command's timeout says


@needs_bwrap
def test_a_test_past_the_per_test_timeout_fails_and_the_rest_runs(
    sandbox: BwrapSandbox, tmp_path: Path
) -> None:
    workspace = make_workspace(
        tmp_path,
        {
            "test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(1e9)\n\n\n"
            "def test_next():\n    pass\n"
        },
    )
    result = run_checks(
        sandbox,
        workspace,
        test_command="python -m pytest",
        lint=False,
        types=False,
        readonly=[],
        limits=FAST,
        test_timeout=1,
    )
    assert result["status"] == "tests_failed", result["log_tail"]
    slow = result["tests"]["test_slow::test_slow"]
    assert slow["outcome"] == "failed"
    assert slow["message"] == "timed out after 1 s (in call)"
    assert "time.sleep(1e9)" in slow["detail"]
    assert result["tests"]["test_slow::test_next"]["outcome"] == "passed"
    assert "running" not in result and "hung" not in result


@needs_bwrap
def test_pytest_that_never_reports_is_no_report(sandbox: BwrapSandbox, tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path, {"test_x.py": "def test_x():\n    pass\n"})
    result = run_checks(
        sandbox,
        workspace,
        test_command="python -m pytest --no-such-option-for-fixbot",
        lint=False,
        types=False,
        readonly=[],
        limits=FAST,
    )
    assert result["status"] == "no_report"
    assert result["exit_code"] == 4  # pytest's usage error
    assert result["tests"] == {}
    assert "fixbot: fixbot's pytest plugin never reported" in result["log_tail"]


@needs_bwrap
def test_a_flood_from_a_command_that_is_not_pytest_keeps_its_verdict(
    sandbox: BwrapSandbox, tmp_path: Path
) -> None:
    command = "python -c 'import sys; sys.stdout.write(\"z\" * 4_000_000); sys.exit(1)'"
    workspace = make_workspace(tmp_path, {"calc.py": CALC})
    result = run_checks(
        sandbox,
        workspace,
        test_command=command,
        lint=False,
        types=False,
        readonly=[],
        limits=FAST,
    )
    assert result["status"] == "tests_failed"  # not output_exceeded: the exit code is the report
    assert result["tests"][f"command: {command}"]["outcome"] == "failed"


@needs_bwrap
@pytest.mark.parametrize(
    ("command", "outcome", "exit_code"),
    [
        ("python -c 'import sys; print(\"checking\"); sys.exit(3)'", "failed", 3),
        ("python -c 'print(\"all good\")'", "passed", 0),
    ],
)
def test_a_non_pytest_command_is_one_pseudo_test(
    sandbox: BwrapSandbox, tmp_path: Path, command: str, outcome: str, exit_code: int
) -> None:
    workspace = make_workspace(tmp_path, {"calc.py": CALC})
    result: CheckResult = run_checks(
        sandbox,
        workspace,
        test_command=command,
        lint=False,
        types=False,
        readonly=[],
        limits=FAST,
    )
    assert result["status"] == ("passed" if outcome == "passed" else "tests_failed")
    assert result["exit_code"] == exit_code
    (test_id,) = result["tests"]
    assert test_id == f"command: {command}"
    assert result["tests"][test_id]["outcome"] == outcome
    assert result["tests"][test_id]["message"] == f"exit code {exit_code}"
    assert result["commands"] == [command]


def test_two_node_ids_with_one_junit_id_keep_the_failure() -> None:
    """`a/b.py::test_x` and `a.b.py::test_x` are both `a.b::test_x`: a clash never hides one."""
    failing = {"outcome": "failed", "message": "no", "detail": "", "nodeid": "a/b.py::test_x"}
    passing = {"outcome": "passed", "message": "", "detail": "", "nodeid": "a.b.py::test_x"}
    for order in ((failing, passing), (passing, failing)):
        run = harness.TestRun(
            status="tests_failed",
            tests={case["nodeid"]: case for case in order},  # type: ignore[misc]
            problems=[],
            running=None,
            hung=[],
            runs=[proc.Completed(("pytest",), 1, "", 0.1, False, 0)],
            canaries={},
        )
        result = gates.pytest_result(["pytest"], run)
        assert result["tests"] == {"a.b::test_x": failing}
