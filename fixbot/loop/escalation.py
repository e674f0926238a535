"""Escalation to a human, the question it asks, and the answer that resumes the run.

The escalate node records the outcome; await_human then pauses the run with interrupt(),
its state checkpointed under the thread id. An answer arrives as Command(resume=...):
abort ends the run, anything else continues it with the hint as the next critique and a
capped amount of extra budget. No answer can grant an unlimited budget.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from fixbot import prompts
from fixbot.config import ResumeLimits
from fixbot.loop.budget import Limit, limit_reached
from fixbot.loop.deps import Deps, Update
from fixbot.loop.review import blocking
from fixbot.loop.state import FixState, StateError
from fixbot.screen import never_editable


class Answer(TypedDict, total=False):
    action: Literal["continue", "abort"]
    hint: str
    extra_iterations: int
    allow_protected: list[str]
    by: str


def escalate(state: FixState, runtime: Runtime[Deps]) -> Update:
    found = escalation(state, runtime.context.clock())
    return {
        "status": "escalated",
        "escalation": found.kind,
        "reason": found.reason,
        "escalated_at": [*state["escalated_at"], state["attempt"]],
    }


def escalation(state: FixState, now: float) -> Limit:
    """Why the run escalates: a failure fixbot does not fix, a verification that did not hold,
    a reviewer's block, a call the budget refused, or the limit the router saw
    (`limit_reached`)."""
    if state["classification"] == "flaky":
        return Limit("flaky", state["reason"])
    if state["classification"] == "environment":
        return Limit("environment", state["reason"])
    blocked = blocking(state)
    if blocked is not None:
        return Limit(
            "review",
            f"review: {blocked['model']} judged attempt {blocked['attempt']}'s verified diff "
            f"{blocked['verdict']}: {blocked['reason']}",
        )
    if state["verification"] is not None and state["verdict"] == "fail":
        return Limit("verification", f"the final verification failed: {state['reason']}")
    if state["verdict"] == "over_budget":
        return Limit("budget", f"budget: {state['reason']}")
    found = limit_reached(state, now)
    if found is None:
        raise StateError("escalate reached with no limit reached and nothing refused")
    return found


def question(state: FixState) -> dict[str, Any]:
    """What the human is shown: every attempt in brief, and what they can answer."""
    return {
        "thread_id": state["thread_id"],
        "reason": state["reason"],
        "attempts": [
            {
                "number": a["number"],
                "verdict": a["verdict"],
                "problems": a["problems"][:3],
                "diff_lines": len(a["diff"].splitlines()),
            }
            for a in state["attempts"]
        ],
        "question": (
            "fixbot could not fix this on its own. Answer with a hint (where is the bug?), "
            "more attempts, permission to edit one named protected file, or abort."
        ),
    }


def await_human(state: FixState, runtime: Runtime[Deps]) -> Update:
    answer = parse_answer(interrupt(question(state)))
    return resolve(state, answer, runtime.context.config.resume, runtime.context.clock())


def parse_answer(value: object) -> Answer:
    """A resume value, checked: a malformed answer is a bug in whoever sent it."""
    if not isinstance(value, Mapping) or value.get("action") not in ("continue", "abort"):
        raise StateError(f"a resume answer needs action 'continue' or 'abort', got {value!r}")
    extra = value.get("extra_iterations", 0)
    if isinstance(extra, bool) or not isinstance(extra, int) or extra < 0:
        raise StateError(f"extra_iterations must be a non-negative integer, got {extra!r}")
    allowed = value.get("allow_protected", [])
    if not isinstance(allowed, list) or not all(isinstance(p, str) for p in allowed):
        raise StateError("allow_protected must be a list of paths")
    return Answer(
        action=value["action"],
        hint=str(value.get("hint", "")),
        extra_iterations=extra,
        allow_protected=list(allowed),
        by=str(value.get("by", "")),
    )


def resolve(state: FixState, answer: Answer, limits: ResumeLimits, now: float) -> Update:
    """The state change an answer makes (pure)."""
    who = f" by {answer['by']}" if answer.get("by") else ""
    if answer["action"] == "abort":
        return {"status": "aborted", "reason": f"aborted{who} after: {state['reason']}"}
    extra = min(
        answer.get("extra_iterations") or limits.default_extra_iterations,
        limits.max_extra_iterations,
    )
    allowed = allowable(answer.get("allow_protected", []), state["manifest"])
    hint = answer.get("hint", "")
    return {
        "status": "running",
        "escalation": "",
        "classification": "code",
        "strikes": 0,
        "stuck_reason": "",
        "verdict": "none",
        "verification": None,  # of the diff before the answer: the next pass is verified anew
        "max_iterations": state["attempt"] + extra,
        "token_budget": max(state["token_budget"], state["tokens_used"]) + limits.extra_tokens,
        # A money cap grows by its capped amount too (no cap stays no cap).
        "cost_budget": (
            max(state["cost_budget"], state["cost_used"]) + limits.extra_cost_usd
            if state["cost_budget"]
            else 0.0
        ),
        "deadline": now + limits.extra_seconds,
        "hint": hint,
        "feedback": prompts.resume_note(hint, allowed, state["feedback"]),
        "allowed_protected": sorted({*state["allowed_protected"], *allowed}),
        "resumes": state["resumes"] + 1,
    }


def allowable(paths: list[str], manifest: Mapping[str, str]) -> list[str]:
    """The named protected files a human may open to edits: existing, and never CI or config."""
    for path in paths:
        if path not in manifest:
            raise StateError(f"{path!r} is not a protected file of this snapshot")
        if never_editable(path):
            raise StateError(f"{path!r} can never be opened to edits")
    return sorted(set(paths))


def after_human(state: FixState) -> Literal["generate", "__end__"]:
    if state["status"] == "running":
        return "generate"
    if state["status"] == "aborted":
        return "__end__"
    raise StateError(f"after_human() reached with status {state['status']!r}")
