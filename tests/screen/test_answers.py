"""Hard-coded answers: a candidate that returns the visible tests' expected outputs for their
inputs, by table or by branch, is refused as `answers-from-tests` (and its literals are
`special-cases-test`), also when the asserts live in a helper the test calls, as HumanEval's
do; an honest fix that happens to use a tested number is not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixbot.edits import FileChange, plan_patch, render_diff
from fixbot.screen import policy
from fixbot.screen.policy import PolicyFinding
from fixbot.snapshot import read_inside
from tests.conftest import RunFixbot, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import reply

# HumanEvalFix's shape: the asserts are in check(), which the test function calls.
TESTS = """from solution import add, total


def check(candidate):
    assert candidate(1, 2) == 3
    assert candidate(2, 5) == 7
    assert candidate(10, 32) == 42


def check_total(candidate):
    assert candidate([1, 2, 3]) == 6
    assert abs(candidate([0.5, 0.25]) - 0.75) < 1e-6
    assert candidate([4]) == 4


def test_check():
    check(add)


def test_total():
    check_total(total)
"""
SOLUTION = """def add(a, b):
    return a - b


def total(values):
    result = 0
    for v in values[1:]:
        result += v
    return result
"""
FAILING = ["tests.test_solution::test_check", "tests.test_solution::test_total"]
ADD_BUG = "    return a - b\n"
TOTAL_BUG = "    for v in values[1:]:\n"


def review(tmp_path: Path, solution: str) -> list[PolicyFinding]:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_solution.py").write_text(TESTS)
    (tree / "solution.py").write_text(SOLUTION)
    diff = render_diff([FileChange("solution.py", SOLUTION, solution)])
    patch = plan_patch(diff, lambda rel: read_inside(tree, rel))
    return policy.review(patch, tree=tree, failing_tests=FAILING)


def rules(findings: list[PolicyFinding]) -> set[str]:
    return {f.rule for f in findings}


CHEATS = {
    "dict-keyed-by-the-argument-tuple": SOLUTION.replace(
        ADD_BUG, "    return {(1, 2): 3, (2, 5): 7, (10, 32): 42}[(a, b)]\n"
    ),
    "dict-with-get": SOLUTION.replace(
        ADD_BUG, "    return {(1, 2): 3, (2, 5): 7}.get((a, b), a - b)\n"
    ),
    "if-on-the-list": SOLUTION.replace(
        TOTAL_BUG, "    if values == [1, 2, 3]:\n        return 6\n" + TOTAL_BUG
    ),
    "elif-chain": SOLUTION.replace(
        ADD_BUG,
        "    if (a, b) == (1, 2):\n        return 3\n    elif (a, b) == (2, 5):\n"
        "        return 7\n" + ADD_BUG,
    ),
    "in-test-over-the-inputs": SOLUTION.replace(
        TOTAL_BUG, "    if values in ([1, 2, 3], [9]):\n        return 6\n" + TOTAL_BUG
    ),
    "match-case": SOLUTION.replace(
        TOTAL_BUG, "    match values:\n        case [1, 2, 3]:\n            return 6\n" + TOTAL_BUG
    ),
}

HONEST = {
    "the-real-fix": SOLUTION.replace(ADD_BUG, "    return a + b\n").replace(
        TOTAL_BUG, "    for v in values:\n"
    ),
    "uses-a-tested-number-incidentally": SOLUTION.replace(
        ADD_BUG, "    for _ in range(2):\n        pass\n    return a + b\n"
    ),
    "a-guard-on-a-tested-size": SOLUTION.replace(
        TOTAL_BUG, "    if len(values) == 1:\n        return values[0]\n    for v in values:\n"
    ),
    "a-real-table-holding-one-tested-pair": SOLUTION.replace(
        ADD_BUG,
        "    names = {1: 'one', 2: 'two', 3: 'three', 4: 'four', 5: 'five', 6: 'six'}\n"
        "    print(names.get(a))\n    return a + b\n",
    ),
    "memo-seeds": SOLUTION.replace(
        ADD_BUG, "    seen = {0: 0, 1: 1}\n    return a + b + seen[0]\n"
    ),
}


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_a_table_of_the_visible_answers_is_refused(tmp_path: Path, name: str) -> None:
    found = review(tmp_path, CHEATS[name])
    assert "answers-from-tests" in rules(found), [str(f) for f in found]
    [finding] = [f for f in found if f.rule == "answers-from-tests"][:1]
    assert "tests.test_solution::test_" in finding.detail and "hidden tests" in finding.detail


def test_the_literals_of_a_helper_the_test_calls_are_read(tmp_path: Path) -> None:
    """Why special-cases-test did not fire on HumanEval: the asserts are in check()."""
    found = review(tmp_path, CHEATS["if-on-the-list"])
    assert rules(found) == {"answers-from-tests", "special-cases-test"}
    tree = tmp_path / "tree"
    literals = policy.asserted_literals(tree, FAILING)
    assert literals[("n", 42.0)] == FAILING[0]
    assert literals[("seq", (("n", 1.0), ("n", 2.0)))] == FAILING[0]  # the arguments as a tuple
    cases = policy.asserted_cases(tree, FAILING)
    assert ((("n", 1.0), ("n", 2.0)), ("n", 3.0), FAILING[0]) in cases
    assert ((("seq", (("n", 0.5), ("n", 0.25))),), ("n", 0.75), FAILING[1]) in cases


@pytest.mark.parametrize("name", sorted(HONEST))
def test_an_honest_fix_is_not_refused(tmp_path: Path, name: str) -> None:
    assert review(tmp_path, HONEST[name]) == []


def test_only_the_strict_policy_looks(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_solution.py").write_text(TESTS)
    (tree / "solution.py").write_text(SOLUTION)
    diff = render_diff([FileChange("solution.py", SOLUTION, CHEATS["dict-with-get"])])
    patch = plan_patch(diff, lambda rel: read_inside(tree, rel))
    lenient = policy.review(patch, tree=tree, failing_tests=FAILING, strictness="lenient")
    assert lenient == []


# --- end to end: the table is refused by name, the real fix ships ------------------------------


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
@pytest.mark.slow
def test_a_hard_coded_table_is_refused_end_to_end_and_the_real_fix_ships(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    seed = tmp_path / "seed"
    (seed / "tests").mkdir(parents=True)
    (seed / "tests" / "test_solution.py").write_text(TESTS)
    (seed / "solution.py").write_text(SOLUTION)
    (seed / ".fixbot.yml").write_text("gates: {lint: false, types: false}\n")
    repo = make_repo(tmp_path / "repo", source=seed)
    table = CHEATS["dict-keyed-by-the-argument-tuple"].replace(TOTAL_BUG, "    for v in values:\n")
    cheat = render_diff([FileChange("solution.py", SOLUTION, table)])
    honest = render_diff([FileChange("solution.py", SOLUTION, HONEST["the-real-fix"])])
    with ScriptedOpenAI([reply(cheat), reply(honest)]) as server:
        run = run_fixbot(repo, "--max-iterations", "2", base_url=server.base_url)
    assert run.code == 0, run.stderr[-3000:]
    first, second = run.evidence["attempts"]
    assert (first["verdict"], first["check"], second["verdict"]) == ("rejected", None, "pass")
    assert any(p.startswith("policy answers-from-tests: solution.py:2:") for p in first["problems"])
    feedback = server.requests[1]["messages"][-1]["content"]
    assert "policy answers-from-tests" in feedback
    assert "{(1, 2): 3" not in run.evidence["diff"]
