"""The graph's nodes. Each reads state, does one thing, and returns the fields it changed.

Dependencies (model, sandbox, snapshot, config) arrive through the runtime context (Deps),
never through state, so checkpoints hold only data and never a secret.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from fixbot import prompts
from fixbot.checks import (
    AUTOFIX_MODEL,
    as_rerun,
    classify,
    generated_paths,
    imports_checked,
    limits_for,
    network_probe,
    reader,
    require_completed,
    ruff_diff,
    ruff_failing,
    with_quarantine,
)
from fixbot.config import checks_of
from fixbot.loop import lessons
from fixbot.loop.attempts import checks_over, decide, new_attempt, record, screened
from fixbot.loop.budget import Asked, Refused, ask, model_for, prompt_tokens, round_size
from fixbot.loop.deps import Deps, Update
from fixbot.loop.plan import builder, messages_for, plan_for
from fixbot.loop.state import FixState, StateError, baseline_of
from fixbot.loop.verification import further_runs
from fixbot.prompts import Message
from fixbot.records import Attempt, failing_tests

DIAGNOSIS_CHARS = 1500  # of a diagnosis, what the feedback keeps
DIAGNOSIS_TOKENS = 512  # the most a diagnosis call asks for: more than the feedback keeps


def baseline(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Run every check on the untouched snapshot, reproduce its failing checks and tests, and
    classify the failure; no model call."""
    deps = runtime.context
    first = imports_checked(require_completed(checks_over(deps, "")[0]), deps.files)
    update: Update = {"baseline": first, "network_probe": network_probe(deps.sandbox)}
    if not failing_tests(first):
        return {**update, "status": "already_passing", "reason": "no failing checks or tests"}
    mode = further_runs(deps)
    reruns = [
        require_completed(checks_over(deps, "", baseline=first, mode=mode)[0])
        for _ in range(deps.config.verification.baseline_runs - 1)
    ]
    # Compared over the same tests: a reproduction runs only the failing ones.
    runs = [as_rerun(first, reruns[0]) if reruns and mode == "rerun" else first, *reruns]
    found = classify(runs, deps.files, generated_paths(reader(deps.snapshot.tree)))
    first = with_quarantine(first, found)  # flaky and environmental tests: outside the pass
    update.update(baseline=first, classification=found.kind, flaky_tests=list(found.flaky_tests))
    if found.kind != "code":
        update["reason"] = found.reason
    if deps.base_snapshot is not None:
        base, _ = checks_over(deps, "", snapshot=deps.base_snapshot)
        if set(failing_tests(first)) & set(failing_tests(base)):
            update["labels"] = ["pre-existing"]
    return update


def autofix(state: FixState, runtime: Runtime[Deps]) -> Update:
    """A failing ruff check gets ruff's own safe fixes first: a candidate at zero tokens."""
    deps = runtime.context
    failing = ruff_failing(baseline_of(state), checks_of(deps.config, reader(deps.snapshot.tree)))
    if not failing:
        return {"verdict": "none"}
    text = ruff_diff(deps.sandbox, deps.snapshot, limits_for(deps.config), failing)
    if not text:
        return {"verdict": "none"}
    current = Attempt(
        number=0,
        model=AUTOFIX_MODEL,
        temperature=None,
        round_size=1,
        reply="ruff's safe fixes and its formatter, before any model call",
        prompt_tokens=0,
        completion_tokens=0,
        cost_usd=0.0,
        diff=text,
        verdict="applied",
        problems=[],
        check=None,
    )
    return {"current": current, "verdict": "applied"}


def generate(state: FixState, runtime: Runtime[Deps]) -> Update:
    deps = runtime.context
    number = state["attempt"] + 1
    model = model_for(deps, state["attempt"])
    plan = plan_for(state, deps, model, number)
    asked = ask(
        state, deps, model, builder(state, runtime, plan.ask), plan.temperature, plan.reply_tokens
    )
    if isinstance(asked, Refused):
        return {"verdict": "over_budget", "reason": asked.reason}
    reply = asked.reply
    current = new_attempt(
        number, reply, asked.cost_usd, plan.temperature, plan.ask.kind, plan.ask.asked
    )
    return {
        "attempt": current["number"],
        "current": current,
        "verdict": "none",
        "tokens_used": state["tokens_used"] + reply.prompt_tokens + reply.completion_tokens,
        "cost_used": state["cost_used"] + asked.cost_usd,
    }


def apply(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Pure diff work: extract, locate, screen; nothing runs here."""
    current = _current(state)
    found = screened(current, state, runtime.context)
    if found.diff:
        return {
            "current": {**current, "diff": found.diff, "notes": found.notes},
            "verdict": "applied",
        }
    return {
        "current": {
            **current,
            "problems": found.problems,
            "notes": found.notes,
            "verdict": "rejected",
        },
        "verdict": "rejected",
    }


def check(state: FixState, runtime: Runtime[Deps]) -> Update:
    current = _current(state)
    result, tampered = checks_over(
        runtime.context,
        current["diff"],
        allowed=state["allowed_protected"],
        baseline=baseline_of(state),
        mode="first",
    )
    return {"current": {**current, "check": result, "problems": tampered}}


def judge(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Decide the attempt in flight by the pass definition, record it, and note a repeat."""
    decided = decide(baseline_of(state), _current(state))
    return {"current": None, **record(state, runtime.context, [decided])}


def reflect(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Feedback on the attempt that failed; with `reflection` on, a separate diagnosis call
    first (its tokens and cost count like any call's; skipped when it could overspend)."""
    last = state["attempts"][-1]
    facts = {
        "number": last["number"],
        "diff": last["diff"],
        "problems": last["problems"][:20],
        "failing": prompts.failing(last["check"])[:10] if last["check"] is not None else [],
    }
    # A round of parallel candidates that all failed: the others' outcomes, one line each.
    size = last.get("round_size", 1)
    others = [
        {"number": a["number"], "problem": (a["problems"] or [a["verdict"]])[0][:300]}
        for a in state["attempts"][-size:-1]
    ]
    feedback = prompts.feedback(
        facts,
        repeated=state["stuck_reason"],
        others=others,
        notes=last.get("notes", []),
        detailed=last.get("shape", "diff") == "diff",
    )
    update: Update = {"verdict": "none"}
    deps = runtime.context
    if deps.config.reflection and last["number"] > 0:
        found = _diagnose(state, deps, facts)
        if found is not None:
            reply, spent_usd = found.reply, found.cost_usd
            diagnosis = reply.text.split("```", 1)[0].strip()[:DIAGNOSIS_CHARS]
            feedback += f"\n\nA diagnosis of why it failed:\n{diagnosis}\n"
            # The call is part of the attempt it diagnoses: its tokens and cost count there.
            counted = {
                **last,
                "prompt_tokens": last["prompt_tokens"] + reply.prompt_tokens,
                "completion_tokens": last["completion_tokens"] + reply.completion_tokens,
                "cost_usd": last["cost_usd"] + spent_usd,
            }
            update["attempts"] = [*state["attempts"][:-1], counted]
            update["tokens_used"] = (
                state["tokens_used"] + reply.prompt_tokens + reply.completion_tokens
            )
            update["cost_used"] = state["cost_used"] + spent_usd
    update["feedback"] = feedback
    after: FixState = {**state, **update}  # type: ignore[typeddict-item]
    update["slots"] = round_size(after, deps, messages_for(after, runtime))
    return update


def _diagnose(state: FixState, deps: Deps, facts: dict[str, object]) -> Asked | None:
    """One extra model call and what it cost; None when it could overspend a budget."""
    model = model_for(deps, state["attempt"])

    def build(room: int) -> list[Message]:
        return prompts.diagnosis_messages(deps.protected_globs, facts, room)

    first = build(model.window.room(DIAGNOSIS_TOKENS))
    if state["tokens_used"] + prompt_tokens(first) + DIAGNOSIS_TOKENS > state["token_budget"]:
        return None
    asked = ask(state, deps, model, build, reply_tokens=DIAGNOSIS_TOKENS)
    # A refusal means no diagnosis; the router sees the budget or deadline before the next call.
    return None if isinstance(asked, Refused) else asked


def finalize(state: FixState, runtime: Runtime[Deps]) -> Update:
    deps = runtime.context
    lessons.learn(runtime.store, deps, state)
    last = state["attempts"][-1]
    if last["number"] == 0:
        return {
            "status": "fixed",
            "reason": "ruff's safe fixes and formatting passed and were verified on a clean "
            "copy, with zero model tokens",
        }
    dropped = len(state["dropped_hunks"])
    note = f"; {dropped} unneeded hunk(s) dropped and the rest re-verified" if dropped else ""
    reviewed = [r for r in state["reviews"] if r["attempt"] == last["number"]]
    if reviewed:  # a pass the reviewer did not block: what it said, or that it said nothing
        said = "no verdict" if reviewed[-1]["verdict"] == "none" else reviewed[-1]["verdict"]
        note += f"; the reviewer ({reviewed[-1]['model']}) said {said}"
    return {
        "status": "fixed",
        "reason": f"attempt {last['number']} passed and was verified on a clean copy{note}",
    }


def _current(state: FixState) -> Attempt:
    if state["current"] is None:
        raise StateError("a node that needs the attempt in flight ran without one")
    return state["current"]
