"""The rewrite ask's two rules: which functions it leaves out (those the failing tests use,
with a body on lines of its own, a docstring or not: the specification may sit anywhere), and
how (the body after the docstring, if any, one line)."""

from __future__ import annotations

from pathlib import Path

from fixbot.prompts.rewrite import LEFT_OUT, elided, rewritable
from fixbot.records import CaseResult, CheckResult

SOLUTION = '''\
from typing import List


def helper(x: int) -> int:
    return x + 1


def total(values: List[int]) -> int:
    """The sum of `values`; 0 for none."""
    result = 1
    for value in values:
        result += value
    return result


# The number of values.
def undocumented(values: List[int]) -> int:
    return len(values)


def one_line() -> int: return 1  # fmt: skip


def only_a_docstring() -> None:
    """Nothing to rewrite: the docstring is the whole body."""


async def fetched(n: int) -> int:
    """n, awaited."""
    return n - 1
'''

TESTS = """\
from solution import fetched, one_line, only_a_docstring, total, undocumented


def test_total():
    assert total([1, 2]) == 3
    assert undocumented([1]) == 1
    assert one_line() == 1
    only_a_docstring()


async def test_fetched():
    assert await fetched(2) == 2
"""


def failing(*ids: str) -> CheckResult:
    tests = {i: CaseResult(outcome="failed", message="assert 4 == 3", detail="") for i in ids}
    return CheckResult(
        status="tests_failed",
        exit_code=1,
        seconds=0.1,
        tests=tests,
        findings=[],
        log_tail="",
        commands=[],
    )


def tree(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "solution.py").write_text(SOLUTION)
    (tmp_path / "tests" / "test_solution.py").write_text(TESTS)
    return tmp_path


FILES = ["solution.py", "tests/test_solution.py"]


def test_the_failing_tests_functions_with_a_body_of_its_own(tmp_path: Path) -> None:
    check = failing("tests.test_solution::test_total", "tests.test_solution::test_fetched")
    found = rewritable(check, tree(tmp_path), FILES, "solution.py")
    assert found == ("total", "undocumented", "fetched")  # not one_line, nor only_a_docstring


def test_only_what_the_failing_tests_use(tmp_path: Path) -> None:
    check = failing("tests.test_solution::test_fetched")
    assert rewritable(check, tree(tmp_path), FILES, "solution.py") == ("fetched",)
    assert (
        rewritable(failing("tests.test_solution::test_gone"), tmp_path, FILES, "solution.py") == ()
    )
    assert rewritable(failing("check: lint"), tmp_path, FILES, "solution.py") == ()


def test_the_body_after_the_docstring_becomes_one_line_and_the_rest_stays() -> None:
    shown = elided(SOLUTION, ("total", "fetched"))
    assert '    """The sum of `values`; 0 for none."""\n    ' + LEFT_OUT + "\n" in shown
    assert "result = 1" not in shown and "return n - 1" not in shown
    assert '    """n, awaited."""\n    ' + LEFT_OUT + "\n" in shown
    assert "def helper(x: int) -> int:\n    return x + 1\n" in shown
    assert "def undocumented(values: List[int]) -> int:\n    return len(values)\n" in shown
    assert shown.endswith(LEFT_OUT + "\n")


def test_a_body_without_a_docstring_is_left_out_below_its_comments() -> None:
    shown = elided(SOLUTION, ("undocumented", "one_line"))
    assert "# The number of values.\ndef undocumented(values: List[int]) -> int:\n" in shown
    assert "    " + LEFT_OUT + "\n" in shown and "return len(values)" not in shown
    assert "def one_line() -> int: return 1" in shown  # nothing on a line of its own


def test_what_cannot_be_left_out_stays_as_it_is() -> None:
    assert elided(SOLUTION, ("one_line", "only_a_docstring", "missing")) == SOLUTION
    assert elided("def broken(:\n", ("broken",)) == "def broken(:\n"
    same_line = 'def f():\n    """Doc."""; return 1\n'
    assert elided(same_line, ("f",)) == same_line
