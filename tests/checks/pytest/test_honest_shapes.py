"""What honest pytest prints and counts, read as it is: every shape of an honest run agrees with
itself under the cross-check (no run called tampered), and each test gets its real outcome. One
test per shape: unittest subTest (pytest 9's own subtests), the subtests fixture, xfail and xpass
(strict and not), warnings, reruns (a plugin that adds its own summary word), a plugin that adds
a tally of its own, collection errors and skips, and each verbosity (-q, -qq, -v, -vv)."""

from __future__ import annotations

import pytest

from tests.checks.conftest import HarnessRun, Suite

UNITTEST_SUBTESTS = """
import unittest

class TestMany(unittest.TestCase):
    def test_all_pass(self):
        for i in range(50):
            with self.subTest(i=i):
                self.assertGreaterEqual(i, 0)

    def test_one_fails(self):
        for i in range(5):
            with self.subTest(i=i):
                self.assertLess(i, 4)
"""

FIXTURE_SUBTESTS = """
def test_fixture_subtests(subtests):
    for i in range(7):
        with subtests.test(msg="each", i=i):
            assert i < 10


def test_fixture_subtest_fails(subtests):
    with subtests.test(msg="first"):
        assert True
    with subtests.test(msg="second"):
        assert 1 == 2
"""

XFAILS = """
import pytest

@pytest.mark.xfail(reason="known")
def test_expected_failure():
    assert 0

@pytest.mark.xfail(reason="fixed since")
def test_unexpected_pass():
    pass

@pytest.mark.xfail(strict=True, reason="must fail")
def test_strict_unexpected_pass():
    pass

def test_imperative_xfail():
    pytest.xfail("not yet")
"""

WARNINGS_AND_SKIPS = """
import warnings
import pytest

def test_warns():
    warnings.warn(UserWarning("one"))
    warnings.warn(DeprecationWarning("two"))

@pytest.mark.skip(reason="never")
def test_skipped():
    pass

def test_plain():
    assert True
"""

FLAKY_ONCE = """
import os
import tempfile

MARK = os.path.join(tempfile.gettempdir(), "fixbot-shape-rerun-{token}")

def test_passes_on_the_rerun():
    if not os.path.exists(MARK):
        open(MARK, "w").close()
        assert False, "first try"
    os.unlink(MARK)

def test_always_fails():
    assert False
"""

OWN_TALLY = """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    terminalreporter.stats.setdefault("lint notes", []).extend([object(), object()])
"""

BROKEN_MODULE = "import not_a_module_anywhere\n\ndef test_never():\n    pass\n"

# On top of the suite runner's own -q: -qq, -qqq (no summary line), the default, -v, and -rA.
VERBOSITY = ["-q", "-qq", "-v", "-vv", "-rA"]


def agrees(result, **outcomes: str) -> None:  # type: ignore[no-untyped-def]
    assert result.problems == [], result.problems
    assert result.status in ("passed", "tests_failed"), result.status
    got = {test.split("::", 1)[1]: case["outcome"] for test, case in result.tests.items()}
    for test, outcome in outcomes.items():
        assert got.get(test) == outcome, (test, got)


@pytest.mark.parametrize("verbosity", VERBOSITY)
def test_unittest_subtests(suite: Suite, harness_run: HarnessRun, verbosity: str) -> None:
    suite.write("test_shape.py", UNITTEST_SUBTESTS)
    result = harness_run(verbosity)
    agrees(result, **{"TestMany::test_all_pass": "passed", "TestMany::test_one_fails": "failed"})
    assert result.status == "tests_failed"
    message = result.tests["test_shape.py::TestMany::test_one_fails"]["message"]
    assert "i=4" in message, message  # which subtest failed


@pytest.mark.parametrize("verbosity", VERBOSITY)
def test_fixture_subtests(suite: Suite, harness_run: HarnessRun, verbosity: str) -> None:
    suite.write("test_shape.py", FIXTURE_SUBTESTS)
    result = harness_run(verbosity)
    agrees(result, test_fixture_subtests="passed", test_fixture_subtest_fails="failed")


@pytest.mark.parametrize("verbosity", VERBOSITY)
def test_xfail_and_xpass(suite: Suite, harness_run: HarnessRun, verbosity: str) -> None:
    suite.write("test_shape.py", XFAILS)
    result = harness_run(verbosity)
    agrees(
        result,
        test_expected_failure="xfailed",
        test_unexpected_pass="passed",  # a non-strict xpass passes, as pytest's exit status says
        test_strict_unexpected_pass="failed",
        test_imperative_xfail="xfailed",
    )


@pytest.mark.parametrize("verbosity", VERBOSITY)
def test_warnings_and_skips(suite: Suite, harness_run: HarnessRun, verbosity: str) -> None:
    suite.write("test_shape.py", WARNINGS_AND_SKIPS)
    result = harness_run(verbosity, "-W", "default")
    agrees(result, test_warns="passed", test_skipped="skipped", test_plain="passed")
    assert result.status == "passed"


@pytest.mark.parametrize("verbosity", ["-q", "-v"])
def test_reruns_add_their_own_summary_word(
    suite: Suite, harness_run: HarnessRun, verbosity: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    token = tmp_path_factory.mktemp("rerun").name
    suite.write("test_shape.py", FLAKY_ONCE.replace("{token}", token))
    result = harness_run(verbosity, "-p", "rerunfailures", "--reruns", "1")
    agrees(result, test_passes_on_the_rerun="passed", test_always_fails="failed")
    if verbosity == "-v":  # the suite's own -q and this one make -qq: no summary line
        assert "2 rerun" in result.runs[-1].output


def test_a_plugin_with_its_own_tally(suite: Suite, harness_run: HarnessRun) -> None:
    suite.write("conftest.py", OWN_TALLY)
    suite.write("test_shape.py", "def test_one():\n    pass\n")
    result = harness_run()
    agrees(result, test_one="passed")
    assert "2 lint notes" in result.runs[-1].output


def test_a_collection_error_beside_passing_tests(suite: Suite, harness_run: HarnessRun) -> None:
    suite.write("test_broken.py", BROKEN_MODULE)
    suite.write("test_shape.py", "def test_one():\n    pass\n")
    result = harness_run("--continue-on-collection-errors")
    assert result.problems == [], result.problems
    assert result.tests["test_shape.py::test_one"]["outcome"] == "passed"
    assert result.tests["test_broken.py"]["outcome"] == "error"
