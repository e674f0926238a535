"""Where the canaries live: items the plugin adds itself, no file anywhere. Adding them, and
loading the plugin, changes neither which repository tests are collected nor their order."""

from __future__ import annotations

import os
import subprocess
import sys

from fixbot.checks.pytest import harness
from tests.checks.conftest import Suite, one_run, run_direct


def collect_only(suite: Suite) -> list[str]:
    """pytest's own view of the repository, without fixbot's plugin."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=suite.root,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_repository_collects_what_it_collects_without_the_plugin(suite: Suite) -> None:
    (suite.root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\nmarkers = slow\n")
    suite.write(
        "conftest.py",
        """
        import pytest

        def pytest_collection_modifyitems(config, items):
            items.reverse()  # the repository's own ordering...
            keep = [i for i in items if "slow" not in i.keywords]
            config.hook.pytest_deselected(items=[i for i in items if i not in keep])
            items[:] = keep  # ...and its own deselection
        """,
    )
    suite.write(
        "tests/conftest.py",
        """
        import pytest

        @pytest.fixture(autouse=True)
        def everywhere():
            yield
        """,
    )
    suite.write(
        "tests/test_a.py",
        """
        import pytest

        @pytest.mark.parametrize("n", [1, 2, 3])
        def test_param(n):
            assert n

        @pytest.mark.slow
        def test_slow():
            pass

        class TestGroup:
            def test_inside(self):
                pass
        """,
    )
    suite.write("tests/sub/test_b.py", "def test_b():\n    pass\n")
    suite.write("elsewhere/test_c.py", "def test_outside_testpaths():\n    pass\n")

    expected = collect_only(suite)
    assert len(expected) == 5 and "tests/test_a.py::test_slow" not in expected
    one = one_run(suite)
    canaries = list(one.report.canaries.values())
    assert one.report.collected == [*expected, *canaries]  # same tests, same order, canaries last
    assert one.problems == []
    assert harness.decide(one, {}) == ("passed", [])


def test_canaries_are_fixbots_and_never_in_the_results(suite: Suite) -> None:
    suite.write("test_one.py", "def test_one():\n    pass\n")
    result = run_direct(suite)
    assert result.status == "passed"
    assert list(result.tests) == ["test_one.py::test_one"]
    assert result.canaries == {"integrity": "passed", "must_pass": "passed", "must_fail": "xfailed"}
    assert "1 xfailed" in result.runs[-1].output  # pytest ran and reported them: the must-fail
    assert result.runs[-1].returncode == 0  # canary is a strict xfail, so the exit status is the
    # repository's own


def test_a_repository_with_no_tests_is_still_no_tests(suite: Suite) -> None:
    suite.write("test_none.py", "x = 1\n")
    assert run_direct(suite).status == "no_tests_collected"


def test_a_collection_error_is_the_failure_it_was(suite: Suite) -> None:
    suite.write("test_broken.py", "import does_not_exist\n\ndef test_x():\n    pass\n")
    suite.write("test_fine.py", "def test_fine():\n    pass\n")
    result = run_direct(suite)
    assert result.status == "tests_failed", result.problems
    assert result.tests["test_broken.py"]["outcome"] == "error"
    assert "does_not_exist" in result.tests["test_broken.py"]["detail"]


def test_a_plugin_that_never_loads_is_no_report_never_a_pass(suite: Suite) -> None:
    """The gate that cannot run is an error: here pytest stops at a usage error before the
    plugin could say anything."""
    suite.write("test_one.py", "def test_one():\n    pass\n")
    result = run_direct(suite, "--no-such-option-for-fixbot")
    assert result.status == "no_report"
    assert result.runs[-1].returncode == 4
    assert result.tests == {}
    assert any("plugin never reported" in p for p in result.problems)
