"""The pure routers and the state validation at graph entry: every boundary, as a table."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest

from fixbot.commands import CheckSpec
from fixbot.loop import FixState, initial_state, recorded_checks, validate
from fixbot.loop.graph import (
    after_apply,
    after_autofix,
    after_baseline,
    after_generate,
    after_pick,
    after_reflect,
    after_review,
    after_verify,
    recursion_limit,
    route,
)
from fixbot.loop.state import StateError
from fixbot.records import Attempt, Review

NOW = 1_000_000.0


ATTEMPT_1 = Attempt(
    number=1, model="m", temperature=0.0, round_size=1, reply="", prompt_tokens=1,
    completion_tokens=1, cost_usd=0.0, diff="d", verdict="pass", problems=[], check=None,
)  # fmt: skip


def reviewed(number: int, verdict: Any) -> Review:
    return Review(
        attempt=number, model="r", verdict=verdict, reason="why", reply="", prompt_tokens=1,
        completion_tokens=1, cost_usd=0.0,
    )  # fmt: skip


def state(**changes: Any) -> FixState:
    base = initial_state(
        thread_id="t",
        commit="c" * 40,
        manifest={},
        max_iterations=4,
        token_budget=1000,
        deadline=NOW + 60,
    )
    return FixState(**{**base, **changes})  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    ("changes", "now", "expected"),
    [
        ({"verdict": "pass"}, NOW, "verify"),
        # A pass is verified even on the last attempt and with the budget spent.
        ({"verdict": "pass", "attempt": 4, "tokens_used": 5000}, NOW + 999, "verify"),
        ({"verdict": "fail", "attempt": 1}, NOW, "reflect"),
        ({"verdict": "rejected", "attempt": 1}, NOW, "reflect"),
        ({"verdict": "fail", "attempt": 3}, NOW, "reflect"),
        ({"verdict": "fail", "attempt": 4}, NOW, "escalate"),
        ({"verdict": "rejected", "attempt": 4}, NOW, "escalate"),
        ({"verdict": "fail", "attempt": 5}, NOW, "escalate"),
        ({"verdict": "fail", "attempt": 1, "tokens_used": 999}, NOW, "reflect"),
        ({"verdict": "fail", "attempt": 1, "tokens_used": 1000}, NOW, "escalate"),
        ({"verdict": "fail", "attempt": 1}, NOW + 59.9, "reflect"),
        ({"verdict": "fail", "attempt": 1}, NOW + 60, "escalate"),
        ({"verdict": "fail", "attempt": 0, "max_iterations": 1}, NOW, "reflect"),
        ({"verdict": "fail", "attempt": 1, "max_iterations": 1}, NOW, "escalate"),
        ({"verdict": "fail", "attempt": 1, "strikes": 1}, NOW, "reflect"),
        ({"verdict": "rejected", "attempt": 1, "strikes": 2}, NOW, "escalate"),
        ({"verdict": "pass", "attempt": 1, "strikes": 2}, NOW, "verify"),
        # The money cap: 0 is none; spent up to it escalates, a pass is still verified.
        ({"verdict": "fail", "attempt": 1, "cost_used": 9.0, "cost_budget": 0.0}, NOW, "reflect"),
        ({"verdict": "fail", "attempt": 1, "cost_used": 0.49, "cost_budget": 0.5}, NOW, "reflect"),
        ({"verdict": "fail", "attempt": 1, "cost_used": 0.5, "cost_budget": 0.5}, NOW, "escalate"),
        ({"verdict": "pass", "attempt": 1, "cost_used": 0.7, "cost_budget": 0.5}, NOW, "verify"),
        # ruff's own attempt (number 0) failing leaves every model attempt.
        ({"verdict": "fail", "attempt": 0}, NOW, "reflect"),
    ],
)
def test_route(changes: dict[str, Any], now: float, expected: str) -> None:
    assert route(state(**changes), now) == expected


def test_after_baseline_refuses_an_unclassified_failure() -> None:
    with pytest.raises(StateError, match="classification"):
        after_baseline(state(status="running"))


@pytest.mark.parametrize("verdict", ["none", "applied", "bogus"])
def test_route_refuses_a_verdict_it_cannot_route(verdict: str) -> None:
    with pytest.raises(StateError, match="verdict"):
        route(state(verdict=verdict), NOW)


@pytest.mark.parametrize(
    ("router", "changes", "expected"),
    [
        (after_baseline, {"status": "already_passing"}, "__end__"),
        (after_baseline, {"status": "running", "classification": "code"}, "autofix"),
        (after_baseline, {"status": "running", "classification": "flaky"}, "escalate"),
        (after_baseline, {"status": "running", "classification": "environment"}, "escalate"),
        (after_autofix, {"verdict": "applied"}, "check"),
        (after_autofix, {"verdict": "none"}, "generate"),
        (after_generate, {"verdict": "none"}, "apply"),
        (after_generate, {"verdict": "over_budget"}, "escalate"),
        (after_apply, {"verdict": "applied"}, "check"),
        (after_apply, {"verdict": "rejected"}, "judge"),
        (after_verify, {"verdict": "pass"}, "minimize"),
        (after_verify, {"verdict": "fail"}, "escalate"),
        (after_review, {"verdict": "pass", "attempts": [ATTEMPT_1]}, "finalize"),  # no reviewer
        (
            after_review,
            {"verdict": "pass", "attempts": [ATTEMPT_1], "reviews": [reviewed(1, "none")]},
            "finalize",
        ),
        (
            after_review,
            {"verdict": "pass", "attempts": [ATTEMPT_1], "reviews": [reviewed(1, "legitimate")]},
            "finalize",
        ),
        (
            after_review,
            {"verdict": "pass", "attempts": [ATTEMPT_1], "reviews": [reviewed(1, "tampering")]},
            "escalate",
        ),
        (
            after_review,
            {
                "verdict": "pass",
                "attempts": [ATTEMPT_1],
                "reviews": [reviewed(1, "special-casing")],
            },
            "escalate",
        ),
    ],
)
def test_small_routers(router: Any, changes: dict[str, Any], expected: str) -> None:
    assert router(state(**changes)) == expected


@pytest.mark.parametrize("slots", [1, 2, 3, 8])
def test_after_reflect_sends_one_candidate_per_slot(slots: int) -> None:
    sent = after_reflect(state(slots=slots, attempt=1))
    if slots == 1:
        assert sent == "generate"
        return
    assert isinstance(sent, list)
    assert [(s.node, s.arg["slot"], s.arg["attempt"]) for s in sent] == [
        ("candidate", slot, 1) for slot in range(slots)
    ]


@pytest.mark.parametrize(
    ("changes", "now", "expected"),
    [
        # Every call of the round refused (the deadline, a budget): escalate.
        ({"verdict": "over_budget", "attempt": 1}, NOW, "escalate"),
        # Otherwise exactly as after judge.
        ({"verdict": "pass", "attempt": 4}, NOW, "verify"),
        ({"verdict": "fail", "attempt": 3}, NOW, "reflect"),
        ({"verdict": "rejected", "attempt": 4}, NOW, "escalate"),
        ({"verdict": "fail", "attempt": 2}, NOW + 60, "escalate"),
    ],
)
def test_after_pick(changes: dict[str, Any], now: float, expected: str) -> None:
    assert after_pick(state(**changes), now) == expected


def test_initial_state_is_valid_and_agreed() -> None:
    start = state()
    validate(start)
    assert (start["attempt"], start["verdict"], start["status"]) == (0, "none", "running")
    assert start["tokens_used"] == 0
    assert (start["slots"], start["candidates"]) == (1, [])


@pytest.mark.parametrize(
    "field",
    [
        "attempt",
        "verdict",
        "max_iterations",
        "deadline",
        "status",
        "classification",
        "strikes",
        "cost_used",
        "cost_budget",
        "slots",
    ],
)
def test_missing_routing_field_fails_loudly(field: str) -> None:
    broken = dict(state())
    del broken[field]
    with pytest.raises(StateError, match=field):
        validate(broken)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("attempt", "1"),
        ("attempt", True),
        ("attempt", None),
        ("max_iterations", 0),
        ("tokens_used", 1.5),
        ("cost_used", "0.1"),
        ("cost_budget", None),
        ("deadline", "soon"),
        ("verdict", "maybe"),
        ("verdict", None),
        ("status", "done"),
        ("classification", "weird"),
        ("classification", None),
        ("slots", 0),
        ("slots", "3"),
        ("slots", None),
    ],
)
def test_ill_typed_routing_field_fails_loudly(field: str, value: Any) -> None:
    with pytest.raises(StateError):
        validate({**state(), field: value})


def test_the_recorded_checks_come_back_as_checks() -> None:
    spec = CheckSpec("lint", "ruff check .", "ruff", gate=True)
    assert recorded_checks(state()) == ()  # none recorded: the config's apply
    older = {k: v for k, v in state().items() if k != "checks"}  # checkpointed before them
    validate(older)  # still resumable
    assert recorded_checks(older) == ()
    assert recorded_checks({**state(), "checks": [asdict(spec)]}) == (spec,)


@pytest.mark.parametrize("checks", [[{"name": "lint"}], [{"bogus": 1}], ["ruff check ."]])
def test_recorded_checks_that_are_not_checks_fail_loudly(checks: list[Any]) -> None:
    with pytest.raises(StateError, match="'checks' is not a list of checks"):
        recorded_checks({**state(), "checks": checks})


@pytest.mark.parametrize("iterations", [1, 4, 50])
def test_recursion_limit_is_a_backstop_above_the_longest_run(iterations: int) -> None:
    # baseline, autofix, ruff's own attempt (check, judge, reflect), then (generate, apply,
    # check, judge, reflect) per attempt, then verify, minimize, finalize.
    longest = 2 + 3 + 5 * iterations + 3
    assert recursion_limit(iterations) > longest
