"""Parallel candidates: after the first failed attempt, a round of K attempts at once.

`reflect` sizes the round (`budget.round_size`: what the attempts and budgets left can pay for);
the router sends one `candidate` per slot (LangGraph `Send`), each asking at its own
temperature, then screening its reply and running the checks on a fresh workspace like any
attempt; `pick` gathers the round, decides every candidate by the pass definition, and keeps
the first pass to finish, which goes on to `verify` like any pass.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from fixbot.loop.attempts import checks_over, decide, new_attempt, record, screened
from fixbot.loop.budget import Refused, ask, model_for
from fixbot.loop.deps import Deps, Update
from fixbot.loop.plan import builder, plan_for
from fixbot.loop.state import Candidate, FixState, StateError
from fixbot.records import Attempt


class Slot(FixState):
    """A candidate's input: the state as the round began, and its place in the round."""

    slot: int


def candidate(state: Slot, runtime: Runtime[Deps]) -> Update:
    """One model call at this slot's temperature, its reply screened, its checks run."""
    deps = runtime.context
    slot = state["slot"]
    temperatures = deps.config.parallel.temperatures
    temperature = temperatures[slot % len(temperatures)]
    number = state["attempt"] + slot + 1
    model = model_for(deps, number - 1)
    plan = plan_for(state, deps, model, number, temperature)
    build = builder(state, runtime, plan.ask)
    asked = ask(state, deps, model, build, temperature, plan.reply_tokens)
    if isinstance(asked, Refused):
        return {"candidates": [_gathered(slot, None, asked.reason, deps)]}
    attempt = new_attempt(
        number, asked.reply, asked.cost_usd, temperature, plan.ask.kind, plan.ask.asked
    )
    found = screened(attempt, state, deps)
    if not found.diff:
        refused: Attempt = {
            **attempt,
            "problems": found.problems,
            "notes": found.notes,
            "verdict": "rejected",
        }
        return {"candidates": [_gathered(slot, refused, "", deps)]}
    result, tampered = checks_over(
        deps,
        found.diff,
        allowed=state["allowed_protected"],
        baseline=state["baseline"],
        mode="first",
    )
    ran: Attempt = {
        **attempt,
        "diff": found.diff,
        "notes": found.notes,
        "verdict": "applied",
        "check": result,
        "problems": tampered,
    }
    return {"candidates": [_gathered(slot, ran, "", deps)]}


def _gathered(slot: int, attempt: Attempt | None, refused: str, deps: Deps) -> Candidate:
    return Candidate(slot=slot, attempt=attempt, refused=refused, finished=deps.clock())


def pick(state: FixState, runtime: Runtime[Deps]) -> Update:
    """The round decided: every candidate recorded as an attempt (numbered in the order they are
    listed), the first pass to finish listed last so that verify takes it; the pool emptied."""
    baseline = state["baseline"]
    if baseline is None:
        raise StateError("pick ran before the baseline")
    pool = sorted(state["candidates"], key=_slot)
    decided = [(c, decide(baseline, c["attempt"])) for c in pool if c["attempt"]]
    if not decided:
        reason = pool[0]["refused"] if pool else "no candidate was asked"
        return {"candidates": [], "verdict": "over_budget", "reason": reason}
    passed = sorted((c for c, a in decided if a["verdict"] == "pass"), key=lambda c: c["finished"])
    winner = passed[0]["slot"] if passed else None
    ordered = [a for c, a in decided if c["slot"] != winner]
    ordered += [a for c, a in decided if c["slot"] == winner]
    numbered = [
        Attempt(**{**a, "number": state["attempt"] + i, "round_size": len(ordered)})
        for i, a in enumerate(ordered, 1)
    ]
    spent: dict[str, Any] = {
        "tokens_used": state["tokens_used"]
        + sum(a["prompt_tokens"] + a["completion_tokens"] for a in numbered),
        "cost_used": state["cost_used"] + sum(a["cost_usd"] for a in numbered),
        "attempt": state["attempt"] + len(numbered),
    }
    return {"candidates": [], **spent, **record(state, runtime.context, numbered)}


def _slot(gathered: Candidate) -> int:
    return gathered["slot"]
