"""The graph's nodes. Each reads state, does one thing, and returns the fields it changed.

Dependencies (model, sandbox, snapshot, config) arrive through the runtime context, never
through state, so checkpoints hold only data and never a secret.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from fixbot import prompts
from fixbot.checks import verdict
from fixbot.checks.autofix import MODEL as AUTOFIX_MODEL
from fixbot.checks.autofix import ruff_diff, ruff_only
from fixbot.checks.classify import classify
from fixbot.checks.trial import limits_for, reader, run_trial
from fixbot.config import Config
from fixbot.edits import patch as diff
from fixbot.edits import search_replace as edits
from fixbot.edits.minimize import hunks, without
from fixbot.errors import EnvironmentProblem
from fixbot.llm import MAX_REPLY_TOKENS, DeadlinePassed, Model, Reply, estimate_tokens
from fixbot.loop import budget as cost
from fixbot.loop import lessons
from fixbot.loop.state import FixState
from fixbot.loop.stuck import strike
from fixbot.prompts import excerpts as context
from fixbot.records import (
    COMPLETED,
    REPLY_CAP,
    Attempt,
    CheckResult,
    FailedJob,
    Verdict,
    failing_tests,
    slim,
)
from fixbot.sandbox import Limits, Sandbox
from fixbot.screen import policy
from fixbot.secrets import added_secrets, redact
from fixbot.snapshot.protected import Snapshot, is_protected, repo_files, unprotect

Update = dict[str, Any]
FIXBOT_DIR = ".fixbot"
LOGS = Path(FIXBOT_DIR) / "logs"  # older attempts' full check results, by thread
DIAGNOSIS_CHARS = 1500  # of a diagnosis, what the feedback keeps
DIAGNOSIS_TOKENS = 512  # the most a diagnosis call asks for: more than the feedback keeps


@dataclass
class Deps:
    model: Model
    sandbox: Sandbox
    snapshot: Snapshot
    config: Config
    base_snapshot: Snapshot | None = None
    known_secrets: tuple[str, ...] = ()  # the run's own credentials: never sent to the model
    clock: Callable[[], float] = time.time
    files: list[str] = field(default_factory=list)
    repository: str = ""  # the repository's identity: its lessons' namespace
    strong_model: Model | None = None  # asked once config.strong_after attempts have failed

    def __post_init__(self) -> None:
        self.files = repo_files(self.snapshot)

    @property
    def protected_globs(self) -> list[str]:
        return list(self.config.protected_paths)


def checks_over(
    deps: Deps, patch_text: str, *, snapshot: Snapshot | None = None, allowed: Sequence[str] = ()
) -> tuple[CheckResult, list[str]]:
    snapshot = unprotect(snapshot or deps.snapshot, allowed)
    return run_trial(deps.sandbox, snapshot, deps.config, patch_text)


def baseline(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Run the untouched snapshot, reproduce its failure, and classify it; no model call."""
    deps = runtime.context
    first = _complete_baseline(deps, checks_over(deps, "")[0])
    update: Update = {"baseline": first, "network_probe": _network_probe(deps)}
    if not failing_tests(first):
        return {**update, "status": "already_passing", "reason": "no failing tests"}
    runs = [first]
    for _ in range(deps.config.verification.baseline_runs - 1):
        runs.append(_complete_baseline(deps, checks_over(deps, "")[0]))
    found = classify(runs, deps.files)
    update.update(classification=found.kind, flaky_tests=list(found.flaky_tests))
    if found.kind != "code":
        update["reason"] = found.reason
    if deps.base_snapshot is not None:
        base, _ = checks_over(deps, "", snapshot=deps.base_snapshot)
        if set(failing_tests(first)) & set(failing_tests(base)):
            update["labels"] = ["pre-existing"]
    return update


def _complete_baseline(deps: Deps, result: CheckResult) -> CheckResult:
    """A baseline that did not run properly is the environment's problem, never a model's."""
    tail = result["log_tail"][-800:]
    status = result["status"]
    if status == "infra_error":
        raise EnvironmentProblem(
            f"the test command was not found in the sandbox: {deps.config.test_command}\n{tail}"
        )
    if status == "no_tests_collected":
        raise EnvironmentProblem(
            "the baseline collected no tests: check test_command in .fixbot.yml "
            f"(exit code {result['exit_code']})\n{tail}"
        )
    if status not in COMPLETED:
        raise EnvironmentProblem(
            f"the baseline test run did not complete ({status}); last output:\n{tail}"
        )
    return result


_PROBE = (
    "import socket\n"
    "for host in ('1.1.1.1', '127.0.0.1'):\n"
    "    try:\n"
    "        socket.create_connection((host, 80), timeout=3).close()\n"
    "        print(f'{host}:80 CONNECTED')\n"
    "    except OSError as exc:\n"
    "        print(f'{host}:80 refused: {exc}')\n"
)


def _network_probe(deps: Deps) -> str:
    """Evidence that the sandbox has no network: what a connection attempt from inside got."""
    scratch = Path(tempfile.mkdtemp(prefix="fixbot-probe-"))
    try:
        (scratch / "ws").mkdir()
        (scratch / "out").mkdir()
        result = deps.sandbox.run(
            ["python", "-c", _PROBE],
            workspace=scratch / "ws",
            outputs=scratch / "out",
            limits=Limits(timeout_seconds=30),
        )
        return result.output.strip()[:500]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def autofix(state: FixState, runtime: Runtime[Deps]) -> Update:
    """A ruff-only failure gets ruff's own safe fixes first: a candidate at zero tokens."""
    deps = runtime.context
    assert state["baseline"] is not None
    if not ruff_only(state["baseline"]):
        return {"verdict": "none"}
    text = ruff_diff(deps.sandbox, deps.snapshot, limits_for(deps.config))
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
    asked = ask(state, deps, model_for(deps, state["attempt"]), messages_for(state, runtime))
    if isinstance(asked, str):
        return {"verdict": "over_budget", "reason": asked}
    reply, spent_usd = asked
    current = new_attempt(state["attempt"] + 1, reply, spent_usd)
    return {
        "attempt": current["number"],
        "current": current,
        "verdict": "none",
        "tokens_used": state["tokens_used"] + reply.prompt_tokens + reply.completion_tokens,
        "cost_used": state["cost_used"] + spent_usd,
    }


def messages_for(state: FixState, runtime: Runtime[Deps]) -> list[dict[str, str]]:
    """The conversation for the next attempt: the task, then the last attempt and its feedback."""
    deps = runtime.context
    assert state["baseline"] is not None
    budget = deps.config.prompt_budget_tokens
    # The CI log tails, lessons and hint share the task prompt's budget: the log tails get at
    # most a quarter of it (their ends kept), the repository's context what the three leave.
    jobs = _fit_jobs(state["ci_jobs"], budget // 4)
    found = _lessons_for(runtime.store, deps, state["baseline"])
    around = "".join(
        [state["hint"], *(j["log_tail"] + "".join(j["failed_steps"]) for j in jobs)]
        + [lesson.fix + "".join(lesson.failure) for lesson in found]
    )
    values = context.prompt_values(
        state["baseline"],
        deps.snapshot.tree,
        deps.files,
        protected=deps.snapshot.manifest,
        budget_tokens=max(budget // 2, budget - estimate_tokens(around)),
    )
    messages = [
        {"role": "system", "content": prompts.render("system.j2", protected=deps.protected_globs)},
        {
            "role": "user",
            "content": prompts.render(
                "task.j2",
                commit=state["commit"],
                hint=state["hint"],
                ci_jobs=jobs,
                lessons=found,
                **values,
            ),
        },
    ]
    for previous in state["attempts"][-1:]:
        messages.append({"role": "assistant", "content": previous["reply"]})
        messages.append({"role": "user", "content": state["feedback"]})
    return messages


def new_attempt(
    number: int, reply: Reply, spent_usd: float, temperature: float | None = None
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
    )


def shadowing(patch: diff.Patch, tree: Path) -> list[str]:
    """Paths the patch adds at the repository's top level whose module name is importable
    already (pytest, ruff, mypy, their dependencies, the standard library): the checks run
    `python -m ...` in the workspace, where such a file would be imported instead."""
    found = []
    for change in patch.changes:
        if change.new is None or os.path.lexists(tree / change.path):
            continue
        top = change.path.split("/")[0]
        name = top.removesuffix(".py") if "/" not in change.path else top
        if (top.endswith(".py") or "/" in change.path) and _importable(name):
            found.append(change.path)
    return found


def _importable(name: str) -> bool:
    if not name.isidentifier():
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _fit_jobs(jobs: Sequence[FailedJob], tokens: int) -> list[FailedJob]:
    """The failed jobs with their log tails cut (from the front: the end is what failed) so
    that together they take at most `tokens`."""
    share = max(0, tokens * 4 // max(1, len(jobs)))  # characters per job, ~4 to a token
    return [{**job, "log_tail": job["log_tail"][-share:] if share else ""} for job in jobs]


def model_for(deps: Deps, attempts_so_far: int) -> Model:
    """The model, or the strong one once `strong_after` attempts have failed."""
    if deps.strong_model is not None and attempts_so_far >= deps.config.strong_after:
        return deps.strong_model
    return deps.model


def apply(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Pure diff work: extract, locate, screen; nothing runs here."""
    current = state["current"]
    assert current is not None and state["baseline"] is not None
    patch, problems = screen(
        current["reply"],
        runtime.context,
        failing_tests(state["baseline"]),
        state["allowed_protected"],
    )
    if patch is not None and not problems:
        return {"current": {**current, "diff": patch.diff}, "verdict": "applied"}
    return {
        "current": {**current, "problems": problems, "verdict": "rejected"},
        "verdict": "rejected",
    }


def screen(
    reply: str, deps: Deps, failing: list[str], allowed: Sequence[str]
) -> tuple[diff.Patch | None, list[str]]:
    """The candidate patch in a reply, and every reason to refuse it before it runs."""
    text = diff.extract_diff(reply)
    try:
        if text is not None:
            patch = diff.plan_patch(text, reader(deps.snapshot.tree))
        else:  # no diff: SEARCH/REPLACE blocks, or whole definitions or files, become one
            found = edits.parse_edits(reply, reader(deps.snapshot.tree), deps.files)
            if found is None:
                return None, [
                    "the reply contains no ```diff block with a unified diff (nor SEARCH/REPLACE "
                    "blocks, nor a ```block naming a file)"
                ]
            patch = found
    except diff.DiffRejected as exc:
        what = "diff" if text is not None else "edit"
        return None, [f"the {what} does not apply: {p}" for p in exc.problems]
    problems = [
        f"the diff touches protected path {path}; tests and their configuration "
        "are the specification and cannot be changed"
        for path in patch.paths
        if (is_protected(path, deps.protected_globs) and path not in allowed)
        or path == FIXBOT_DIR
        or path.startswith(FIXBOT_DIR + "/")
    ]
    problems += [
        f"the diff adds {path}, which would stand in for the installed module of that name "
        "(the test runner, a gate or the standard library) when the checks run; name it otherwise"
        for path in shadowing(patch, deps.snapshot.tree)
    ]
    problems += [
        f"the diff adds a secret ({hit.kind}) to {change.path} line {hit.line}; "
        "credentials never go into a fix"
        for change in patch.changes
        for hit in added_secrets(change.old, change.new)
    ]
    findings = policy.review(
        patch, tree=deps.snapshot.tree, failing_tests=failing, strictness=deps.config.policy
    )
    return patch, problems + [str(finding) for finding in findings]


def check(state: FixState, runtime: Runtime[Deps]) -> Update:
    current = state["current"]
    assert current is not None
    result, tampered = checks_over(
        runtime.context, current["diff"], allowed=state["allowed_protected"]
    )
    problems = [f"protected file {path} was modified while the checks ran" for path in tampered]
    return {"current": {**current, "check": result, "problems": problems}}


def judge(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Decide the attempt in flight by the pass definition, record it, and note a repeat."""
    current = state["current"]
    assert current is not None and state["baseline"] is not None
    return {"current": None, **record(state, runtime.context, [decide(state["baseline"], current)])}


def decide(baseline: CheckResult, current: Attempt) -> Attempt:
    """The attempt with its verdict: pass, fail (it ran and is not a pass) or rejected."""
    problems = list(current["problems"])
    if current["check"] is not None:
        problems += verdict.problems(baseline, current["check"])
        outcome: Verdict = "pass" if not problems else "fail"
    else:
        outcome = "rejected"
    return {**current, "problems": problems, "verdict": outcome}


def record(state: FixState, deps: Deps, decided: Sequence[Attempt]) -> Update:
    """Append decided attempts (the last one's verdict routes) and note a repeat or stagnation."""
    # Only the newest attempt keeps its full check in the state; the older ones are slimmed,
    # their full results on disk (checkpoints store the whole state at every step).
    *before, last = [*state["attempts"], *decided]
    attempts = [*(_slimmed(deps, state["thread_id"], a) for a in before), last]
    settings = deps.config.stuck
    why = (
        ""
        if last["verdict"] == "pass"
        else strike(attempts, settings.similarity, settings.stagnation_attempts)
    )
    strikes = (state["strikes"] + 1) if why else 0
    if why == "the model said it cannot fix this":
        strikes = max(strikes, 2)
    return {
        "verdict": last["verdict"],
        "attempts": attempts,
        "strikes": strikes,
        "stuck_reason": why,
    }


def _slimmed(deps: Deps, thread: str, attempt: Attempt) -> Attempt:
    check = attempt["check"]
    if check is None or "log_ref" in check:
        return attempt
    folder = deps.snapshot.repo / LOGS / thread
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"attempt-{attempt['number']}.json"
    if not path.exists():  # written once: a rerun after a crash finds it there
        scratch = path.with_suffix(".tmp")
        scratch.write_text(json.dumps(check, indent=1), encoding="utf-8")
        os.replace(scratch, path)
    ref = path.relative_to(deps.snapshot.repo).as_posix()
    return {**attempt, "check": slim(check, ref)}


def reflect(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Feedback on the attempt that failed; with `reflection` on, a separate diagnosis call
    first (its tokens and cost count like any call's; skipped when it could overspend)."""
    last = state["attempts"][-1]
    failing = context.failing(last["check"]) if last["check"] is not None else []
    facts = {
        "number": last["number"],
        "diff": last["diff"],
        "problems": last["problems"][:20],
        "failing": failing[:10],
    }
    # A round of parallel candidates that all failed: the others' outcomes, one line each.
    size = last.get("round_size", 1)
    others = [
        {"number": a["number"], "problem": (a["problems"] or [a["verdict"]])[0][:300]}
        for a in state["attempts"][-size:-1]
    ]
    feedback = prompts.render("feedback.j2", repeated=state["stuck_reason"], others=others, **facts)
    update: Update = {"verdict": "none"}
    deps = runtime.context
    if deps.config.reflection and last["number"] > 0:
        found = _diagnose(state, deps, facts)
        if found is not None:
            reply, spent_usd = found
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
    update["slots"] = round_size(FixState(**{**state, **update}), runtime)  # type: ignore[typeddict-item]
    return update


def round_size(state: FixState, runtime: Runtime[Deps]) -> int:
    """How many candidates the next round asks for at once: `parallel.candidates`, fewer when
    the attempts left or the budgets left cannot pay for that many worst cases (a prompt counted
    generously and the longest reply), and 1 (one at a time) when not even two fit."""
    deps = runtime.context
    wanted = min(deps.config.parallel.candidates, state["max_iterations"] - state["attempt"])
    if wanted < 2:
        return 1
    prompt = sum(cost.worst_prompt_tokens(m["content"]) for m in messages_for(state, runtime))
    tokens, dollars, fits = state["tokens_used"], state["cost_used"], 0
    for slot in range(wanted):
        model = model_for(deps, state["attempt"] + slot)
        tokens += prompt + MAX_REPLY_TOKENS
        price = cost.price_for(deps.config.prices, model.name)
        dollars += cost.dollars(price, prompt, MAX_REPLY_TOKENS)
        if tokens > state["token_budget"] or (
            state["cost_budget"] and dollars > state["cost_budget"]
        ):
            break
        fits += 1
    return fits if fits >= 2 else 1


def _diagnose(state: FixState, deps: Deps, facts: dict[str, Any]) -> tuple[Reply, float] | None:
    """One extra model call and what it cost; None when it could overspend a budget."""
    messages = [
        {"role": "system", "content": prompts.render("system.j2", protected=deps.protected_globs)},
        {"role": "user", "content": prompts.render("diagnose.j2", **facts)},
    ]
    prompt = sum(cost.worst_prompt_tokens(m["content"]) for m in messages)
    if state["tokens_used"] + prompt + DIAGNOSIS_TOKENS > state["token_budget"]:
        return None
    model = model_for(deps, state["attempt"])
    asked = ask(state, deps, model, messages, reply_tokens=DIAGNOSIS_TOKENS)
    # A refusal means no diagnosis; the router sees the budget or deadline before the next call.
    return None if isinstance(asked, str) else asked


def ask(
    state: FixState,
    deps: Deps,
    model: Model,
    messages: list[dict[str, str]],
    temperature: float | None = None,
    reply_tokens: int = MAX_REPLY_TOKENS,
) -> tuple[Reply, float] | str:
    """One model call (secrets redacted, bounded by the deadline) and what it cost in dollars;
    or, instead of a call that could overspend the money cap or outlive the deadline, why not."""
    for message in messages:
        message["content"] = redact(message["content"], known=deps.known_secrets)
    if state["cost_budget"]:
        # The worst this call can cost (its prompt, counted generously, and a reply of the most
        # tokens the client asks for) must fit what is left: never a call that could overspend.
        prompt = sum(cost.worst_prompt_tokens(m["content"]) for m in messages)
        price = cost.price_for(deps.config.prices, model.name)
        worst = cost.dollars(price, prompt, reply_tokens)
        left = state["cost_budget"] - state["cost_used"]
        if worst > left:
            return (
                f"the next call could cost up to ${worst:.4f}; ${left:.4f} is left "
                f"of ${state['cost_budget']:.4f}"
            )
    try:
        reply = model.complete(
            messages, temperature=temperature, deadline=state["deadline"], max_tokens=reply_tokens
        )
    except DeadlinePassed as exc:
        return f"the wall clock: {exc}"
    price = cost.price_for(deps.config.prices, model.name, reply.model)
    return reply, cost.dollars(price, reply.prompt_tokens, reply.completion_tokens)


def verify(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Re-run the full suite on clean copies with the passing diff before calling it fixed."""
    result, problems = _verify(runtime.context, state, state["attempts"][-1]["diff"])
    return {
        "verification": result,
        "final_diff": state["attempts"][-1]["diff"],
        "verdict": "fail" if problems else "pass",
        "reason": "; ".join(problems),
    }


def _verify(deps: Deps, state: FixState, patch_text: str) -> tuple[CheckResult, list[str]]:
    """Every one of the configured final runs must pass; the first problems found end it."""
    assert state["baseline"] is not None
    for _ in range(deps.config.verification.final_runs):
        result, tampered = checks_over(deps, patch_text, allowed=state["allowed_protected"])
        problems = [f"protected file {p} was modified" for p in tampered]
        problems += verdict.problems(state["baseline"], result)
        if problems:
            return result, problems
    return result, []


def minimize(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Drop each hunk whose removal keeps the pass, then re-verify what is left."""
    deps = runtime.context
    full = state["final_diff"]
    refs = hunks(full)
    if not deps.config.verification.minimize or len(refs) < 2:
        return {}
    assert state["baseline"] is not None
    read = reader(deps.snapshot.tree)
    dropped: list[int] = []
    for ref in refs:
        candidate = without(full, [*dropped, ref.index], read)
        if not candidate:
            continue
        result, tampered = checks_over(deps, candidate, allowed=state["allowed_protected"])
        if not tampered and not verdict.problems(state["baseline"], result):
            dropped.append(ref.index)
    if not dropped:
        return {}
    reduced = without(full, dropped, read)
    result, problems = _verify(deps, state, reduced)
    if problems:
        return {}  # the reduced diff did not hold up twice: keep the verified full diff
    return {
        "final_diff": reduced,
        "verification": result,
        "dropped_hunks": [f"{refs[i].path}\n{refs[i].text}" for i in dropped],
    }


def _failure(check: CheckResult) -> tuple[str, ...]:
    return lessons.signature({t: check["tests"][t]["message"] for t in failing_tests(check)})


def _lessons_for(
    store: BaseStore | None, deps: Deps, baseline: CheckResult
) -> list[lessons.Lesson]:
    """What fixed the failures most like this one before, in this repository."""
    if store is None or not deps.repository:
        return []
    return lessons.relevant(store, deps.repository, _failure(baseline))


def _learn(state: FixState, runtime: Runtime[Deps]) -> None:
    """After a verified pass only: what fixed this failure, for the next run to see."""
    deps = runtime.context
    if runtime.store is None or not deps.repository or state["baseline"] is None:
        return
    last = state["attempts"][-1]
    failure = _failure(state["baseline"])
    prose = last["reply"].split("```", 1)[0].strip().replace("\n", " ")
    changed = diff.summary(state["final_diff"] or last["diff"])
    lesson = lessons.Lesson(
        key=lessons.lesson_key(failure),
        failure=failure,
        fix=redact(f"{prose[:300]} Changed: {changed}", known=deps.known_secrets),
        files=tuple(diff.changed_paths(state["final_diff"] or last["diff"])),
        created_at=deps.clock(),
        thread=state["thread_id"],
    )
    lessons.record(runtime.store, deps.repository, lesson)


def finalize(state: FixState, runtime: Runtime[Deps]) -> Update:
    _learn(state, runtime)
    last = state["attempts"][-1]
    if last["number"] == 0:
        return {
            "status": "fixed",
            "reason": "ruff's safe fixes and formatting passed and were verified on a clean "
            "copy, with zero model tokens",
        }
    dropped = len(state["dropped_hunks"])
    note = f"; {dropped} unneeded hunk(s) dropped and the rest re-verified" if dropped else ""
    return {
        "status": "fixed",
        "reason": f"attempt {last['number']} passed and was verified on a clean copy{note}",
    }
