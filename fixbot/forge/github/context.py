"""What the fix is given besides the commit: the failed run's jobs and log tails (untrusted
context for the model), its failed steps as checks (from the trusted workflow file), and the
escalated thread a `/fix` comment answers. Context only: what goes wrong reading it is a
warning, and the fix goes on without it (with the config's checks)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from fixbot import log
from fixbot.commands import CheckSpec
from fixbot.config import Config, load_config, names_no_checks
from fixbot.errors import ConfigError, FixbotError
from fixbot.forge import JobSummary, Publisher, Trigger, pending_thread, runlog
from fixbot.forge.github.actions import ActionEnv, FixJob, neutral
from fixbot.forge.github.derive import Found, derive, one_line, proposed_checks
from fixbot.forge.github.workflows import (
    Workflow,
    WorkflowError,
    may_have_failed,
    parse_workflow,
    steps_named,
)
from fixbot.records import FINDING_KINDS, FailedJob, StepNotRun
from fixbot.secrets import redact
from fixbot.snapshot import read_inside

MAX_NOT_RUN = 20  # failed steps (or commands in them) named as not run


def _loggable(text: str, env: ActionEnv) -> str:
    """Text that may quote the model or the repository: secrets redacted, one inert line."""
    return neutral(redact(text, known=env.secrets()))


def answered_thread(env: ActionEnv, trigger: Trigger, publisher: Publisher) -> str:
    """The escalated thread a `/fix` comment answers: the one fixbot's comment on the PR names."""
    if trigger.kind != "issue_comment" or trigger.pr_number is None:
        return ""
    try:
        thread = pending_thread(publisher, trigger.pr_number)
    except FixbotError as exc:  # unreadable comments: the command still runs, as a fresh fix
        log.get().warning("comments_unreadable", error=_loggable(str(exc), env))
        return ""
    if thread:
        log.get().info("answering", thread_id=thread, command=trigger.command)
    return thread


def run_jobs(env: ActionEnv, trigger: Trigger, publisher: Publisher) -> list[JobSummary]:
    """The failed run's jobs (their failed steps named), read once. Context only: an API error
    is a warning, and the fix goes on without them."""
    if trigger.kind != "workflow_run" or trigger.run_id is None:
        return []
    try:
        return publisher.run_jobs(trigger.run_id)
    except Exception as exc:  # context is optional: the fix never depends on it
        log.get().warning("ci_logs_unavailable", run_id=trigger.run_id, error=_why(exc, env))
        return []


def failed_jobs(
    env: ActionEnv, trigger: Trigger, jobs: Sequence[JobSummary], publisher: Publisher
) -> tuple[FailedJob, ...]:
    """The failed jobs, their failed steps and log tails, for the model to read. Context only:
    a log that cannot be read is a warning, and the job is shown without it."""
    failed = runlog.failed(jobs)
    if not failed:
        return ()
    shown: list[FailedJob] = []
    for job in failed[: runlog.MAX_JOBS]:
        try:
            raw = publisher.job_log(job.id, max_bytes=runlog.DOWNLOAD_BYTES)
        except Exception as exc:  # as above: this job is shown without its log
            log.get().warning("ci_log_unavailable", job_id=job.id, error=_why(exc, env))
            raw = ""
        shown.append(runlog.failed_job(job, raw, secrets=env.secrets()))
    log.get().info(
        "ci_context",
        run_id=trigger.run_id,
        failed_jobs=len(failed),
        shown=[neutral(job["name"]) for job in shown],
        log_lines=[job["log_tail"].count("\n") + bool(job["log_tail"]) for job in shown],
    )
    return tuple(shown)


def ci_checks(
    env: ActionEnv, trigger: Trigger, jobs: Sequence[JobSummary]
) -> tuple[tuple[CheckSpec, ...], list[StepNotRun]]:
    """The failed run's failed steps as checks: matched by name to the `run:` steps of the
    run's workflow file in the trusted checkout (never a PR head's copy), split into argv by
    derive, never run through a shell; and each failed step (or command in it) fixbot does
    not run, with why. The file's ruff and mypy steps known not to have failed (any job;
    passed, or skipped after the failure) come after them as "no new findings" gates: the PR's
    CI runs them too, so a candidate that adds a finding would turn it red, while what they
    find at the failing commit blocks nothing."""
    failed = runlog.failed(jobs)
    if trigger.kind != "workflow_run" or not failed:
        return (), []
    workflow, unreadable = _workflow(env, trigger)
    found: list[Found] = []
    not_run: list[StepNotRun] = []
    for job in failed:
        named = steps_named(workflow, job.name, job.failed_steps) if workflow else []
        for api_name, steps in zip(job.failed_steps, named or job.failed_steps, strict=True):
            where = (one_line(job.name), one_line(api_name))
            if isinstance(steps, str):
                why = unreadable or f"no step of {trigger.workflow_path} is shown by this name"
                not_run.append(_not_run(where, "", why))
                continue
            derived = derive(steps, env.workspace)
            found += derived.checks
            not_run += [_not_run(where, left.text, left.why) for left in derived.unmapped]
            for install in derived.installs:
                why = "an install: fixbot's prepare step runs setup_command, not the CI's"
                not_run.append(_not_run(where, shlex.join(install.argv), why))
    guards = _guards(workflow, failed, env.workspace) if workflow and found else []
    passed = {item.argv for item in guards} - {item.argv for item in found}
    checks = proposed_checks([*found, *guards], gates=passed)
    log.get().info(
        "ci_checks",
        workflow=trigger.workflow_path,
        checks=[f"{check.name}: {neutral(check.run)}" for check in checks],
        not_run=len(not_run),
    )
    return checks, not_run[:MAX_NOT_RUN]


def _guards(workflow: Workflow, failed: Sequence[JobSummary], root: Path) -> list[Found]:
    """The workflow's ruff and mypy commands in steps known not to have failed in this run
    (a step a failed name may show, or any step of a job whose failed step the file no longer
    shows, may be the failed one: never a mere gate)."""
    suspect = may_have_failed(workflow, [(job.name, job.failed_steps) for job in failed])
    steps = [step for step in workflow.steps if step not in suspect]
    return [item for item in derive(steps, root).checks if item.kind in FINDING_KINDS]


def _not_run(where: tuple[str, str], command: str, why: str) -> StepNotRun:
    return StepNotRun(job=where[0], step=where[1], command=command, why=why)


def _workflow(env: ActionEnv, trigger: Trigger) -> tuple[Workflow | None, str]:
    """The run's workflow file, read from the trusted checkout; else None and why."""
    path = trigger.workflow_path
    text = read_inside(env.workspace, path) if path else None
    if text is None:
        return None, f"the run's workflow file ({path or 'unknown'}) is not in the checkout"
    try:
        return parse_workflow(text, path), ""
    except WorkflowError as exc:
        return None, str(exc)


def trusted_config(env: ActionEnv) -> Config | None:
    """The trusted checkout's config, read as data (its never_fix_branches join the input's;
    whether it names checks). One the loader refuses is None here: the fix records that error
    as its result, and the publish step reports it, as for any failed run."""
    try:
        return load_config(env.workspace, config_file=env.config, overrides=env.inputs.overrides())
    except ConfigError as exc:
        log.get().warning("config_refused", error=_loggable(str(exc), env))
        return None


def fix_job(
    env: ActionEnv, trigger: Trigger, publisher: Publisher, config: Config | None
) -> tuple[FixJob, list[StepNotRun]]:
    """What the fix runner is asked, with its context; and the failed steps it will not run.
    `config`: the trusted one (None: refused by the loader, which the runner will report)."""
    jobs = run_jobs(env, trigger, publisher)
    checks: tuple[CheckSpec, ...] = ()
    not_run: list[StepNotRun] = []
    if config is not None and names_no_checks(config):  # the CI's failed steps are the checks
        checks, not_run = ci_checks(env, trigger, jobs)
    job = FixJob(
        repo=env.workspace,
        commit=trigger.head_sha,
        hint=trigger.hint,
        command=trigger.command,
        out=env.out,
        config_file=env.config,
        trigger=trigger,
        thread=answered_thread(env, trigger, publisher),
        ci_jobs=failed_jobs(env, trigger, jobs, publisher),
        inputs=env.inputs,
        checks=checks,
    )
    return job, not_run


def _why(exc: Exception, env: ActionEnv) -> str:
    return _loggable(str(exc) if isinstance(exc, FixbotError) else type(exc).__name__, env)
