"""What the fix is given besides the commit: the failed run's jobs and log tails (untrusted
context for the model), and the escalated thread a `/fix` comment answers. Context only: what
goes wrong reading it is a warning, and the fix goes on without it."""

from __future__ import annotations

from fixbot import log
from fixbot.errors import FixbotError
from fixbot.forge import Publisher, Trigger, pending_thread, runlog
from fixbot.forge.github.actions import ActionEnv, neutral
from fixbot.records import FailedJob
from fixbot.secrets import redact


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


def failed_jobs(env: ActionEnv, trigger: Trigger, publisher: Publisher) -> tuple[FailedJob, ...]:
    """The failed run's failed jobs, steps and log tails, for the model to read. Context only:
    whatever goes wrong reading them is a warning, and the fix goes on without."""
    if trigger.kind != "workflow_run" or trigger.run_id is None:
        return ()
    try:
        jobs = runlog.failed(publisher.run_jobs(trigger.run_id))
    except Exception as exc:  # context is optional: the fix never depends on it
        log.get().warning("ci_logs_unavailable", run_id=trigger.run_id, error=_why(exc, env))
        return ()
    shown: list[FailedJob] = []
    for job in jobs[: runlog.MAX_JOBS]:
        try:
            raw = publisher.job_log(job.id, max_bytes=runlog.DOWNLOAD_BYTES)
        except Exception as exc:  # as above: this job is shown without its log
            log.get().warning("ci_log_unavailable", job_id=job.id, error=_why(exc, env))
            raw = ""
        shown.append(runlog.failed_job(job, raw, secrets=env.secrets()))
    log.get().info(
        "ci_context",
        run_id=trigger.run_id,
        failed_jobs=len(jobs),
        shown=[neutral(job["name"]) for job in shown],
        log_lines=[job["log_tail"].count("\n") + bool(job["log_tail"]) for job in shown],
    )
    return tuple(shown)


def _why(exc: Exception, env: ActionEnv) -> str:
    return _loggable(str(exc) if isinstance(exc, FixbotError) else type(exc).__name__, env)
