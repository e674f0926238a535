"""The reviewer end to end through `fixbot fix` (real CLI, git, bubblewrap, the openai SDK over a
socket): one scripted server answers both the fixer and the reviewer, told apart by the model
each request names. A verified fix the reviewer finds tampering escalates and ships nothing;
one it finds legitimate ships, the review in the evidence and the report, its tokens counted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import API_KEY, RunFixbot, make_repo
from tests.fake_openai import SCRIPTED_MODEL, ScriptedOpenAI
from tests.fakes import GOOD

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

REVIEWER = "scripted-reviewer"
CONFIG = (
    "checks:\n  - {name: tests, run: python -m pytest}\n"
    "verification: {minimize: false}\n"
    f"review: {{model: {REVIEWER}}}\n"
)


def by_model(reviewer_says: str) -> Any:
    """A script entry that answers as the fixer or as the reviewer, by the request's model."""

    def answer(body: dict[str, Any]) -> str:
        return reviewer_says if body["model"] == REVIEWER else GOOD

    return answer


def test_a_fix_the_reviewer_finds_tampering_escalates_and_ships_nothing(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    said = "the change edits how pytest collects the failing test."
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": CONFIG})
    answer = by_model(f"VERDICT: tampering\nREASON: {said}")
    with ScriptedOpenAI([answer, answer]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 1, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "escalated" and evidence["escalation"] == "review"
    assert evidence["reason"] == (
        f"review: {REVIEWER} judged attempt 1's verified diff tampering: {said}"
    )
    assert evidence["verification"]["status"] == "passed"  # the sandbox passed it
    assert evidence["diff"] == "" and not (run.out / "fix.diff").exists()  # nothing ships
    (found,) = evidence["reviews"]
    assert (found["attempt"], found["model"], found["verdict"]) == (1, REVIEWER, "tampering")
    # One request each, told apart by the model; the reviewer saw the verified diff and the
    # failing tests with where each failed, and no secret.
    fixer, reviewer = server.requests
    assert fixer["model"] == SCRIPTED_MODEL and reviewer["model"] == REVIEWER
    asked = reviewer["messages"][-1]["content"]
    assert "+    return sum(values) / len(values)" in asked
    assert "failed at tests/test_calc.py:9: assert mean([1.0, 2.0, 3.0]) == 2.0" in asked
    assert API_KEY not in json.dumps(server.requests)
    report = (run.out / "report.md").read_text()
    assert "### Review" in report and "| 1 | scripted-reviewer | tampering |" in report
    assert json.loads(run.stdout)["escalation"] == "review"


def test_a_fix_the_reviewer_finds_legitimate_ships_with_the_review_counted(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": CONFIG})
    answer = by_model("VERDICT: legitimate\nREASON: mean divides by the count for every list.")
    with ScriptedOpenAI([answer, answer]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    evidence = run.evidence
    assert evidence["status"] == "fixed"
    assert evidence["reason"].endswith(f"; the reviewer ({REVIEWER}) said legitimate")
    assert "return sum(values) / len(values)" in (run.out / "fix.diff").read_text()
    (found,) = evidence["reviews"]
    assert found["verdict"] == "legitimate" and found["prompt_tokens"] > 0
    attempts = sum(a["prompt_tokens"] + a["completion_tokens"] for a in evidence["attempts"])
    review = found["prompt_tokens"] + found["completion_tokens"]
    assert evidence["tokens"]["total"] == attempts + review
    assert "| 1 | scripted-reviewer | legitimate |" in (run.out / "report.md").read_text()
