"""Stop early when stuck: repeats, stagnation and a model giving up, unit and end to end."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixbot.loop.stuck import gives_up, similarity, strike
from fixbot.records import Attempt, CheckResult
from tests.conftest import RunFixbot, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, wrong


def attempt(
    number: int, diff: str = "", reply: str = "", failing: dict[str, str] | None = None
) -> Attempt:
    check: CheckResult | None = None
    if failing is not None:
        check = CheckResult(
            status="tests_failed",
            exit_code=1,
            seconds=0.1,
            findings=[],
            log_tail="",
            commands=[],
            tests={
                t: {"outcome": "failed", "message": m, "detail": ""} for t, m in failing.items()
            },
        )
    return Attempt(
        number=number,
        model="m",
        reply=reply or diff,
        prompt_tokens=1,
        completion_tokens=1,
        diff=diff,
        verdict="fail",
        problems=[],
        check=check,
    )


D1 = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b = 1\n+b = 2\n c\n"
D1_MOVED = D1.replace("@@ -1,3 +1,3 @@", "@@ -40,3 +40,3 @@")
D2 = (
    "--- a/y.py\n+++ b/y.py\n@@ -5,3 +5,4 @@\n def f(values):\n-    return sum(values)\n"
    "+    if not values:\n+        raise ValueError\n+    return sum(values) / len(values)\n"
)


def test_the_same_diff_at_other_line_numbers_is_a_repeat() -> None:
    assert similarity(attempt(1, D1), attempt(2, D1_MOVED)) == 1.0
    found = strike([attempt(1, D1), attempt(2, D1_MOVED)], 0.85, 3)
    assert found is not None and "repeats attempt 1" in found.reason and not found.final


def test_a_different_diff_is_not_a_repeat() -> None:
    assert similarity(attempt(1, D1), attempt(2, D2)) < 0.85
    assert strike([attempt(1, D1), attempt(2, D2)], 0.85, 3) is None


@pytest.mark.parametrize("threshold", [0.5, 0.99])
def test_the_threshold_is_honoured(threshold: float) -> None:
    near = D1.replace("b = 2", "b = 3")
    score = similarity(attempt(1, D1), attempt(2, near))
    found = strike([attempt(1, D1), attempt(2, near)], threshold, 3)
    assert (found is not None) == (score >= threshold)


def test_stagnation_needs_k_attempts_with_the_same_failures() -> None:
    same = {"t::a": "assert 1 == 2"}
    fixes = ["+return a + b", "+raise NotImplementedError('no')", "+print(values); return 0"]
    runs = [attempt(i, fixes[i - 1], failing=same) for i in range(1, 4)]
    assert strike(runs[:2], 0.99, 3) is None
    found = strike(runs, 0.99, 3)
    assert found is not None and "same tests failed with the same errors" in found.reason
    changed = [*runs[:2], attempt(3, "+x = [1]", failing={"t::a": "assert 1 == 3"})]
    assert strike(changed, 0.99, 3) is None


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("I cannot fix this without changing the tests.", True),
        ("Unfortunately I am unable to fix the failure.", True),
        ("This can't be fixed in the code under test.", True),
        ("The fix: divide by the count. I can fix it like this", False),
    ],
)
def test_giving_up(reply: str, expected: bool) -> None:
    assert gives_up(attempt(1, reply=reply)) is expected
    found = strike([attempt(1, reply=reply)], 0.85, 3)
    assert (found is not None and found.final) is expected


pytestmark_e2e = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
QUICK = {".fixbot.yml": "gates: {lint: false, types: false}\n"}


@pytestmark_e2e
def test_a_model_repeating_the_same_wrong_diff_stops_early(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo", QUICK)
    with ScriptedOpenAI([wrong(1)] * 10) as server:
        run = run_fixbot(repo, "--max-iterations", "8", base_url=server.base_url)
    assert run.code == 1
    assert len(server.requests) == 3  # the second repeat escalates, well before 8
    assert run.evidence["escalation"] == "stuck"
    assert run.evidence["reason"].startswith("stuck: attempt 3 repeats attempt 2")
    warning = server.requests[2]["messages"][-1]["content"]
    assert "You are repeating yourself" in warning


@pytestmark_e2e
def test_one_warning_then_a_new_idea_is_not_stuck(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo", QUICK)
    with ScriptedOpenAI([wrong(1), wrong(1), GOOD]) as server:
        run = run_fixbot(repo, "--max-iterations", "5", base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert [a["verdict"] for a in run.evidence["attempts"]] == ["fail", "fail", "pass"]


@pytestmark_e2e
def test_a_model_that_gives_up_escalates_at_once(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo", QUICK)
    with ScriptedOpenAI(["I cannot fix this: the test itself is wrong."] * 3) as server:
        run = run_fixbot(repo, "--max-iterations", "5", base_url=server.base_url)
    assert run.code == 1
    assert len(server.requests) == 1
    assert run.evidence["reason"] == "stuck: the model said it cannot fix this"
