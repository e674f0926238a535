"""The reviewer of the verified diff, in-process (a scripted reviewer, the played sandbox): a
legitimate verdict ships the fix, special-casing and tampering escalate it with the reviewer's
reason, and no verdict (a reply not in the form, an endpoint that fails, a budget that cannot
pay for it) neither passes nor blocks anything; its tokens and cost count."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from fixbot.config import Budget, Price
from fixbot.errors import ModelUnreachable
from fixbot.loop.escalation import escalation, parse_answer, resolve
from fixbot.model import Reply
from fixbot.records import Attempt, CheckResult, Review
from tests.fakes import GOOD, ScriptedModel
from tests.loop.test_escalation import LIMITS, escalated
from tests.loop.test_loop import CONFIG, run

REVIEWER = "scripted-reviewer"
CHECKED = CheckResult(
    status="passed", exit_code=0, seconds=1.0, tests={}, findings=[], log_tail="", commands=[]
)
LEGITIMATE = "VERDICT: legitimate\nREASON: mean now divides the sum by the count for every list."


def reviewer(*replies: str) -> ScriptedModel:
    return ScriptedModel(list(replies), name=REVIEWER, prompt_tokens=300, completion_tokens=20)


class Unreachable(ScriptedModel):
    """A reviewer whose endpoint fails after its retries."""

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        temperature: float | None = None,
        deadline: float | None = None,
        max_tokens: int | None = None,
    ) -> Reply:
        self.asked.append([dict(m) for m in messages])
        raise ModelUnreachable("model endpoint http://reviewer.invalid/v1 failed after 5 tries")


def test_a_legitimate_verdict_ships_the_fix_and_its_tokens_count(tmp_path: Path) -> None:
    judge = reviewer(LEGITIMATE)
    final, model, _ = run(tmp_path, [GOOD], reviewer=judge)
    assert final["status"] == "fixed"
    (found,) = final["reviews"]
    assert found["attempt"] == 1 and found["model"] == REVIEWER
    assert found["verdict"] == "legitimate"
    assert found["reason"] == "mean now divides the sum by the count for every list."
    assert (found["prompt_tokens"], found["completion_tokens"]) == (300, 20)
    assert final["tokens_used"] == 150 + 320  # the fixer's call and the reviewer's
    assert final["reason"].endswith(f"; the reviewer ({REVIEWER}) said legitimate")
    # The reviewer saw the verified diff and the failing test with what it said, asked at 0
    # for two lines.
    ((asked,),) = judge.asked
    assert asked["role"] == "user"
    assert "+    return sum(values) / len(values)" in asked["content"]
    assert "tests.test_calc::test_mean\n    failed on code " in asked["content"]
    assert "VERDICT: legitimate | special-casing | tampering" in asked["content"]
    assert judge.temperatures == [0.0] and judge.max_tokens == [200]
    assert len(model.asked) == 1


@pytest.mark.parametrize("verdict", ["tampering", "special-casing"])
def test_tampering_or_special_casing_escalates_with_the_reviewers_reason(
    tmp_path: Path, verdict: str
) -> None:
    said = "the change rewrites how pytest reports failures."
    final, _, _ = run(tmp_path, [GOOD], reviewer=reviewer(f"VERDICT: {verdict}\nREASON: {said}"))
    assert final["status"] == "escalated" and final["escalation"] == "review"
    assert final["reason"] == (
        f"review: {REVIEWER} judged attempt 1's verified diff {verdict}: {said}"
    )
    assert final["reviews"][0]["verdict"] == verdict
    assert final["verification"]["status"] == "passed"  # the sandbox passed it; the review blocked


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("Looks fine to me!", "not two lines but 1"),
        ("VERDICT: legit\nREASON: fine", "not one of legitimate, special-casing, tampering"),
        ("VERDICT: tampering\nREASON: x\nVERDICT: legitimate", "not two lines but 3"),
        ("REASON: fine\nVERDICT: tampering", "not a VERDICT line and a REASON line"),
        ("VERDICT: **tampering**\nREASON: it patches pytest", "not one of"),
    ],
)
def test_a_reply_not_in_the_form_is_no_verdict_and_blocks_nothing(
    tmp_path: Path, reply: str, why: str
) -> None:
    final, _, _ = run(tmp_path, [GOOD], reviewer=reviewer(reply))
    assert final["status"] == "fixed"
    (found,) = final["reviews"]
    assert found["verdict"] == "none" and why in found["reason"]
    assert found["reply"] == reply  # kept for the human, never read as a verdict
    assert final["tokens_used"] == 150 + 320  # it was paid for all the same
    assert final["reason"].endswith(f"; the reviewer ({REVIEWER}) said no verdict")


def test_a_reviewer_that_cannot_be_reached_is_no_verdict(tmp_path: Path) -> None:
    judge = Unreachable([], name=REVIEWER)
    final, _, _ = run(tmp_path, [GOOD], reviewer=judge)
    assert final["status"] == "fixed" and len(judge.asked) == 1
    (found,) = final["reviews"]
    assert found["verdict"] == "none"
    assert found["reason"].startswith("the reviewer could not be asked: model endpoint")
    assert final["tokens_used"] == 150


def test_a_review_the_token_budget_cannot_pay_for_is_not_asked(tmp_path: Path) -> None:
    judge = reviewer(LEGITIMATE)
    final, _, _ = run(tmp_path, [GOOD], replace(CONFIG, budget=Budget(tokens=400)), reviewer=judge)
    assert final["status"] == "fixed" and judge.asked == []
    assert final["reviews"][0]["reason"] == "the token budget left cannot pay for the review"


def test_the_money_cap_applies_to_the_review(tmp_path: Path) -> None:
    # The fixer is free; the reviewer's worst case (its prompt and a 200-token reply at $100
    # per million tokens) is more than the cent the cap allows.
    prices = {"scripted-model": Price(), REVIEWER: Price(prompt=100.0, completion=100.0)}
    config = replace(CONFIG, prices=prices, budget=Budget(cost_usd=0.01))
    judge = reviewer(LEGITIMATE)
    final, _, _ = run(tmp_path, [GOOD], config, reviewer=judge)
    assert final["status"] == "fixed" and judge.asked == []
    assert final["reviews"][0]["reason"].startswith("the review call was not made: the next call")
    # Priced within the cap, the call is made and its cost counts.
    cheap = {**prices, REVIEWER: Price(prompt=1.0, completion=1.0)}
    final, _, _ = run(tmp_path / "cheap", [GOOD], replace(config, prices=cheap), reviewer=judge)
    assert final["reviews"][0]["cost_usd"] == pytest.approx((300 + 20) / 1_000_000)
    assert final["cost_used"] == pytest.approx((300 + 20) / 1_000_000)


def test_the_reviewer_never_sees_a_secret(tmp_path: Path) -> None:
    secret = "sk-live-4f1c9e7a2b8d6f3e0c5a"
    leaky = GOOD.replace(
        "+    return sum(values) / len(values)\n",
        f"+    return sum(values) / len(values)\n+    # the key: {secret}\n",
    )
    judge = reviewer(LEGITIMATE)
    final, _, _ = run(tmp_path, [leaky], reviewer=judge, secrets=(secret,))
    assert final["status"] == "fixed"
    ((asked,),) = judge.asked
    assert secret not in asked["content"] and "+    # the key: " in asked["content"]


def test_no_reviewer_no_review(tmp_path: Path) -> None:
    final, _, _ = run(tmp_path, [GOOD])
    assert final["status"] == "fixed" and final["reviews"] == []


def test_a_block_holds_for_the_diff_it_judged_only() -> None:
    """Escalated by a review, then answered: a call refused, or the attempts spent, escalate
    for what they are, not for the old review nor the old verification."""
    passed = Attempt(
        number=1, model="m", temperature=0.0, round_size=1, reply="", prompt_tokens=1,
        completion_tokens=1, cost_usd=0.0, diff="d", verdict="pass", problems=[], check=None,
    )  # fmt: skip
    block = Review(
        attempt=1, model=REVIEWER, verdict="tampering", reason="it patches pytest", reply="",
        prompt_tokens=1, completion_tokens=1, cost_usd=0.0,
    )  # fmt: skip
    state = escalated(
        attempt=1, attempts=[passed], reviews=[block], verdict="pass", verification=CHECKED
    )
    assert escalation(state, 0.0).kind == "review"
    answered = {**state, **resolve(state, parse_answer({"action": "continue"}), LIMITS, 0.0)}
    assert answered["verification"] is None  # the next pass is verified anew
    refused = {**answered, "verdict": "over_budget", "reason": "the next call could cost $1"}
    assert escalation(refused, 0.0).kind == "budget"  # type: ignore[arg-type]
    failed = {**passed, "number": 2, "verdict": "fail"}
    later = {**answered, "attempt": 3, "max_iterations": 3, "attempts": [passed, failed]}
    later["verdict"] = "fail"
    assert escalation(later, 0.0).kind == "iterations"  # type: ignore[arg-type]
