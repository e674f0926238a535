"""`fixbot action`: one GitHub Actions step, from the event to exactly one evidenced PR.

    environment -> event -> decision --Skip-------------------------> outputs (status skipped)
                                     --Cleanup----------------------> close superseded PRs
                                     --Trigger-> permission (comments only, fail closed)
                                               -> context: the failed run's jobs and log tails
                                                  (workflow_run), its failed steps as checks
                                                  (a config that names none), the escalated
                                                  thread a /fix comment answers (issue_comment)
                                               -> fix (the injected runner) -> FixResult file
                                               -> publish (push + PR + comment) -> outputs

`phase` splits the run for the two-job workflow: `fix` stops after the result is recorded (that
job holds no write token), `publish` starts from a recorded result (that job runs no repository
code: this module imports nothing that runs it). Both phases decide from the event themselves;
the recorded result is read as data.

Untrusted text (branch names, comments, logs, model output) never reaches a shell. While fixbot
runs on Actions, workflow commands are stopped (`::stop-commands::`), so nothing it logs can
issue one; the token is masked first.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from fixbot import log
from fixbot.config import DEFAULT_PROTECTED_PATHS, Config
from fixbot.errors import FixbotError, UsageError
from fixbot.forge import (
    Cleanup,
    Git,
    Publisher,
    Skip,
    Trigger,
    cleanup,
    publish,
)
from fixbot.forge.github.actions import (
    PHASES,
    ActionEnv,
    ActionOutcome,
    FixRunner,
    Phase,
    PublisherFactory,
    WorkflowCommands,
    neutral,
    write_outputs,
    write_summary,
)
from fixbot.forge.github.asked import asked_by_whom
from fixbot.forge.github.context import fix_job, trusted_config
from fixbot.forge.github.event import branch_refusal, decide, load_payload
from fixbot.records import StepNotRun
from fixbot.report import (
    EXIT_OK,
    EXIT_USAGE,
    FixResult,
    error_kind,
    error_result,
    exit_code,
    load_result,
)
from fixbot.report import write_outputs as write_result
from fixbot.secrets import redact


def run_action(
    environ: Mapping[str, str],
    *,
    fix: FixRunner,
    connect: PublisherFactory,
    phase: Phase = "all",
    result_dir: Path | None = None,
    stdout: TextIO | None = None,
) -> int:
    """One Actions run; returns the exit code (as `fixbot fix`; 0 for skipped and refused)."""
    logger = log.get()
    stream = stdout or sys.stdout
    try:
        env = ActionEnv.from_environ(environ)
    except UsageError as exc:
        logger.error("action_failed", error=str(exc))
        output = environ.get("GITHUB_OUTPUT")
        write_outputs(Path(output) if output else None, _error_outcome(exc))
        return EXIT_USAGE
    commands = WorkflowCommands(stream, enabled=env.on_actions)
    for secret in env.secrets():
        commands.mask(secret)
    resume_token = commands.stop()
    try:
        outcome = _run(env, phase, fix, connect, result_dir)
    except FixbotError as exc:
        logger.error("action_failed", error=_loggable(str(exc), env), kind=type(exc).__name__)
        outcome = _error_outcome(exc)
    finally:
        commands.resume(resume_token)
    if outcome.status == "error":
        commands.error(redact(outcome.reason, known=env.secrets()))
    write_outputs(env.output, outcome)
    write_summary(env, outcome)
    logger.info(
        "action_finished",
        status=outcome.status,
        reason=_loggable(outcome.reason, env),
        exit_code=outcome.exit_code,
        pr_url=outcome.published.pr_url if outcome.published else "",
    )
    return outcome.exit_code


def _loggable(text: str, env: ActionEnv) -> str:
    """Text that may quote the model or the repository: secrets redacted, one inert line."""
    return neutral(redact(text, known=env.secrets()))


def _error_outcome(exc: FixbotError) -> ActionOutcome:
    return ActionOutcome(
        status="error",
        reason=str(exc),
        exit_code=exit_code("error", error_kind(exc)),
    )


def _run(
    env: ActionEnv,
    phase: Phase,
    fix: FixRunner,
    connect: PublisherFactory,
    result_dir: Path | None,
) -> ActionOutcome:
    if phase not in PHASES:
        raise UsageError(f"unknown phase {phase!r}: one of {', '.join(PHASES)}")
    decision = _decision(env)
    if isinstance(decision, Skip):
        return _skipped(env, decision)
    if isinstance(decision, Cleanup):
        return _cleanup(env, decision, connect, phase)
    config = trusted_config(env)
    never_fix = (*env.never_fix, *(config.never_fix_branches if config else ()))
    if decision.kind != "issue_comment" and (why := branch_refusal(decision, never_fix)):
        return _skipped(env, Skip(why))
    publisher = connect(env)
    try:
        return _triggered(env, decision, publisher, phase, fix, result_dir, config, never_fix)
    finally:
        publisher.close()


def _triggered(
    env: ActionEnv,
    decision: Trigger,
    publisher: Publisher,
    phase: Phase,
    fix: FixRunner,
    result_dir: Path | None,
    config: Config | None,
    never_fix: Sequence[str],
) -> ActionOutcome:
    trigger = asked_by_whom(decision, publisher, phase, never_fix)
    if isinstance(trigger, Skip):
        return _skipped(env, trigger)
    if isinstance(trigger, ActionOutcome):
        return trigger
    log.get().info(
        "triggered",
        kind=trigger.kind,
        commit=trigger.head_sha,
        branch=neutral(trigger.head_ref),
        pr=trigger.pr_number,
        command=trigger.command,
    )
    git = env.git()
    folder = (result_dir or env.out) if phase == "publish" else env.out
    fixing = phase != "publish"
    result = _fix(env, trigger, git, fix, publisher, config) if fixing else load_result(folder)
    diff_path = str(folder / "fix.diff") if result.status == "fixed" else ""
    published = None
    if phase != "fix":
        published = publish(
            result,
            trigger,
            publisher=publisher,
            git=git,
            draft=env.draft,
            default_token=env.default_token,
            secrets=env.secrets(),
            labels=env.labels,
            # The trusted checkout's globs; the hash the fix job reported, not the artifact's.
            protected=config.protected_paths if config is not None else DEFAULT_PROTECTED_PATHS,
            expected_sha256=env.diff_sha256 if phase == "publish" else None,
        )
        log.get().info(
            "published", action=published.action, pr=published.pr_number, url=published.pr_url
        )
    return ActionOutcome(
        result.status,
        result.reason,
        result.exit_code,
        result,
        published,
        diff_path,
        result.diff_sha256 if result.status == "fixed" else "",
    )


def _decision(env: ActionEnv) -> Trigger | Cleanup | Skip:
    try:
        text = env.event_path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read the event payload {env.event_path}: {exc}") from exc
    payload = load_payload(env.event_name, text)
    return decide(env.event_name, payload, never_fix=env.never_fix, sha=env.sha)


def _skipped(env: ActionEnv, skip: Skip) -> ActionOutcome:
    log.get().info("skipped", github_event=env.event_name, reason=neutral(skip.reason))
    return ActionOutcome(status="skipped", reason=skip.reason, exit_code=EXIT_OK)


def _cleanup(
    env: ActionEnv, decision: Cleanup, connect: PublisherFactory, phase: Phase
) -> ActionOutcome:
    why = f"{decision.branch} passes"
    if phase == "fix":  # closing PRs needs the write token: the publish job does it
        return ActionOutcome("cleanup", why, EXIT_OK)
    publisher = connect(env)
    try:
        done = cleanup(publisher, decision.repository, decision.branch, decision.head_sha)
    finally:
        publisher.close()
    log.get().info("cleanup", branch=neutral(decision.branch), closed=list(done.closed))
    return ActionOutcome("cleanup", why, EXIT_OK, published=done)


def _fix(
    env: ActionEnv,
    trigger: Trigger,
    git: Git,
    fix: FixRunner,
    publisher: Publisher,
    config: Config | None,
) -> FixResult:
    facts: dict[str, Any] = {"repo": str(env.workspace), "commit": trigger.head_sha}
    not_run: list[StepNotRun] = []
    try:
        git.ensure_commit(trigger.head_sha, pull=trigger.pr_number)
        job, not_run = fix_job(env, trigger, publisher, config)
        result = fix(job)
    except FixbotError as exc:
        result = error_result(exc, **facts)
    # What the CI ran and fixbot did not is named in the PR, the comment and the summary.
    result = replace(result, steps_not_run=not_run)
    if result.commit and result.commit != trigger.head_sha:
        result = error_result(
            UsageError(f"the fix ran on {result.commit[:12]}, not {trigger.head_sha[:12]}"),
            **facts,
        )
    # Recorded before anything is published: the publish step works from this file.
    write_result(result, env.out, known=env.secrets(), env=env.host)
    return result
