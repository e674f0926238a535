"""An attempt's life after the model answered: screened (salvaged), recorded, checked, decided,
and kept small.

Only the newest attempt keeps its full check result in the state; older ones are slimmed to
their failing tests and messages, their full results written once to `.fixbot/logs/THREAD/`
(checkpoints store the whole state at every step).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass

from fixbot.checks import Mode, reader, run_trial, tampered_problems
from fixbot.checks import problems as pass_problems
from fixbot.edits import DiffRejected, parse_reply
from fixbot.loop.deps import Deps, Update
from fixbot.loop.state import FixState, baseline_of
from fixbot.loop.stuck import Stuck, strike, varied
from fixbot.model import Reply
from fixbot.paths import StateDir
from fixbot.records import REPLY_CAP, Attempt, CheckResult, Verdict, failing_tests, slim
from fixbot.screen import salvage, screen
from fixbot.snapshot import Snapshot, unprotect


def new_attempt(
    number: int,
    reply: Reply,
    spent_usd: float,
    temperature: float | None = None,
    shape: str = "diff",
    asked: Sequence[str] = (),
) -> Attempt:
    """A model's reply as the attempt in flight: nothing applied or run yet."""
    return Attempt(
        number=number,
        model=reply.model,
        temperature=temperature,
        round_size=1,
        reply=reply.text[:REPLY_CAP],
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        cost_usd=spent_usd,
        diff="",
        verdict="none",
        problems=[],
        check=None,
        shape=shape,
        notes=[],
        asked=list(asked),
    )


@dataclass(frozen=True)
class Screened:
    """What a reply comes to: the canonical diff to check ("" when refused), every reason to
    refuse it, and what became of parts of it (a test edit dropped)."""

    diff: str
    problems: list[str]
    notes: list[str]


def screened(attempt: Attempt, state: FixState, deps: Deps) -> Screened:
    """The canonical diff of the patch an attempt's reply asks for, or every reason to refuse
    it. A reply that changes source files and protected ones keeps its source changes: the
    protected part is dropped (never applied) and named in a note for the feedback."""
    read = reader(deps.snapshot.tree)
    try:
        patch = parse_reply(attempt["reply"], read, deps.files, attempt.get("asked", []))
    except DiffRejected as exc:
        return Screened("", list(exc.problems), [])
    # The files the run protected when it started stay protected (a resume's config may have
    # dropped their glob since): its manifest, path by path.
    started = state["manifest"]
    kept, dropped = salvage(
        patch, protected=deps.protected_globs, allowed=state["allowed_protected"], files=started
    )
    notes = []
    if kept is not None and dropped:
        patch = kept
        notes.append(
            f"Your change to {', '.join(dropped)} was dropped, never applied: the tests are the "
            "specification and read-only. The rest of your change was applied and checked."
        )
    problems = screen(
        patch,
        tree=deps.snapshot.tree,
        protected=deps.protected_globs,
        allowed=state["allowed_protected"],
        failing=failing_tests(baseline_of(state)),
        strictness=deps.config.policy,
        files=started,
    )
    return Screened("" if problems else patch.diff, problems, notes)


def checks_over(
    deps: Deps,
    patch_text: str,
    *,
    snapshot: Snapshot | None = None,
    allowed: Sequence[str] = (),
    baseline: CheckResult | None = None,
    mode: Mode = "full",
) -> tuple[CheckResult, list[str]]:
    """The checks over the snapshot with `patch_text` applied, and the problems of protected
    files found changed afterwards (`allowed`: the ones a human opened to edits); `mode` and
    the `baseline` it reads: in full, failing first, or the failing ones only (checks.run_trial)."""
    opened = unprotect(snapshot or deps.snapshot, allowed)
    result, tampered = run_trial(
        deps.sandbox,
        opened,
        deps.config,
        patch_text,
        baseline=baseline,
        mode=mode,
        index=deps.index,
    )
    return result, tampered_problems(tampered)


def decide(baseline: CheckResult, current: Attempt) -> Attempt:
    """The attempt with its verdict: pass, fail (it ran and is not a pass) or rejected; its
    check carries the baseline's quarantine, so that a quarantined test failing there is never
    fed back, compared or learnt from as the attempt's failure."""
    problems = list(current["problems"])
    check = current["check"]
    if check is not None:
        problems += pass_problems(baseline, check)
        outcome: Verdict = "pass" if not problems else "fail"
        if "quarantined" in baseline:
            check = {**check, "quarantined": baseline["quarantined"]}
    else:
        outcome = "rejected"
    return {**current, "check": check, "problems": problems, "verdict": outcome}


def record(state: FixState, deps: Deps, decided: Sequence[Attempt]) -> Update:
    """Append decided attempts (the last one's verdict routes) and note a repeat, a reply
    that changed nothing or stagnation: it varies the next attempt, or escalates (stuck.py)."""
    *before, last = [*state["attempts"], *decided]
    attempts = [*(slimmed(deps, state["thread_id"], a) for a in before), last]
    settings = deps.config.stuck
    found = (
        None
        if last["verdict"] == "pass"
        else strike(attempts, settings.similarity, settings.stagnation_attempts)
    )
    now = varied(
        found,
        Stuck(state["strikes"], state["variation"]),
        len(deps.config.sampling.temperatures),
    )
    return {
        "verdict": last["verdict"],
        "attempts": attempts,
        "strikes": now.strikes,
        "variation": now.variation,
        "stuck_reason": found.reason if found else "",
    }


def slimmed(deps: Deps, thread: str, attempt: Attempt) -> Attempt:
    """The attempt as an older one stays in the state, its full check written once to disk."""
    check = attempt["check"]
    if check is None or "log_ref" in check:
        return attempt
    repo = deps.snapshot.repo
    folder = StateDir(repo).logs(thread)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"attempt-{attempt['number']}.json"
    if not path.exists():  # written once: a rerun after a crash finds it there
        scratch = path.with_suffix(".tmp")
        scratch.write_text(json.dumps(check, indent=1), encoding="utf-8")
        os.replace(scratch, path)
    return {**attempt, "check": slim(check, path.relative_to(repo).as_posix())}
