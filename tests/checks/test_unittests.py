"""A unittest check read per test from the real `python -m unittest -v -b` output."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fixbot import proc
from fixbot.checks.unittests import _raised, read_unittest, unittest_argv
from fixbot.commands.spec import CheckSpec
from fixbot.proc import Completed

SPEC = CheckSpec("unit", "python -m unittest discover -s tests -t .", "unittest")
SUITE = '''\
import unittest


class TestA(unittest.TestCase):
    def test_ok(self):
        print("a test's own output, held back by -b ... ok")
        self.assertEqual(1, 1)

    def test_fail(self):
        self.assertEqual(1, 2)

    def test_doc(self):
        """A docstring line."""
        raise RuntimeError("boom")

    @unittest.skip("not today")
    def test_skip(self):
        pass

    @unittest.expectedFailure
    def test_xfail(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_xpass(self):
        pass

    def test_sub(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertEqual(i, 0)


class TestB(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise ValueError("class setup")

    def test_never(self):
        pass
'''


def real_run(tmp_path: Path, files: dict[str, str]) -> Completed:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    argv = unittest_argv((sys.executable, "-m", "unittest", "discover", "-s", "tests", "-t", "."))
    return proc.run(argv, cwd=tmp_path, timeout=60)


def test_verbose_output_is_read_per_test(tmp_path: Path) -> None:
    files = {"tests/__init__.py": "", "tests/test_a.py": SUITE, "tests/test_b.py": "import nope\n"}
    part = read_unittest(SPEC, real_run(tmp_path, files), "unittest", 1 << 20)
    assert part.run["status"] == "tests_failed", part.log_tail
    outcomes = {test: case["outcome"] for test, case in part.tests.items()}
    assert outcomes == {
        "tests.test_a.TestA::test_ok": "passed",
        "tests.test_a.TestA::test_fail": "failed",
        "tests.test_a.TestA::test_doc": "error",
        "tests.test_a.TestA::test_skip": "skipped",
        "tests.test_a.TestA::test_xfail": "xfailed",
        "tests.test_a.TestA::test_xpass": "failed",  # an unexpected success fails the run
        "tests.test_a.TestA::test_sub": "failed",  # one of its subtests failed
        "tests.test_a.TestB::setUpClass": "error",
        "tests.test_b": "error",  # the module that did not import
    }
    assert part.tests["tests.test_a.TestA::test_fail"]["message"] == "AssertionError: 1 != 2"
    assert "raise RuntimeError" in part.tests["tests.test_a.TestA::test_doc"]["detail"]
    assert "No module named 'nope'" in part.tests["tests.test_b"]["message"]
    assert part.tests["tests.test_a.TestA::test_skip"]["message"] == "not today"


def test_a_passing_run_passes(tmp_path: Path) -> None:
    ok = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        pass\n"
    part = read_unittest(
        SPEC, real_run(tmp_path, {"tests/__init__.py": "", "tests/test_ok.py": ok}), "u", 1 << 20
    )
    assert part.run["status"] == "passed"
    assert part.run["summary"] == "1 tests passed"


def test_output_that_disagrees_with_the_tally_is_no_report() -> None:
    lying = "test_x (m.T.test_x) ... ok\n\n" + "-" * 70 + "\nRan 2 tests in 0.001s\n\nOK\n"
    part = read_unittest(SPEC, Completed(("u",), 0, lying, 0.1, False, len(lying)), "u", 1 << 20)
    assert part.run["status"] == "no_report" and part.tests == {}
    cut = "test_x (m.T.test_x) ... ok\n"  # killed before its tally
    assert (
        read_unittest(SPEC, Completed(("u",), 0, cut, 0.1, False, 30), "u", 1 << 20).run["status"]
        == "no_report"
    )
    says_ok = "test_x (m.T.test_x) ... FAIL\n\n" + "-" * 70 + "\nRan 1 test in 0.001s\n\nOK\n"
    run = Completed(("u",), 0, says_ok, 0.1, False, len(says_ok))
    assert read_unittest(SPEC, run, "u", 1 << 20).run["status"] == "no_report"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("python", "-m", "unittest"), ["python", "-m", "unittest", "-v", "-b"]),
        (("python", "-m", "unittest", "-q", "discover", "-s", "t"),
         ["python", "-m", "unittest", "discover", "-v", "-b", "-s", "t"]),
        (("python", "-m", "unittest", "pkg.test_x"),
         ["python", "-m", "unittest", "-v", "-b", "pkg.test_x"]),
    ],
)  # fmt: skip
def test_verbose_and_buffered_where_unittest_reads_them(
    argv: tuple[str, ...], expected: list[str]
) -> None:
    assert unittest_argv(argv) == expected


def test_a_failure_message_is_the_exception_with_what_follows_it(tmp_path: Path) -> None:
    """unittest prints an assertEqual's differences on the lines after the exception's: the
    message is all of it (the evidence a model needs), not the traceback's last line alone."""
    lists = (
        "import unittest\n\n\nclass T(unittest.TestCase):\n"
        "    def test_lists(self):\n"
        "        self.assertEqual(\n            [1, 2, 3],\n            [1, 2, 4],\n        )\n"
    )
    files = {"tests/__init__.py": "", "tests/test_lists.py": lists}
    part = read_unittest(SPEC, real_run(tmp_path, files), "unittest", 1 << 20)
    message = part.tests["tests.test_lists.T::test_lists"]["message"]
    assert message.startswith("AssertionError: Lists differ: [1, 2, 3] != [1, 2, 4]\n")
    assert "First differing element 2:" in message and "\n+ [1, 2, 4]" in message


def test_an_exception_groups_message_is_what_it_raised_not_its_border() -> None:
    body = (
        "  + Exception Group Traceback (most recent call last):\n"
        '  |   File "/workspace/tests/test_eg.py", line 5, in test_group\n'
        '  |     raise ExceptionGroup("two failed", [ValueError("bad price")])\n'
        "  | ExceptionGroup: two failed (1 sub-exception)\n"
        "  +-+---------------- 1 ----------------\n"
        "    | ValueError: bad price\n"
        "    +------------------------------------"
    )
    message = _raised(body, "ERROR")
    assert message.startswith("ExceptionGroup: two failed (1 sub-exception)")
    assert "ValueError: bad price" in message and "---" not in message
