"""`fixbot action`: one GitHub Actions step, from the event to exactly one evidenced PR.

    environment -> event -> decision --Skip-------------------------> outputs (status skipped)
                                     --Cleanup----------------------> close superseded PRs
                                     --Trigger-> permission (comments only, fail closed)
                                               -> context: the failed run's jobs and log tails
                                                  (workflow_run), the escalated thread a /fix
                                                  comment answers (issue_comment)
                                               -> fix (the injected runner) -> FixResult file
                                               -> publish (push + PR + comment) -> outputs

`phase` splits the run for the two-job workflow: `fix` stops after the result is recorded (that
job holds no write token), `publish` starts from a recorded result (that job runs no repository
code). Both phases decide from the event themselves; the recorded result is read as data.

Untrusted text (branch names, comments, logs, model output) never reaches a shell. While fixbot
runs on Actions, workflow commands are stopped (`::stop-commands::`), so nothing it logs can
issue one; the token is masked first.
"""

from __future__ import annotations

import hashlib
import json
import secrets as random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol, TextIO

from fixbot import log
from fixbot.errors import FixbotError, UsageError
from fixbot.forge import runlog
from fixbot.forge.github.event import (
    Cleanup,
    Command,
    PullInfo,
    Skip,
    Trigger,
    decide,
    load_payload,
    with_pull,
)
from fixbot.forge.publish import (
    REFUSAL_MARKER,
    Git,
    Published,
    Publisher,
    cleanup,
    may_trigger,
    pending_thread,
    publish,
    refusal_comment,
    upsert_comment,
)
from fixbot.records import FailedJob
from fixbot.report import result as report
from fixbot.report.result import FixResult
from fixbot.secrets import redact

Phase = Literal["all", "fix", "publish"]
PHASES: tuple[str, ...] = ("all", "fix", "publish")
DEFAULT_CONFIG = ".fixbot.yml"
DEFAULT_LABELS = ("fixbot",)
_REQUIRED = ("GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_REPOSITORY", "GITHUB_WORKSPACE")


@dataclass(frozen=True)
class ActionEnv:
    """The Actions environment fixbot reads, parsed once; secrets stay out of repr."""

    event_name: str
    event_path: Path
    repository: str
    workspace: Path
    api_url: str
    server_url: str
    sha: str
    out: Path
    step_summary: Path | None
    output: Path | None
    config: Path | None
    draft: bool
    default_token: bool
    never_fix: tuple[str, ...]
    labels: tuple[str, ...]
    on_actions: bool
    token: str = field(repr=False)
    host: Mapping[str, str] = field(repr=False)  # the variables git may see (publish.Git)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ActionEnv:
        missing = [name for name in _REQUIRED if not environ.get(name)]
        if missing:
            raise UsageError(f"fixbot action: {', '.join(missing)} not set (run it on Actions)")
        workspace = Path(environ["GITHUB_WORKSPACE"]).resolve()
        out = environ.get("FIXBOT_OUT") or str(
            Path(environ.get("RUNNER_TEMP") or workspace / ".fixbot") / "fixbot-out"
        )
        config = environ.get("FIXBOT_CONFIG") or DEFAULT_CONFIG
        # No config file: the defaults. A file named explicitly must exist (load_config says so).
        absent = config == DEFAULT_CONFIG and not (workspace / config).exists()
        config_path = None if absent else workspace / config
        return cls(
            event_name=environ["GITHUB_EVENT_NAME"],
            event_path=Path(environ["GITHUB_EVENT_PATH"]),
            repository=environ["GITHUB_REPOSITORY"],
            workspace=workspace,
            api_url=environ.get("GITHUB_API_URL") or "https://api.github.com",
            server_url=environ.get("GITHUB_SERVER_URL") or "https://github.com",
            sha=environ.get("GITHUB_SHA", ""),
            out=Path(out).resolve(),
            step_summary=_optional_path(environ.get("GITHUB_STEP_SUMMARY")),
            output=_optional_path(environ.get("GITHUB_OUTPUT")),
            config=config_path,
            draft=_flag(environ, "FIXBOT_DRAFT", default=True),
            default_token=_flag(environ, "FIXBOT_DEFAULT_TOKEN", default=True),
            never_fix=_names(environ.get("FIXBOT_NEVER_FIX", "")),
            labels=_labels(environ.get("FIXBOT_LABELS")),
            on_actions=environ.get("GITHUB_ACTIONS") == "true",
            token=environ.get("GITHUB_TOKEN", ""),
            host=dict(environ),
        )

    def git(self) -> Git:
        return Git(self.workspace, self.server_url, self.token, host_env=self.host)

    def secrets(self) -> list[str]:
        known = [*self.git().secrets(), self.host.get("OPENAI_API_KEY", "")]
        return [s for s in known if s]


def _names(value: str) -> tuple[str, ...]:
    """One per line or comma-separated."""
    return tuple(n.strip() for n in value.replace(",", "\n").splitlines() if n.strip())


def _labels(value: str | None) -> tuple[str, ...]:
    """The fix PR's labels; unset: the input's default, set empty: none."""
    if value is None:
        return DEFAULT_LABELS
    labels = _names(value)
    for label in labels:
        if len(label) > 50:  # GitHub's limit for a label name
            raise UsageError(f"the label {label[:60]!r}... is longer than 50 characters")
    return labels


def _optional_path(value: str | None) -> Path | None:
    return Path(value) if value else None


def _flag(environ: Mapping[str, str], name: str, *, default: bool) -> bool:
    value = environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise UsageError(f"{name} must be true or false, not {value!r}")


@dataclass(frozen=True)
class FixJob:
    """What the fix runner is asked to do: fix `commit` of the checkout at `repo`."""

    repo: Path  # the trusted checkout (its config and policy apply, not the PR head's)
    commit: str  # the failing commit, present in `repo`
    hint: str
    command: Command  # "fix", or "abort" to answer an escalation
    out: Path  # where the runner may write its own outputs
    config_file: Path | None  # the config named by the action's `config` input
    trigger: Trigger
    # The escalated run this command answers (fixbot's comment on the PR names it); "" if none.
    thread: str = ""
    # The failed run's jobs and log tails: untrusted context for the model, never commands.
    ci_jobs: tuple[FailedJob, ...] = ()


class FixRunner(Protocol):
    def __call__(self, job: FixJob) -> FixResult: ...


PublisherFactory = Callable[[ActionEnv], Publisher]


@dataclass(frozen=True)
class Outcome:
    status: str  # a FixResult status, or skipped | refused | cleanup
    reason: str
    exit_code: int
    result: FixResult | None = None
    published: Published | None = None
    diff_path: str = ""


class WorkflowCommands:
    """The few workflow commands fixbot issues itself, only on Actions, with escaped data."""

    def __init__(self, stream: TextIO, *, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled

    def _emit(self, line: str) -> None:
        if self.enabled:
            self.stream.write(line + "\n")
            self.stream.flush()

    def mask(self, value: str) -> None:
        if value:
            self._emit(f"::add-mask::{escape_data(value)}")

    def stop(self) -> str:
        token = random.token_hex(16)
        self._emit(f"::stop-commands::{token}")
        return token

    def resume(self, token: str) -> None:
        self._emit(f"::{token}::")

    def error(self, message: str) -> None:
        self._emit(f"::error title=fixbot::{escape_data(message)}")

    def notice(self, message: str) -> None:
        self._emit(f"::notice title=fixbot::{escape_data(message)}")


def escape_data(text: str) -> str:
    """Workflow-command data escaping (as @actions/core does): one line, no `%` ambiguity."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def neutral(text: str) -> str:
    """Untrusted text for a log line: one line, and never a workflow command."""
    one_line = text.replace("\r", "\\r").replace("\n", "\\n")
    return ("\u200b" + one_line) if one_line.lstrip().startswith("::") else one_line


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
        _write_outputs(_optional_path(environ.get("GITHUB_OUTPUT")), _error_outcome(exc), None)
        return report.EXIT_USAGE
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
    _write_outputs(env.output, outcome, env)
    _write_summary(env, outcome)
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


def _error_outcome(exc: FixbotError) -> Outcome:
    return Outcome(
        status="error",
        reason=str(exc),
        exit_code=report.exit_code("error", report.error_kind(exc)),
    )


def _run(
    env: ActionEnv,
    phase: Phase,
    fix: FixRunner,
    connect: PublisherFactory,
    result_dir: Path | None,
) -> Outcome:
    if phase not in PHASES:
        raise UsageError(f"unknown phase {phase!r}: one of {', '.join(PHASES)}")
    decision = _decision(env)
    if isinstance(decision, Skip):
        return _skipped(env, decision)
    if isinstance(decision, Cleanup):
        return _cleanup(env, decision, connect, phase)
    publisher = connect(env)
    try:
        return _triggered(env, decision, publisher, phase, fix, result_dir)
    finally:
        publisher.close()


def _triggered(
    env: ActionEnv,
    decision: Trigger,
    publisher: Publisher,
    phase: Phase,
    fix: FixRunner,
    result_dir: Path | None,
) -> Outcome:
    trigger = _asked_by_whom(env, decision, publisher, phase)
    if isinstance(trigger, Outcome):
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
    result = _fix(env, trigger, git, fix, publisher) if fixing else load_result(folder)
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
        )
        log.get().info(
            "published", action=published.action, pr=published.pr_number, url=published.pr_url
        )
    return Outcome(result.status, result.reason, result.exit_code, result, published, diff_path)


def _decision(env: ActionEnv) -> Trigger | Cleanup | Skip:
    try:
        text = env.event_path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read the event payload {env.event_path}: {exc}") from exc
    payload = load_payload(env.event_name, text)
    return decide(env.event_name, payload, never_fix=env.never_fix, sha=env.sha)


def _skipped(env: ActionEnv, skip: Skip) -> Outcome:
    log.get().info("skipped", github_event=env.event_name, reason=neutral(skip.reason))
    return Outcome(status="skipped", reason=skip.reason, exit_code=report.EXIT_OK)


def _cleanup(env: ActionEnv, decision: Cleanup, connect: PublisherFactory, phase: Phase) -> Outcome:
    why = f"{decision.branch} passes"
    if phase == "fix":  # closing PRs needs the write token: the publish job does it
        return Outcome("cleanup", why, report.EXIT_OK)
    publisher = connect(env)
    try:
        done = cleanup(publisher, decision.repository, decision.branch, decision.head_sha)
    finally:
        publisher.close()
    log.get().info("cleanup", branch=neutral(decision.branch), closed=list(done.closed))
    return Outcome("cleanup", why, report.EXIT_OK, published=done)


def _asked_by_whom(
    env: ActionEnv, trigger: Trigger, publisher: Publisher, phase: Phase
) -> Trigger | Outcome:
    """A comment's trigger, checked (permission, fail closed) and resolved to its PR's head."""
    if trigger.kind != "issue_comment":
        return trigger
    refused = _refusal(trigger, publisher, phase)
    if refused is not None:
        return refused
    resolved = _resolve_pull(trigger, publisher, env)
    return _skipped(env, resolved) if isinstance(resolved, Skip) else resolved


def _refusal(trigger: Trigger, publisher: Publisher, phase: Phase) -> Outcome | None:
    allowed, why = may_trigger(publisher, trigger.actor)
    if allowed:
        return None
    log.get().info("refused", user=neutral(trigger.actor), reason=neutral(why))
    if phase != "fix" and trigger.pr_number is not None:
        # One refusal comment per PR, edited in place: repeated /fix from a reader adds nothing.
        upsert_comment(
            publisher, trigger.pr_number, refusal_comment(trigger.actor), marker=REFUSAL_MARKER
        )
    return Outcome(status="refused", reason=why, exit_code=report.EXIT_OK)


def _resolve_pull(trigger: Trigger, publisher: Publisher, env: ActionEnv) -> Trigger | Skip:
    assert trigger.pr_number is not None
    pull = publisher.get_pull(trigger.pr_number)
    info = PullInfo(
        number=pull.number,
        head_sha=pull.head_sha,
        head_ref=pull.head_ref,
        head_repository=pull.head_repository,
        base_ref=pull.base_ref,
        state=pull.state,
    )
    return with_pull(trigger, info, never_fix=env.never_fix)


def _fix(
    env: ActionEnv, trigger: Trigger, git: Git, fix: FixRunner, publisher: Publisher
) -> FixResult:
    facts: dict[str, Any] = {"repo": str(env.workspace), "commit": trigger.head_sha}
    try:
        git.ensure_commit(trigger.head_sha, pull=trigger.pr_number)
        job = FixJob(
            repo=env.workspace,
            commit=trigger.head_sha,
            hint=trigger.hint,
            command=trigger.command,
            out=env.out,
            config_file=env.config,
            trigger=trigger,
            thread=_answered_thread(env, trigger, publisher),
            ci_jobs=_failed_jobs(env, trigger, publisher),
        )
        result = fix(job)
    except FixbotError as exc:
        result = report.error_result(exc, **facts)
    if result.commit and result.commit != trigger.head_sha:
        result = report.error_result(
            UsageError(f"the fix ran on {result.commit[:12]}, not {trigger.head_sha[:12]}"),
            **facts,
        )
    # Recorded before anything is published: the publish step works from this file.
    report.write_outputs(result, env.out, known=env.secrets())
    return result


def _answered_thread(env: ActionEnv, trigger: Trigger, publisher: Publisher) -> str:
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


def _failed_jobs(env: ActionEnv, trigger: Trigger, publisher: Publisher) -> tuple[FailedJob, ...]:
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


def load_result(folder: Path) -> FixResult:
    """A recorded result, read as data: evidence.json, and fix.diff checked against its hash."""
    try:
        data = json.loads((folder / "evidence.json").read_text(encoding="utf-8"))
        recorded_sha = data.get("diff_sha256", "")
        result = FixResult.from_json(json.dumps(data))
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise UsageError(f"no readable fixbot result in {folder}: {exc}") from exc
    if result.status not in ("fixed", "already_passing", "escalated", "aborted", "error"):
        raise UsageError(f"the recorded result has an unknown status {result.status!r}")
    if result.status != "fixed":
        return result
    try:
        diff = (folder / "fix.diff").read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"the recorded result is fixed but {folder}/fix.diff is missing") from exc
    if hashlib.sha256(diff.encode()).hexdigest() != recorded_sha:
        raise UsageError("fix.diff does not match the SHA-256 recorded in evidence.json")
    return replace(result, diff=diff)


def _write_outputs(path: Path | None, outcome: Outcome, env: ActionEnv | None) -> None:
    if path is None:
        return
    published = outcome.published
    values = {
        "status": outcome.status,
        "pr-url": published.pr_url if published else "",
        "pr-number": str(published.pr_number) if published and published.pr_number else "",
        "diff-path": outcome.diff_path,
    }
    with path.open("a", encoding="utf-8") as handle:
        for name, value in values.items():
            handle.write(_output_entry(name, value))


def _output_entry(name: str, value: str) -> str:
    """`name<<DELIM` heredoc with a random delimiter that cannot occur in the value."""
    while True:
        delimiter = f"ghadelimiter_{random.token_hex(16)}"
        if delimiter not in value:
            return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def _write_summary(env: ActionEnv, outcome: Outcome) -> None:
    if env.step_summary is None:
        return
    lines: list[str] = []
    if outcome.result is not None:
        lines.append(report.render_markdown(outcome.result))
    else:
        lines.append(f"**fixbot:** {outcome.status}: {_inline(outcome.reason)}\n")
    published = outcome.published
    if published is not None and published.pr_url:
        lines.append(f"**Pull request:** {published.pr_url} ({published.action})\n")
    if published is not None and published.closed:
        closed = ", ".join(f"#{n}" for n in published.closed)
        lines.append(f"**Closed as superseded:** {closed}\n")
    text = redact("\n".join(lines), known=env.secrets())
    with env.step_summary.open("a", encoding="utf-8") as handle:
        handle.write(text + "\n")


def _inline(text: str) -> str:
    return " ".join(text.split()).replace("<", "&lt;")


def secrets_of(environ: Mapping[str, str]) -> Sequence[str]:
    """For cli.py's log set-up: the token, the auth header made from it, the model key."""
    try:
        return ActionEnv.from_environ(environ).secrets()
    except UsageError:
        return [v for v in (environ.get("GITHUB_TOKEN"), environ.get("OPENAI_API_KEY")) if v]
