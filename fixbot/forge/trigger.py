"""What an event asks of fixbot, as data: fix this commit, clean up this branch, or nothing.

The forge's own vocabulary (github/event.py parses GitHub's payloads into it). Every string in
it came from the event: untrusted, for API calls and argv lists, never for a shell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from fixbot.errors import UsageError

EventName = Literal["workflow_run", "issue_comment", "workflow_dispatch"]
Command = Literal["fix", "abort"]
BRANCH_PREFIX = "fixbot/"
COMMIT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # SHA-1, or SHA-256 repositories


@dataclass(frozen=True)
class Trigger:
    kind: EventName
    repository: str  # owner/name of the repository the event belongs to
    head_sha: str  # the commit to fix; "" for a comment until `with_pull`
    head_ref: str  # the branch that commit is on; "" for a comment until `with_pull`
    head_repository: str  # owner/name where head_ref lives (another one for a fork)
    default_branch: str
    actor: str  # who asked: the commenter, the dispatcher, the run's triggering actor
    pr_number: int | None = None  # the pull request to report back to, when there is one
    command: Command = "fix"
    hint: str = ""
    workflow: str = ""  # the failing workflow (workflow_run): part of the failure's identity
    run_id: int | None = None
    run_url: str = ""
    workflow_path: str = ""  # the failed run's workflow file: .github/workflows/ci.yml
    comment_id: int | None = None
    commented_at: str = ""  # when GitHub recorded the /fix comment (ISO 8601, from the event)

    @property
    def from_fork(self) -> bool:
        return self.head_repository.lower() != self.repository.lower()


@dataclass(frozen=True)
class Cleanup:
    repository: str
    branch: str  # its checks passed: fixbot's open PRs into it are superseded
    head_sha: str


@dataclass(frozen=True)
class Skip:
    reason: str


Decision = Trigger | Cleanup | Skip


@dataclass(frozen=True)
class PullInfo:
    """The facts `with_pull` needs about the pull request a comment was made on."""

    number: int
    head_sha: str
    head_ref: str
    head_repository: str  # "" when the fork was deleted
    base_ref: str
    state: str


def commit_id(value: str, what: str) -> str:
    """A full commit id, or a UsageError: it becomes a git argument, never an option."""
    if not COMMIT_ID.fullmatch(value):
        raise UsageError(f"{what} is not a full commit id: {value[:80]!r}")
    return value


@dataclass(frozen=True)
class Push:
    """One update of a branch as GitHub recorded it (the repository activity log): its time
    is GitHub's, unlike a commit's dates, which whoever made the commit chose."""

    before: str
    after: str
    timestamp: str  # ISO 8601
    kind: str  # push, force_push, branch_creation, ...


def moved_since(pushes: Sequence[Push], commented_at: str, head_sha: str) -> str:
    """Why the pull request's head `head_sha` is not the head the comment at `commented_at`
    was made on, by GitHub's record of the branch's pushes (newest first); "" when it is."""
    when = _instant(commented_at, "the comment's time")
    later = [p for p in pushes if _instant(p.timestamp, "a push's time") >= when]
    if later:
        return (
            f"the branch was pushed to at {later[-1].timestamp}, after the /fix comment "
            f"({commented_at}), so its head is not the commit the comment was about"
        )
    earlier = [p for p in pushes if p not in later]
    if earlier and earlier[0].after != head_sha:
        return (
            f"GitHub's last recorded push before the comment left the branch at "
            f"{earlier[0].after[:12]}, not at the head {head_sha[:12]}"
        )
    return ""


def _instant(text: str, what: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{what} is not an ISO 8601 time: {text[:40]!r}") from None
    if moment.tzinfo is None:
        raise UsageError(f"{what} has no time zone: {text[:40]!r}")
    return moment
