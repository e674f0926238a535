"""checks.py: parsers fed by the real tools, and run_checks end to end in the real sandbox."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from fixbot import checks, proc
from fixbot.checks import TEST_ENV, parse_junit, parse_mypy, parse_ruff, run_checks
from fixbot.records import CheckResult, failing_tests
from fixbot.sandbox import OUTPUTS, WORKSPACE, BwrapSandbox, Limits

# checks.command_argv and checks.BadTestCommand are reached through the module: imported by
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
def junit_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JUnit report written by a real pytest run over SAMPLE_TESTS."""
    root = tmp_path_factory.mktemp("junit")
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_sample.py").write_text(SAMPLE_TESTS)
    (root / "test_broken.py").write_text("import no_such_module_for_fixbot\n")
    report = root / "junit.xml"
    result = proc.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={report}",
            "-o", "junit_family=xunit2", "-o", "junit_logging=no", "-q",
        ],
        cwd=root,
        env={"PATH": "/usr/bin:/bin", **TEST_ENV},
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 2, result.output  # 2: interrupted by the collection error
    return report


@pytest.fixture(scope="module")
def junit_report_continued(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same tests, with --continue-on-collection-errors so every outcome is in the report."""
    root = tmp_path_factory.mktemp("junit-all")
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_sample.py").write_text(SAMPLE_TESTS)
    (root / "test_broken.py").write_text("import no_such_module_for_fixbot\n")
    report = root / "junit.xml"
    result = proc.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={report}",
            "-o", "junit_family=xunit2", "--continue-on-collection-errors", "-q",
        ],
        cwd=root,
        env={"PATH": "/usr/bin:/bin", **TEST_ENV},
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 1, result.output
    return report


# ---- parse_junit


def test_parse_junit_reads_every_outcome_from_a_real_report(
    junit_report_continued: Path,
) -> None:
    tests = parse_junit(junit_report_continued)
    assert tests is not None
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
    assert tests["test_sample::test_pass"] == {"outcome": "passed", "message": "", "detail": ""}


def test_a_collection_error_that_stops_the_run_is_one_error(junit_report: Path) -> None:
    tests = parse_junit(junit_report)
    assert tests is not None
    assert list(tests) == ["test_broken"]
    assert tests["test_broken"]["outcome"] == "error"


def test_long_tracebacks_keep_their_head_and_tail(tmp_path: Path) -> None:
    middle = "x" * 20_000
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite><testcase classname="t" name="test_long">'
        f'<failure message="{"m" * 5000}">HEAD {middle} TAIL</failure>'
        "</testcase></testsuite></testsuites>"
    )
    tests = parse_junit(report)
    assert tests is not None
    result = tests["t::test_long"]
    assert len(result["message"]) <= 600
    assert len(result["detail"]) < 4200
    assert result["detail"].startswith("HEAD ")
    assert result["detail"].endswith(" TAIL")
    assert "characters elided" in result["detail"]


def test_a_missing_report_is_none(tmp_path: Path) -> None:
    assert parse_junit(tmp_path / "junit.xml") is None


def test_a_truncated_report_is_none(junit_report_continued: Path, tmp_path: Path) -> None:
    data = junit_report_continued.read_bytes()
    truncated = tmp_path / "junit.xml"
    truncated.write_bytes(data[: len(data) // 2])
    assert parse_junit(truncated) is None
    truncated.write_bytes(b"")
    assert parse_junit(truncated) is None


def test_a_report_with_no_tests_is_empty_not_none(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text('<testsuites><testsuite name="pytest" tests="0"/></testsuites>')
    assert parse_junit(report) == {}


# ---- parse_ruff


@pytest.fixture(scope="module")
def ruff_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("ruff")
    (root / "calc.py").write_text("import os\n\n\ndef add(a, b):\n    return a + b\n")
    (root / "broken.py").write_text("def oops(:\n    pass\n")
    result = proc.run(
        [
            sys.executable, "-m", "ruff", "check", "--isolated", "--output-format=json",
            "--no-cache", "--exit-zero", ".",
        ],
        cwd=root,
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.output
    return result.output.replace(str(root), WORKSPACE)  # as the sandbox reports it


def test_parse_ruff_reads_real_output(ruff_output: str) -> None:
    findings = parse_ruff(ruff_output)
    by_path = {(f["path"], f["code"]): f for f in findings}
    unused = by_path[("calc.py", "F401")]
    assert unused["tool"] == "ruff"
    assert unused["line"] == 1
    assert "os" in unused["message"]
    syntax = [f for f in findings if f["path"] == "broken.py"]
    # Older ruff leaves the code of a syntax error empty ("syntax"); newer says "invalid-syntax".
    assert syntax and all(f["code"] in {"syntax", "invalid-syntax"} for f in syntax)
    assert all(f["line"] >= 1 for f in syntax)


def test_parse_ruff_skips_a_warning_before_the_json(ruff_output: str) -> None:
    warned = "warning: `ruff` config is deprecated, see the docs\n" + ruff_output
    assert parse_ruff(warned) == parse_ruff(ruff_output)


def test_parse_ruff_on_a_clean_tree_is_empty() -> None:
    assert parse_ruff("[]\n") == []
    assert parse_ruff("") == []


def test_parse_ruff_on_garbage_is_one_failure_finding() -> None:
    findings = parse_ruff("error: ruff crashed [panic] while parsing\n")
    assert len(findings) == 1
    assert findings[0]["code"] == "ruff-failed"
    assert findings[0]["tool"] == "ruff"
    assert "ruff crashed" in findings[0]["message"]


# ---- parse_mypy


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("mypy")
    (root / "typed.py").write_text("def f(x: int) -> str:\n    return x\n\n\nreveal_type(f)\n")
    result = proc.run(
        [
            sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir=/dev/null",
            "--show-error-codes", "--no-color-output", "--no-error-summary",
            "--hide-error-context", "--no-pretty", "typed.py",
        ],
        cwd=root,
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.output
    assert ": note: " in result.output  # the note the parser must ignore is really there
    return result.output


def test_parse_mypy_reads_real_output_and_ignores_notes(mypy_output: str) -> None:
    findings = parse_mypy(mypy_output)
    assert findings == [
        {
            "tool": "mypy",
            "path": "typed.py",
            "line": 2,
            "code": "return-value",
            "message": 'Incompatible return value type (got "int", expected "str")',
        }
    ]


def test_parse_mypy_handles_columns_workspace_paths_and_missing_codes() -> None:
    output = (
        f'{WORKSPACE}/pkg/a.py:3:5: error: Name "y" is not defined  [name-defined]\n'
        "pkg/b.py:10: error: Something without a code\n"
        "pkg/b.py:11: note: See https://mypy.readthedocs.io\n"
    )
    assert parse_mypy(output) == [
        {"tool": "mypy", "path": "pkg/a.py", "line": 3, "code": "name-defined",
         "message": 'Name "y" is not defined'},
        {"tool": "mypy", "path": "pkg/b.py", "line": 10, "code": "error",
         "message": "Something without a code"},
    ]  # fmt: skip


def test_parse_mypy_reports_a_crash_but_not_a_missing_mypy() -> None:
    crashed = parse_mypy("mypy: error: Cannot find config file 'nope.ini'\n")
    assert [f["code"] for f in crashed] == ["mypy-failed"]
    assert parse_mypy("/usr/bin/python: No module named mypy\n") == []
    assert parse_mypy("") == []


# ---- command_argv


PINNED = ["-p", "no:cacheprovider", f"--junitxml={OUTPUTS}/junit.xml"]


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
    argv = checks.command_argv(command)
    assert argv[: len(user_part)] == user_part
    pinned = argv[len(user_part) :]
    assert pinned[: len(PINNED)] == PINNED
    assert "junit_family=xunit2" in pinned
    assert "--color=no" in pinned
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
    assert checks.command_argv(command) == argv


@pytest.mark.parametrize("command", ["pytest 'unbalanced", 'make "test', "", "   "])
def test_unusable_commands_are_refused(command: str) -> None:
    with pytest.raises(checks.BadTestCommand):
        checks.command_argv(command)


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
    assert result["commands"][0].startswith("python -m pytest -p no:cacheprovider")
    assert [c.split()[:3] for c in result["commands"][1:]] == [
        ["python", "-m", "ruff"],
        ["python", "-m", "mypy"],
    ]
    assert "1 failed, 1 passed" in result["log_tail"]
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
    assert result["seconds"] < 15


@needs_bwrap
def test_pytest_that_writes_no_report_is_no_report(sandbox: BwrapSandbox, tmp_path: Path) -> None:
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
