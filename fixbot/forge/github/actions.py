"""The Actions environment fixbot reads, and what it writes back: workflow commands, the step's
outputs and its summary. Parsed once, here; secrets stay out of repr."""

from __future__ import annotations

import secrets as random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TextIO

from fixbot.commands import CheckSpec
from fixbot.config import Inputs
from fixbot.errors import UsageError
from fixbot.forge import Command, Git, Published, Publisher, Trigger
from fixbot.inert import prose
from fixbot.paths import StateDir
from fixbot.records import FailedJob, RunStatus
from fixbot.report import FixResult, render_markdown
from fixbot.secrets import redact

Phase = Literal["all", "fix", "publish"]
# What one Actions run ends with: a run's status, or what happened instead of a run.
ActionStatus = RunStatus | Literal["skipped", "refused", "cleanup"]
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
    host: Mapping[str, str] = field(repr=False)  # the variables git may see (forge.Git)
    # The `fix` phase's inputs (model, base-url, sandbox, max-iterations) over the config.
    inputs: Inputs = field(default_factory=Inputs)
    # For `publish`: the fix job's own SHA-256 of fix.diff (its `diff-sha256` output).
    diff_sha256: str = ""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ActionEnv:
        missing = [name for name in _REQUIRED if not environ.get(name)]
        if missing:
            raise UsageError(f"fixbot action: {', '.join(missing)} not set (run it on Actions)")
        workspace = Path(environ["GITHUB_WORKSPACE"]).resolve()
        out = environ.get("FIXBOT_OUT") or str(
            Path(environ.get("RUNNER_TEMP") or StateDir(workspace).root) / "fixbot-out"
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
            inputs=_inputs(environ),
            diff_sha256=environ.get("FIXBOT_DIFF_SHA256", "").strip(),
        )

    def git(self) -> Git:
        return Git(self.workspace, self.server_url, self.token, host_env=self.host)

    def secrets(self) -> list[str]:
        known = [*self.git().secrets(), self.host.get("OPENAI_API_KEY", "")]
        return [s for s in known if s]


def _inputs(environ: Mapping[str, str]) -> Inputs:
    """The action's model, base-url, sandbox and max-iterations inputs over the config."""
    iterations = None
    if environ.get("FIXBOT_MAX_ITERATIONS"):
        try:
            iterations = int(environ["FIXBOT_MAX_ITERATIONS"])
        except ValueError:
            raise UsageError("max-iterations must be a whole number") from None
    return Inputs(sandbox=environ.get("FIXBOT_SANDBOX") or None, max_iterations=iterations).over(
        environ
    )


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
    # The action's model, base-url, sandbox and max-iterations inputs, over the config.
    inputs: Inputs = field(default_factory=Inputs)
    # The failed run's failed steps as checks (from the trusted workflow file), for a config
    # that names none of its own: they are that run's `checks`. Empty: the config's apply.
    checks: tuple[CheckSpec, ...] = ()


class FixRunner(Protocol):
    def __call__(self, job: FixJob) -> FixResult: ...


PublisherFactory = Callable[[ActionEnv], Publisher]


@dataclass(frozen=True)
class ActionOutcome:
    status: ActionStatus
    reason: str
    exit_code: int
    result: FixResult | None = None
    published: Published | None = None
    diff_path: str = ""
    diff_sha256: str = ""  # of the fix.diff this run wrote or published


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


def write_outputs(path: Path | None, outcome: ActionOutcome) -> None:
    if path is None:
        return
    published = outcome.published
    values = {
        "status": outcome.status,
        "pr-url": published.pr_url if published else "",
        "pr-number": str(published.pr_number) if published and published.pr_number else "",
        "diff-path": outcome.diff_path,
        "diff-sha256": outcome.diff_sha256,
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


def write_summary(env: ActionEnv, outcome: ActionOutcome) -> None:
    if env.step_summary is None:
        return
    lines: list[str] = []
    if outcome.result is not None:
        lines.append(render_markdown(outcome.result))
    else:
        lines.append(f"**fixbot:** {outcome.status}: {prose(outcome.reason)}\n")
    published = outcome.published
    if published is not None and published.pr_url:
        lines.append(f"**Pull request:** {published.pr_url} ({published.action})\n")
    if published is not None and published.closed:
        closed = ", ".join(f"#{n}" for n in published.closed)
        lines.append(f"**Closed as superseded:** {closed}\n")
    text = redact("\n".join(lines), known=env.secrets())
    with env.step_summary.open("a", encoding="utf-8") as handle:
        handle.write(text + "\n")


def secrets_of(environ: Mapping[str, str]) -> Sequence[str]:
    """For cli.py's log set-up: the token, the auth header made from it, the model key."""
    try:
        return ActionEnv.from_environ(environ).secrets()
    except UsageError:
        return [v for v in (environ.get("GITHUB_TOKEN"), environ.get("OPENAI_API_KEY")) if v]
