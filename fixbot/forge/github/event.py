"""A GitHub event payload -> what fixbot should do about it: fix, clean up, or nothing.

Pure: no network, no environment. `decide` reads a `workflow_run`, `issue_comment` or
`workflow_dispatch` payload and returns one of

    Trigger   fix this commit (a failed run, a `/fix` comment, a manual dispatch)
    Cleanup   this branch's checks turned green: fixbot's PRs into it are superseded
    Skip      not for fixbot, with the reason (edited comment, bot, own branch, ...)

An `issue_comment` payload names the pull request but not its head: the caller looks the PR up
and passes it through `with_pull`, which applies the same branch rules.

A payload that is not JSON, misses a field fixbot needs, or comes from an event fixbot does not
handle is a UsageError naming the event and the field (exit 2).

Every string taken from a payload is untrusted (branch names, comment bodies, logins): it is
data for API calls and argv lists, never for a shell.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from fixbot.errors import UsageError
from fixbot.forge.trigger import (
    BRANCH_PREFIX,
    Cleanup,
    Command,
    Decision,
    PullInfo,
    Skip,
    Trigger,
    commit_id,
)

EVENTS: tuple[str, ...] = ("workflow_run", "issue_comment", "workflow_dispatch")
HINT_CAP = 500
_WORKFLOW_FILE = re.compile(r"\.github/workflows/[A-Za-z0-9_.-]+\.ya?ml")

_T = TypeVar("_T")


def load_payload(event_name: str, text: str | bytes) -> Mapping[str, Any]:
    try:
        payload = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"the {event_name} event payload is not valid JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise UsageError(f"the {event_name} event payload is not a JSON object")
    return payload


def decide(
    event_name: str,
    payload: Mapping[str, Any],
    *,
    never_fix: Sequence[str] = (),
    sha: str = "",
) -> Decision:
    """The pure decision. `never_fix`: branch globs fixbot must leave alone. `sha`: the
    commit the run was dispatched on ($GITHUB_SHA), which a workflow_dispatch payload lacks."""
    if event_name not in EVENTS:
        raise UsageError(f"unsupported event {event_name!r}: fixbot handles {', '.join(EVENTS)}")
    fields = _Fields(event_name, payload)
    if event_name == "workflow_run":
        return _workflow_run(fields, never_fix)
    if event_name == "issue_comment":
        return _issue_comment(fields)
    return _workflow_dispatch(fields, never_fix, sha)


def with_pull(trigger: Trigger, pull: PullInfo, *, never_fix: Sequence[str] = ()) -> Trigger | Skip:
    """A comment's trigger completed with its pull request's head, under the branch rules."""
    if pull.state != "open":
        return Skip(f"pull request #{pull.number} is {pull.state}")
    resolved = replace(
        trigger,
        head_sha=commit_id(pull.head_sha, f"the head of pull request #{pull.number}"),
        head_ref=pull.head_ref,
        head_repository=pull.head_repository,
    )
    if not pull.head_repository:
        return Skip(f"the head repository of pull request #{pull.number} no longer exists")
    why = branch_refusal(resolved, never_fix)
    return Skip(why) if why else resolved


def parse_command(body: str) -> tuple[Command, str] | None:
    """`/fix`, `/fix <hint>` or `/fix abort` on the comment's first line; anything else: None."""
    lines = body.lstrip("\ufeff").splitlines() or [""]
    words = lines[0].split(None, 1)
    if not words or words[0] != "/fix":
        return None
    hint = _clean(words[1].strip()) if len(words) > 1 else ""
    if hint.lower() == "abort":
        return "abort", ""
    return "fix", hint


def is_bot(user: Mapping[str, Any]) -> bool:
    login = str(user.get("login") or "")
    return user.get("type") == "Bot" or login.lower().endswith("[bot]")


def _clean(text: str) -> str:
    """A hint as plain text: printable characters only, capped."""
    kept = "".join(ch if ch.isprintable() else " " for ch in text)
    return kept[:HINT_CAP]


def _workflow_run(fields: _Fields, never_fix: Sequence[str]) -> Decision:
    action = fields.get("action", str)
    if action != "completed":
        return Skip(f"workflow run is {action}, not completed")
    run = fields.get("workflow_run", dict)
    conclusion = fields.optional("workflow_run.conclusion", str) or ""
    repository = fields.get("repository.full_name", str)
    head_repository = fields.optional("workflow_run.head_repository.full_name", str) or ""
    head_ref = fields.optional("workflow_run.head_branch", str) or ""
    head_sha = commit_id(fields.get("workflow_run.head_sha", str), "workflow_run.head_sha")
    actor = fields.optional("workflow_run.triggering_actor", dict) or fields.get(
        "workflow_run.actor", dict
    )
    if not head_ref:
        return Skip("the run is not on a branch")
    if head_repository.lower() != repository.lower():
        return Skip(
            "the failing run came from a fork: fixbot does not act on it automatically; "
            "a maintainer can comment /fix on the pull request"
        )
    if head_ref.startswith(BRANCH_PREFIX):
        return Skip(f"{head_ref!r} is one of fixbot's own branches")
    if conclusion == "success":
        return Cleanup(repository=repository, branch=head_ref, head_sha=head_sha)
    if conclusion != "failure":
        return Skip(f"workflow run concluded {conclusion or 'without a conclusion'}, not failure")
    if is_bot(actor):
        return Skip(f"the run was triggered by a bot ({actor.get('login')})")
    trigger = Trigger(
        kind="workflow_run",
        repository=repository,
        head_sha=head_sha,
        head_ref=head_ref,
        head_repository=head_repository,
        default_branch=fields.get("repository.default_branch", str),
        actor=str(actor.get("login") or ""),
        pr_number=_same_repo_pull(run, repository),
        workflow=str(fields.optional("workflow.name", str) or run.get("name") or ""),
        run_id=fields.optional("workflow_run.id", int),
        run_url=fields.optional("workflow_run.html_url", str) or "",
        workflow_path=_workflow_file(fields.optional("workflow_run.path", str) or ""),
    )
    why = branch_refusal(trigger, never_fix)
    return Skip(why) if why else trigger


def _workflow_file(path: str) -> str:
    """The run's workflow file in this repository (`.github/workflows/ci.yml`, a ref after `@`
    dropped); "" for anything else (a reusable or a dynamic workflow's path)."""
    path = path.split("@", 1)[0]
    return path if _WORKFLOW_FILE.fullmatch(path) else ""


def _same_repo_pull(run: Mapping[str, Any], repository: str) -> int | None:
    """The run's pull request, when GitHub lists one (it does only for same-repository PRs)."""
    pulls = run.get("pull_requests")
    if not isinstance(pulls, list):
        return None
    for pull in pulls:
        number = pull.get("number") if isinstance(pull, dict) else None
        if isinstance(number, int) and not isinstance(number, bool):
            return number
    return None


def _issue_comment(fields: _Fields) -> Decision:
    action = fields.get("action", str)
    if action != "created":
        return Skip(f"comment was {action}; only new comments are commands")
    user = fields.get("comment.user", dict)
    body = fields.optional("comment.body", str) or ""
    parsed = parse_command(body)
    if parsed is None:
        return Skip("the comment's first line is not a /fix command")
    if is_bot(user):
        return Skip(f"the comment is from a bot ({user.get('login')})")
    if not fields.optional("issue.pull_request", dict):
        return Skip("/fix works on pull requests, not issues")
    command, hint = parsed
    repository = fields.get("repository.full_name", str)
    return Trigger(
        kind="issue_comment",
        repository=repository,
        head_sha="",
        head_ref="",
        head_repository=repository,
        default_branch=fields.get("repository.default_branch", str),
        actor=fields.get("comment.user.login", str),
        pr_number=fields.get("issue.number", int),
        command=command,
        hint=hint,
        comment_id=fields.optional("comment.id", int),
        commented_at=fields.get("comment.created_at", str),
    )


def _workflow_dispatch(fields: _Fields, never_fix: Sequence[str], sha: str) -> Decision:
    ref = fields.get("ref", str)
    sender = fields.get("sender", dict)
    if not ref.startswith("refs/heads/"):
        return Skip(f"dispatched on {ref!r}, not a branch")
    if is_bot(sender):
        return Skip(f"dispatched by a bot ({sender.get('login')})")
    if not sha:
        raise UsageError("workflow_dispatch: the dispatched commit is unknown (set GITHUB_SHA)")
    commit_id(sha, "GITHUB_SHA")
    inputs = fields.optional("inputs", dict) or {}
    hint = inputs.get("hint")
    repository = fields.get("repository.full_name", str)
    trigger = Trigger(
        kind="workflow_dispatch",
        repository=repository,
        head_sha=sha,
        head_ref=ref.removeprefix("refs/heads/"),
        head_repository=repository,
        default_branch=fields.get("repository.default_branch", str),
        actor=fields.get("sender.login", str),
        hint=_clean(hint) if isinstance(hint, str) else "",
    )
    why = branch_refusal(trigger, never_fix)
    return Skip(why) if why else trigger


def branch_refusal(trigger: Trigger, never_fix: Sequence[str]) -> str:
    """Why fixbot leaves the trigger's branch alone ("" when it may fix it): one of its own
    branches, or (in this repository) a never-fix glob: the action's `never-fix` input and the
    config's `never_fix_branches`, one list. The default branch is fixed like any other,
    through a PR against it (fixbot never pushes to it: forge.check_branch)."""
    ref = trigger.head_ref
    if ref.startswith(BRANCH_PREFIX):
        return f"{ref!r} is one of fixbot's own branches"
    if not trigger.from_fork:
        for glob in never_fix:
            if fnmatch.fnmatchcase(ref, glob):
                return f"{ref!r} matches the never-fix pattern {glob!r}"
    return ""


class _Fields:
    """Typed access to dotted payload paths; a missing or ill-typed one is a UsageError."""

    def __init__(self, event_name: str, payload: Mapping[str, Any]) -> None:
        self.event_name = event_name
        self.payload = payload

    def optional(self, path: str, kind: type[_T]) -> _T | None:
        value: Any = self.payload
        for part in path.split("."):
            if not isinstance(value, Mapping):
                raise UsageError(f"{self.event_name} event payload: {path!r} is not an object path")
            value = value.get(part)
            if value is None:
                return None
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise UsageError(
                f"{self.event_name} event payload: {path!r} should be "
                f"{_KIND_NAMES.get(kind, kind.__name__)}, not {type(value).__name__}"
            )
        return value

    def get(self, path: str, kind: type[_T]) -> _T:
        value = self.optional(path, kind)
        if value is None:
            raise UsageError(f"{self.event_name} event payload: {path!r} is missing")
        return value


_KIND_NAMES: dict[type, str] = {str: "a string", int: "an integer", dict: "an object"}
