"""Escalation that resumes: interrupt(), an answer with a hint, abort, capped budgets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from fixbot.config import ResumeLimits
from fixbot.loop import FixState, initial_state
from fixbot.loop.escalation import after_human, allowable, parse_answer, resolve
from fixbot.loop.state import StateError
from tests.conftest import RunFixbot, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD, wrong

LIMITS = ResumeLimits(
    default_extra_iterations=2, max_extra_iterations=3, extra_tokens=1000, extra_seconds=60
)


def escalated(**changes: Any) -> FixState:
    state = initial_state(
        thread_id="t",
        commit="c",
        manifest={"tests/test_a.py": "x", ".fixbot.yml": "y"},
        max_iterations=2,
        token_budget=500,
        deadline=0,
    )
    return FixState(
        **{
            **state,
            "attempt": 2,
            "tokens_used": 600,
            "status": "escalated",
            "classification": "code",
            "verdict": "fail",
            **changes,
        }
    )  # type: ignore[typeddict-item]


def test_continue_grows_the_budget_by_a_capped_amount() -> None:
    update = resolve(
        escalated(),
        parse_answer({"action": "continue", "hint": "look at mean", "extra_iterations": 99}),
        LIMITS,
        100.0,
    )
    assert update["max_iterations"] == 2 + 3  # asked for 99, capped at 3
    assert update["token_budget"] == 600 + 1000
    assert update["deadline"] == 160.0
    assert update["status"] == "running" and update["verdict"] == "none"
    assert "look at mean" in update["feedback"] and update["hint"] == "look at mean"
    assert update["resumes"] == 1


def test_continue_without_a_number_uses_the_default() -> None:
    update = resolve(escalated(), parse_answer({"action": "continue"}), LIMITS, 0.0)
    assert update["max_iterations"] == 4


def test_abort_ends_the_run() -> None:
    update = resolve(
        escalated(reason="iterations"), parse_answer({"action": "abort", "by": "ann"}), LIMITS, 0.0
    )
    assert update["status"] == "aborted" and "by ann" in update["reason"]
    assert after_human(FixState(**{**escalated(), **update})) == "__end__"  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    "value",
    [
        None,
        {},
        {"action": "maybe"},
        {"action": "continue", "extra_iterations": -1},
        {"action": "continue", "extra_iterations": True},
        {"action": "continue", "allow_protected": "x"},
    ],
)
def test_malformed_answers_fail_loudly(value: object) -> None:
    with pytest.raises(StateError):
        parse_answer(value)


def test_only_named_existing_protected_files_can_be_opened() -> None:
    manifest = {"tests/test_a.py": "x", ".fixbot.yml": "y", ".github/workflows/ci.yml": "z"}
    assert allowable(["tests/test_a.py"], manifest) == ["tests/test_a.py"]
    for bad in (["tests/nope.py"], [".fixbot.yml"], [".github/workflows/ci.yml"]):
        with pytest.raises(StateError):
            allowable(bad, manifest)


pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


def test_escalate_then_resume_with_a_hint_then_fixed(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": "gates: {lint: false, types: false}\n"})
    with ScriptedOpenAI([wrong(1), wrong(2), GOOD]) as server:
        first = run_fixbot(repo, "--max-iterations", "2", base_url=server.base_url)
        assert first.code == 1
        evidence = first.evidence
        assert evidence["status"] == "escalated"
        thread = evidence["thread_id"]
        hint = [e for e in first.events if e.get("event") == "how_to_resume"]
        assert hint and f"fixbot resume {thread}" in hint[0]["command"]

        # The same fix command again reports the pending escalation and spends nothing.
        again = run_fixbot(repo, "--max-iterations", "2", base_url=server.base_url)
        assert again.code == 1 and len(server.requests) == 2

        resumed = run_fixbot(
            repo,
            base_url=server.base_url,
            command="resume",
            thread=thread,
            extra=["--hint", "the divisor is wrong", "--extra-iterations", "1"],
        )
        assert resumed.code == 0, resumed.stderr
        assert len(server.requests) == 3
        assert "the divisor is wrong" in json.dumps(server.requests[2]["messages"])
        done = resumed.evidence
        assert done["status"] == "fixed" and done["thread_id"] == thread
        assert [a["verdict"] for a in done["attempts"]] == ["fail", "fail", "pass"]
        assert done["resumes"] == 1

        # The question was answered: a second answer is refused.
        late = run_fixbot(
            repo,
            base_url=server.base_url,
            command="resume",
            thread=thread,
            extra=["--hint", "again"],
        )
        assert late.code == 2
        assert "no pending question" in late.evidence["reason"]


def test_abort_ends_an_escalated_run(tmp_path: Path, run_fixbot: RunFixbot) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": "gates: {lint: false, types: false}\n"})
    with ScriptedOpenAI([wrong(1)]) as server:
        first = run_fixbot(repo, "--max-iterations", "1", base_url=server.base_url)
        thread = first.evidence["thread_id"]
        aborted = run_fixbot(
            repo, base_url=server.base_url, command="resume", thread=thread, extra=["--abort"]
        )
    assert aborted.code == 1
    assert aborted.evidence["status"] == "aborted"
    assert len(server.requests) == 1


def test_resume_of_an_unknown_thread_is_a_usage_error(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo")
    with ScriptedOpenAI([]) as server:
        run = run_fixbot(
            repo,
            base_url=server.base_url,
            command="resume",
            thread="fix-nope",
            extra=["--hint", "x"],
        )
    assert run.code == 2
    assert "fix-nope" in run.evidence["reason"]
