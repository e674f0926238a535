"""The code under test cannot rewrite, forge or patch its way to a pass.

Every test plants a bug (`add` subtracts) and an attack in the candidate's module `calc.py`,
which the (protected) test file imports. Without the channel, the cross-check and the canaries,
each attack below turns the failing test into a pass.
"""

from __future__ import annotations

from fixbot.checks.pytest import harness
from fixbot.sandbox import BwrapSandbox
from tests.checks.conftest import HarnessRun, Suite, run_boxed, run_direct

TEST_CALC = """
from calc import add

def test_add():
    assert add(2, 2) == 4

def test_other():
    assert True
"""

BUG = "\n\ndef add(a, b):\n    return a - b\n"


def plant(suite: Suite, attack: str, bug: str = BUG) -> None:
    suite.write("test_calc.py", TEST_CALC)
    suite.write("calc.py", attack + bug)


def assert_tampered(result: harness.TestRun, *needles: str) -> None:
    assert result.status == "tampered", (result.status, result.problems)
    text = "\n".join(result.problems)
    for needle in needles:
        assert needle in text, f"{needle!r} not in:\n{text}"


# --- rewriting the report at exit ------------------------------------------------------------

# What rewrote the JUnit report once (issue 14): now there is no file, and the report is the
# channel, so the hook writes "passed" lines on every pipe and socket it holds, at exit.
ATEXIT_FORGER = """
import atexit, os

def _rewrite():
    line = b'{"k":"result","nodeid":"test_calc.py::test_add","outcome":"passed"}\\n'
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
            if int(name) > 2 and target.startswith(("pipe:", "socket:")):
                os.write(int(name), line)
        except OSError:
            pass
    for folder, _, files in os.walk("/fixbot-out"):
        for file in files:
            with open(os.path.join(folder, file), "w") as handle:
                handle.write("<testsuite/>")

atexit.register(_rewrite)
"""


def test_an_atexit_hook_rewriting_the_report_is_caught(
    suite: Suite, bwrap_box: BwrapSandbox
) -> None:
    plant(suite, ATEXIT_FORGER)
    result, _ = run_boxed(bwrap_box, suite)
    assert_tampered(result, "a report line was not written by fixbot's plugin")
    assert result.tests["test_calc.py::test_add"]["outcome"] == "failed"  # its real outcome


# --- patching pytest in-process ---------------------------------------------------------------

PATCH_REPORTS = '''
exec(compile("""
import _pytest.reports as reports
_made = reports.TestReport.from_item_and_call.__func__
def _lenient(cls, item, call):
    report = _made(cls, item, call)
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None
    return report
reports.TestReport.from_item_and_call = classmethod(_lenient)
""", "<calc>", "exec"))
'''

PATCH_WITH_A_MOCK = """
from unittest import mock
import _pytest.reports as reports

_made = reports.TestReport.from_item_and_call

def _lenient(item, call):
    report = _made(item, call)
    if report.failed:
        report.outcome = "passed"
        report.longrepr = None
    return report

_lenient_mock = mock.MagicMock(side_effect=_lenient)
mock.patch.object(reports.TestReport, "from_item_and_call", _lenient_mock).start()
"""

HOOKWRAPPER = """
import gc, pytest

class _Lenient:
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed:
            report.outcome = "passed"
            report.longrepr = None

for _obj in gc.get_objects():
    if type(_obj).__name__ == "PytestPluginManager":
        _obj.register(_Lenient(), "lenient")
        break
"""

TERMINAL = """
import _pytest.terminal as terminal

def _all_green(self):
    return [(f"{self._numcollected} passed", {"green": True})], "green"

terminal.TerminalReporter.build_summary_stats_line = _all_green
"""


def test_patched_report_construction_is_caught(suite: Suite, harness_run: HarnessRun) -> None:
    plant(suite, PATCH_REPORTS)
    result = harness_run()
    assert result.tests["test_calc.py::test_add"]["outcome"] == "passed"  # the lie...
    assert_tampered(  # ...and why it is not believed
        result,
        "_pytest.reports.TestReport.from_item_and_call was replaced (by code claiming <calc>)",
        "test_calc.py::test_add raised AssertionError in call but its report says passed",
        "::integrity raised AssertionError in call but its report says passed",
    )


# A replacement whose code object claims pytest's own file (and line), and one that drops the
# failing call's exception before any report is made: neither passes for pytest's own code.
CLAIMS_PYTESTS_FILE = """
import types
import _pytest.runner as runner

_real = runner.CallInfo.from_call.__func__

def _swallow(cls, func, when, reraise=None):
    info = _real(cls, func, when, reraise)
    if when == "call" and info.excinfo is not None:
        return _real(cls, lambda: None, when, reraise)  # the failure's exception dropped
    return info

_code = _swallow.__code__.replace(co_filename=runner.__file__, co_firstlineno=340)
_forged = types.FunctionType(_code, _swallow.__globals__, "from_call", None, _swallow.__closure__)
runner.CallInfo.from_call = classmethod(_forged)
"""


def test_a_replacement_claiming_pytests_own_file_is_caught(suite: Suite) -> None:
    """Trust by file name would let this through; identities and code objects do not."""
    plant(suite, CLAIMS_PYTESTS_FILE)
    result = run_direct(suite)
    assert result.tests["test_calc.py::test_add"]["outcome"] == "passed"  # the lie...
    assert_tampered(
        result,
        "_pytest.runner.CallInfo.from_call was replaced (by code claiming",
        "/_pytest/runner.py)",
    )


def test_patching_with_a_mock_is_caught(suite: Suite) -> None:
    plant(suite, PATCH_WITH_A_MOCK)
    result = run_direct(suite)
    assert result.tests["test_calc.py::test_add"]["outcome"] == "passed"
    assert_tampered(
        result,
        "_pytest.reports.TestReport.from_item_and_call was replaced",
        "test_calc.py::test_add raised AssertionError in call but its report says passed",
    )


def test_a_hookwrapper_registered_by_the_candidate_is_caught(suite: Suite) -> None:
    plant(suite, HOOKWRAPPER)
    result = run_direct(suite)
    assert result.tests["test_calc.py::test_add"]["outcome"] == "passed"
    assert_tampered(
        result,
        "pytest_runtest_makereport is implemented by",
        "calc.py) (plugin 'lenient'), which is not a conftest.py or a configured plugin",
        "test_calc.py::test_add's call report was made failed and logged passed",
        "::integrity's call report was made failed and logged passed",
    )


def test_a_patched_terminal_reporter_is_caught(suite: Suite) -> None:
    plant(suite, TERMINAL)
    result = run_direct(suite)
    assert "\n2 passed in" in result.runs[-1].output  # what the terminal now claims
    assert_tampered(
        result,
        "_pytest.terminal.TerminalReporter.build_summary_stats_line was replaced",
        "the terminal summary says 0 failed where the report channel says 2",
    )


# --- writing to the channel -------------------------------------------------------------------

NAIVE_FORGER = """
import os

for _name in os.listdir("/proc/self/fd"):
    _fd = int(_name)
    try:
        _target = os.readlink(f"/proc/self/fd/{_fd}")
    except OSError:
        continue
    if _fd > 2 and _target.startswith(("pipe:", "socket:")):
        try:
            os.write(_fd, b'{"k":"result","nodeid":"test_calc.py::test_add","outcome":"passed"}\\n')
        except OSError:
            pass
"""

# Knows the protocol: writes with the plugin's own writer (its token and sequence counter are in
# the writer's closure), a passing result while the failing test runs.
INFORMED_FORGER = """
import sys

def _forge():
    plugin = next(m for n, m in sys.modules.items() if n.startswith("fixbot_harness_"))
    plugin._emit("result", nodeid="test_calc.py::test_add", outcome="passed", message="",
                 detail="", categories=["passed"])

def add(a, b):
    _forge()
    return a - b
"""

# Rewrites the plugin's own line on its way out, in-process: no extra line, no duplicate.
REWRITER = """
import sys

def _rewrite():
    plugin = next(m for n, m in sys.modules.items() if n.startswith("fixbot_harness_"))
    harness = plugin._harness
    emit = harness.emit

    def lenient(kind, **fields):
        failed = fields.get("outcome") == "failed"
        if kind == "result" and failed and "canary" not in fields["nodeid"]:
            fields.update(outcome="passed", message="", detail="", categories=["passed"])
        emit(kind, **fields)

    harness.emit = lenient

def add(a, b):
    _rewrite()
    return a - b
"""


def test_forged_lines_on_the_channel_are_caught(suite: Suite, harness_run: HarnessRun) -> None:
    plant(suite, NAIVE_FORGER)
    result = harness_run()
    assert_tampered(result, "a report line was not written by fixbot's plugin")
    assert result.tests["test_calc.py::test_add"]["outcome"] == "failed"


def test_a_forger_that_knows_the_token_and_sequence_is_caught_by_the_duplicate(
    suite: Suite,
) -> None:
    plant(suite, INFORMED_FORGER, "")
    result = run_direct(suite)
    assert_tampered(
        result,
        "test_calc.py::test_add was reported twice",
        "the test report disagrees with pytest's exit status: 1, no failure",
    )


def test_a_candidate_rewriting_the_plugins_own_lines_is_caught(suite: Suite) -> None:
    plant(suite, REWRITER, "")
    result = run_direct(suite)
    assert result.tests["test_calc.py::test_add"]["outcome"] == "passed"  # the rewritten line
    assert_tampered(
        result,
        "harness.emit was replaced (by code claiming",
        # test_add and the integrity canary, which found the rewriter
        "pytest's own tally says 2 failed where the per-test results have 1",
    )


# --- getting around the canaries and the session's end -----------------------------------------

DROP_CANARIES = """
import gc

def _drop():
    session = next(o for o in gc.get_objects() if type(o).__name__ == "Session")
    session.items[:] = [i for i in session.items if "fixbot_canary" not in i.nodeid]
"""


def test_removing_the_canaries_is_caught(suite: Suite) -> None:
    plant(suite, DROP_CANARIES, "\n\ndef add(a, b):\n    _drop()\n    return a + b\n")
    result = run_direct(suite)
    assert_tampered(result, "fixbot's canary integrity never ran", "collected tests have no result")


def test_ending_the_process_with_status_0_mid_run_is_caught(suite: Suite) -> None:
    plant(suite, "import os\n", "\n\ndef add(a, b):\n    os._exit(0)\n")
    result = run_direct(suite)
    assert result.runs[-1].returncode == 0
    assert_tampered(result, "the process exited 0 but pytest never finished")


def test_ending_the_session_early_with_pytest_exit_is_caught(suite: Suite) -> None:
    plant(suite, "import pytest\n", "\n\ndef add(a, b):\n    pytest.exit('done', returncode=0)\n")
    result = run_direct(suite)
    assert_tampered(result, "collected tests have no result, though the session ran to its end")


def test_an_honest_failure_is_not_called_tampering(suite: Suite) -> None:
    plant(suite, "")
    result = run_direct(suite)
    assert result.status == "tests_failed" and result.problems == []
    assert set(result.tests) == {"test_calc.py::test_add", "test_calc.py::test_other"}
    assert result.canaries == {"integrity": "passed", "must_pass": "passed", "must_fail": "xfailed"}


def test_an_honest_fix_passes(suite: Suite) -> None:
    plant(suite, "", "\n\ndef add(a, b):\n    return a + b\n")
    result = run_direct(suite)
    assert result.status == "passed" and result.problems == []
    assert {r["outcome"] for r in result.tests.values()} == {"passed"}
