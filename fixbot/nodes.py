"""The graph's nodes. Each reads state, does one thing, and returns the fields it changed.

Dependencies (model, sandbox, snapshot, config) arrive through the runtime context, never
through state, so checkpoints hold only data and never a secret.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from fixbot import context, diff, prompts, verdict
from fixbot.checks import CheckResult, TestCommandError, failing_tests, run_checks
from fixbot.config import Config
from fixbot.errors import EnvironmentProblem, UsageError
from fixbot.llm import Model
from fixbot.sandbox import Limits, Sandbox
from fixbot.snapshot import (
    Snapshot,
    fresh_copy,
    is_protected,
    manifest_mismatches,
    read_inside,
    repo_files,
    restore_protected,
)
from fixbot.state import REPLY_CAP, Attempt, FixState

Update = dict[str, Any]
FIXBOT_DIR = ".fixbot"


@dataclass
class Deps:
    model: Model
    sandbox: Sandbox
    snapshot: Snapshot
    config: Config
    hint: str = ""
    clock: Callable[[], float] = time.time
    files: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.files = repo_files(self.snapshot)

    @property
    def protected_globs(self) -> list[str]:
        return list(self.config.protected_paths)

    @property
    def limits(self) -> Limits:
        s = self.config.sandbox
        return Limits(timeout_seconds=s.timeout_seconds, memory_mb=s.memory_mb, cpus=s.cpus)


def _run_checks(deps: Deps, patch_text: str) -> tuple[CheckResult, list[str]]:
    """Check the snapshot plus a canonical diff in a fresh copy; also report tampered files."""
    scratch = Path(tempfile.mkdtemp(prefix="fixbot-attempt-"))
    try:
        workspace = fresh_copy(deps.snapshot, scratch / "repo")
        if patch_text:
            diff.write_changes(diff.plan_patch(patch_text, _reader(deps.snapshot.tree)), workspace)
        restore_protected(deps.snapshot, workspace)
        try:
            result = run_checks(
                deps.sandbox,
                workspace,
                test_command=deps.config.test_command,
                lint=deps.config.gates.lint,
                types=deps.config.gates.types,
                readonly=list(deps.snapshot.protected),
                limits=deps.limits,
            )
        except TestCommandError as exc:
            raise UsageError(str(exc)) from exc
        return result, manifest_mismatches(deps.snapshot, workspace)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _reader(root: Path) -> Callable[[str], str | None]:
    return lambda path: read_inside(root, path)


def baseline(state: FixState, runtime: Runtime[Deps]) -> Update:
    result, _ = _run_checks(runtime.context, "")
    if result["status"] == "command_not_found":
        raise EnvironmentProblem(
            f"the test command was not found in the sandbox: {runtime.context.config.test_command}"
            f"\n{result['log_tail'][-800:]}"
        )
    if result["status"] != "ran":
        raise EnvironmentProblem(
            f"the baseline test run did not complete ({result['status']}); "
            f"last output:\n{result['log_tail'][-800:]}"
        )
    if not result["tests"]:
        raise EnvironmentProblem(
            "the baseline collected no tests: check test_command in .fixbot.yml "
            f"(exit code {result['exit_code']})\n{result['log_tail'][-800:]}"
        )
    if not failing_tests(result):
        return {"baseline": result, "status": "already_passing", "reason": "no failing tests"}
    return {"baseline": result}


def generate(state: FixState, runtime: Runtime[Deps]) -> Update:
    deps = runtime.context
    assert state["baseline"] is not None
    values = context.prompt_values(
        state["baseline"], deps.snapshot.tree, deps.files, protected=deps.snapshot.manifest
    )
    messages = [
        {"role": "system", "content": prompts.render("system.j2", protected=deps.protected_globs)},
        {
            "role": "user",
            "content": prompts.render("task.j2", commit=state["commit"], hint=deps.hint, **values),
        },
    ]
    for previous in state["attempts"][-1:]:
        messages.append({"role": "assistant", "content": previous["reply"]})
        messages.append({"role": "user", "content": state["feedback"]})
    reply = deps.model.complete(messages)
    number = state["attempt"] + 1
    current = Attempt(
        number=number,
        model=reply.model,
        reply=reply.text[:REPLY_CAP],
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        diff="",
        verdict="none",
        problems=[],
        check=None,
    )
    spent = reply.prompt_tokens + reply.completion_tokens
    return {
        "attempt": number,
        "current": current,
        "verdict": "none",
        "tokens_used": state["tokens_used"] + spent,
    }


def apply(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Pure diff work: extract, locate, refuse protected paths; nothing runs here."""
    deps = runtime.context
    current = state["current"]
    assert current is not None
    text = diff.extract_diff(current["reply"])
    problems: list[str]
    if text is None:
        problems = ["the reply contains no ```diff block with a unified diff"]
    else:
        try:
            patch = diff.plan_patch(text, _reader(deps.snapshot.tree))
        except diff.DiffRejected as exc:
            problems = [f"the diff does not apply: {p}" for p in exc.problems]
        else:
            problems = [
                f"the diff touches protected path {path}; tests and their configuration "
                "are the specification and cannot be changed"
                for path in patch.paths
                if is_protected(path, deps.protected_globs)
                or path == FIXBOT_DIR
                or path.startswith(FIXBOT_DIR + "/")
            ]
            if not problems:
                return {"current": {**current, "diff": patch.diff}, "verdict": "applied"}
    return {
        "current": {**current, "problems": problems, "verdict": "rejected"},
        "verdict": "rejected",
    }


def check(state: FixState, runtime: Runtime[Deps]) -> Update:
    current = state["current"]
    assert current is not None
    result, tampered = _run_checks(runtime.context, current["diff"])
    problems = [f"protected file {path} was modified while the checks ran" for path in tampered]
    return {"current": {**current, "check": result, "problems": problems}}


def judge(state: FixState) -> Update:
    """Decide the attempt in flight by the pass definition and record it."""
    current = state["current"]
    assert current is not None and state["baseline"] is not None
    problems = list(current["problems"])
    if current["check"] is not None:
        problems += verdict.problems(state["baseline"], current["check"])
        outcome = "pass" if not problems else "fail"
    else:
        outcome = "rejected"
    record = Attempt(**{**current, "problems": problems, "verdict": outcome})  # type: ignore[typeddict-item]
    return {"verdict": outcome, "current": None, "attempts": [*state["attempts"], record]}


def reflect(state: FixState) -> Update:
    last = state["attempts"][-1]
    failing = context.failing(last["check"]) if last["check"] is not None else []
    feedback = prompts.render(
        "feedback.j2",
        number=last["number"],
        diff=last["diff"],
        problems=last["problems"][:20],
        failing=failing[:10],
    )
    return {"feedback": feedback, "verdict": "none"}


def verify(state: FixState, runtime: Runtime[Deps]) -> Update:
    """Re-run everything on a clean copy with the final diff before calling it fixed."""
    last = state["attempts"][-1]
    assert state["baseline"] is not None
    result, tampered = _run_checks(runtime.context, last["diff"])
    problems = [f"protected file {p} was modified" for p in tampered]
    problems += verdict.problems(state["baseline"], result)
    return {
        "verification": result,
        "verdict": "fail" if problems else "pass",
        "reason": "; ".join(problems),
    }


def finalize(state: FixState) -> Update:
    last = state["attempts"][-1]
    return {
        "status": "fixed",
        "final_diff": last["diff"],
        "reason": f"attempt {last['number']} passed and was verified on a clean copy",
    }


def escalate(state: FixState, runtime: Runtime[Deps]) -> Update:
    return {"status": "escalated", "reason": escalation_reason(state, runtime.context.clock())}


def escalation_reason(state: FixState, now: float) -> str:
    if state["verification"] is not None and state["verdict"] == "fail":
        return f"the final verification failed: {state['reason']}"
    if state["attempt"] >= state["max_iterations"]:
        return f"iterations: {state['attempt']} of {state['max_iterations']} attempts used"
    if state["tokens_used"] >= state["token_budget"]:
        return f"budget: {state['tokens_used']} of {state['token_budget']} tokens used"
    if now >= state["deadline"]:
        return "budget: the wall-clock deadline passed"
    return "escalated"
