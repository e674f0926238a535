"""Verification: a passing attempt's diff holds up on clean copies before it is final.

The passing attempt's own full run, on a fresh clean copy of the snapshot with the diff, is the
first verification run (it was judged there by the pass definition, nothing skipped); each of
the further `verification.final_runs - 1` runs re-runs the baseline's failing checks and tests
on another fresh copy (or everything, with `verification.full_reruns`). minimize drops each
hunk the pass does not need, trying each removal failing first, and re-verifies what is left.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from fixbot.checks import Mode, reader, reproduced
from fixbot.checks import problems as pass_problems
from fixbot.edits import hunks, plan_patch, without
from fixbot.loop.attempts import checks_over
from fixbot.loop.deps import Deps, Update
from fixbot.loop.state import FixState, baseline_of
from fixbot.records import CheckResult
from fixbot.screen import unread_sources


def verify(state: FixState, runtime: Runtime[Deps]) -> Update:
    """The passing attempt's own full run (on a clean copy) is the first verification run; the
    further ones re-run the failing checks and tests on fresh clean copies."""
    last = state["attempts"][-1]
    result, problems = _verify(runtime.context, state, last["diff"], counted=last["check"])
    return {
        "verification": result,
        "final_diff": last["diff"],
        "verdict": "fail" if problems else "pass",
        "reason": "; ".join(problems),
    }


def _verify(
    deps: Deps, state: FixState, patch_text: str, counted: CheckResult | None = None
) -> tuple[CheckResult, list[str]]:
    """Every one of the configured final runs must pass, the first the full run `counted` (a
    pass already judged on a clean copy) or a new one, and every changed Python file must be
    one the screen read; the first problems found end it. The verification shown is the full
    run."""
    before = baseline_of(state)
    allowed = state["allowed_protected"]
    unread = unread_sources(plan_patch(patch_text, reader(deps.snapshot.tree)))
    full = counted if counted is not None and not counted.get("partial") else None
    if full is None:
        full, problems = checks_over(deps, patch_text, allowed=allowed)
        problems += pass_problems(before, full)
        if problems:
            return full, problems
    if unread:
        return full, unread
    mode = further_runs(deps)
    for _ in range(deps.config.verification.final_runs - 1):
        again, problems = checks_over(deps, patch_text, allowed=allowed, baseline=before, mode=mode)
        judged = pass_problems(before, again) if mode == "full" else reproduced(before, again)
        if problems or judged:
            return again, problems + judged
    return full, []


def further_runs(deps: Deps) -> Mode:
    """What a further baseline or final run runs: the failing checks and tests, or everything."""
    return "full" if deps.config.verification.full_reruns else "rerun"


def minimize(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Drop each hunk whose removal keeps the pass (failing first, so a needed hunk costs only
    the failing tests), then re-verify what is left: its last passing run counts as the first."""
    deps = runtime.context
    full = state["final_diff"]
    refs = hunks(full)
    if not deps.config.verification.minimize or len(refs) < 2:
        return {}
    read = reader(deps.snapshot.tree)
    dropped: list[int] = []
    last_pass: CheckResult | None = None
    for ref in refs:
        candidate = without(full, [*dropped, ref.index], read)
        if not candidate:
            continue
        result, tampered = checks_over(
            deps, candidate, allowed=state["allowed_protected"], baseline=baseline_of(state),
            mode="first",
        )  # fmt: skip
        if not tampered and not pass_problems(baseline_of(state), result):
            dropped.append(ref.index)
            last_pass = result
    if not dropped:
        return {}
    reduced = without(full, dropped, read)
    result, problems = _verify(deps, state, reduced, counted=last_pass)
    if problems:
        return {}  # the reduced diff did not hold up: keep the verified full diff
    return {
        "final_diff": reduced,
        "verification": result,
        "dropped_hunks": [f"{refs[i].path}\n{refs[i].text}" for i in dropped],
    }
