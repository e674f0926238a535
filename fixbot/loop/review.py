"""The reviewer: a second model's eye on the verified diff (`review.model`), after minimize and
before finalize.

Models that are rewarded for green tests learn to special-case the tested values or to tamper
with the harness; the sandbox's pass definition catches much of it, a reviewer reading the diff
catches what it cannot see (EvilGenie and METR find an LLM judge effective on the unambiguous
cases). Its verdict is recorded in the state, the evidence and the report. Special-casing or
tampering ends the run escalated with the reviewer's reason, and nothing ships. No verdict (a
reply not in the form, an endpoint that fails, a call the budgets or the deadline refuse)
blocks nothing by itself and passes nothing: the pass is the sandbox's, a review only takes
one away. ruff's own fixes (attempt 0) are not reviewed: no model wrote them.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from fixbot import log, prompts
from fixbot.errors import ModelUnreachable
from fixbot.loop.budget import Refused, ask, prompt_tokens
from fixbot.loop.deps import Deps, Update
from fixbot.loop.state import FixState, baseline_of
from fixbot.model import Model
from fixbot.prompts import Message
from fixbot.records import REVIEW_BLOCKS, Review, ReviewVerdict

REVIEW_TOKENS = 200  # the reply: two lines
REPLY_KEPT = 1_000  # of the reviewer's reply, what the evidence keeps


def review(state: FixState, runtime: Runtime[Deps]) -> Update:
    """The reviewer's verdict on the verified diff, its tokens and cost counted; nothing when
    no reviewer is configured or the diff is ruff's own."""
    deps = runtime.context
    last = state["attempts"][-1]
    if deps.reviewer is None or last["number"] == 0:
        return {}
    found = _reviewed(state, deps, deps.reviewer, last["number"])
    if found["verdict"] == "none":
        log.get().warning("review_no_verdict", model=found["model"], why=found["reason"])
    spent = found["prompt_tokens"] + found["completion_tokens"]
    return {
        "reviews": [*state["reviews"], found],
        "tokens_used": state["tokens_used"] + spent,
        "cost_used": state["cost_used"] + found["cost_usd"],
    }


def _reviewed(state: FixState, deps: Deps, model: Model, number: int) -> Review:
    def build(room: int) -> list[Message]:
        return prompts.review_messages(baseline_of(state), state["final_diff"], room)

    def none(why: str) -> Review:
        return _review(number, model.name, "none", why)

    first = build(model.window.room(REVIEW_TOKENS))
    if state["tokens_used"] + prompt_tokens(first) + REVIEW_TOKENS > state["token_budget"]:
        return none("the token budget left cannot pay for the review")
    try:
        asked = ask(state, deps, model, build, temperature=0.0, reply_tokens=REVIEW_TOKENS)
    except ModelUnreachable as exc:
        return none(f"the reviewer could not be asked: {exc}")
    if isinstance(asked, Refused):
        return none(f"the review call was not made: {asked.reason}")
    reply = asked.reply
    verdict, reason = prompts.read_verdict(reply.text)
    return _review(
        number,
        model.name,
        verdict,
        reason,
        reply=reply.text[:REPLY_KEPT],
        tokens=(reply.prompt_tokens, reply.completion_tokens),
        cost_usd=asked.cost_usd,
    )


def _review(
    number: int,
    model: str,
    verdict: ReviewVerdict,
    reason: str,
    *,
    reply: str = "",
    tokens: tuple[int, int] = (0, 0),
    cost_usd: float = 0.0,
) -> Review:
    return Review(
        attempt=number,
        model=model,
        verdict=verdict,
        reason=reason,
        reply=reply,
        prompt_tokens=tokens[0],
        completion_tokens=tokens[1],
        cost_usd=cost_usd,
    )


def blocking(state: FixState) -> Review | None:
    """The review that blocks the verified diff in flight (the last review, of the last
    attempt, while its pass stands), when it found special-casing or tampering; None otherwise
    (after an answer, the next attempt is judged afresh)."""
    if not state["reviews"] or not state["attempts"] or state["verdict"] != "pass":
        return None
    last = state["reviews"][-1]
    if last["attempt"] != state["attempts"][-1]["number"] or last["verdict"] not in REVIEW_BLOCKS:
        return None
    return last
