"""Who asked, and for which head: a `/fix` comment's trigger checked before anything runs.

The commenter's permission is read from GitHub (fail closed: a reader, an unknown user or an
unreadable permission is refused, with one refusal comment per PR edited in place); the PR is
resolved to its head, and a head pushed after the comment (by GitHub's own record of pushes,
never by commit dates) is refused, so what runs is what the writer asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

from fixbot import log
from fixbot.errors import FixbotError
from fixbot.forge import (
    REFUSAL_MARKER,
    Publisher,
    PullInfo,
    Skip,
    Trigger,
    may_trigger,
    moved_comment,
    moved_since,
    refusal_comment,
    upsert_comment,
)
from fixbot.forge.github.actions import ActionOutcome, Phase, neutral
from fixbot.forge.github.event import with_pull
from fixbot.report import EXIT_OK


def asked_by_whom(
    trigger: Trigger, publisher: Publisher, phase: Phase, never_fix: Sequence[str]
) -> Trigger | ActionOutcome | Skip:
    """A comment's trigger, checked (permission, fail closed) and resolved to its PR's head (a
    Skip when the PR is not one to fix: closed, or its branch opted out)."""
    if trigger.kind != "issue_comment":
        return trigger
    refused = _refusal(trigger, publisher, phase)
    if refused is not None:
        return refused
    resolved = _resolve_pull(trigger, publisher, never_fix)
    if isinstance(resolved, Skip):
        return resolved
    return _moved(resolved, publisher, phase) or resolved


def _moved(trigger: Trigger, publisher: Publisher, phase: Phase) -> ActionOutcome | None:
    """A refusal when the PR's head is not provably the one the comment was made on: pushed
    after the comment by GitHub's own record of the branch (never by commit dates, which the
    pusher chooses), or that record unreadable (fail closed)."""
    try:
        pushes = publisher.pushes(trigger.head_repository, trigger.head_ref)
    except FixbotError as exc:
        why = f"GitHub's record of pushes to the pull request's branch could not be read ({exc})"
    else:
        why = moved_since(pushes, trigger.commented_at, trigger.head_sha)
    if not why:
        return None
    log.get().info("refused", reason=neutral(why), pr=trigger.pr_number)
    if phase != "fix" and trigger.pr_number is not None:
        comment = moved_comment(why, trigger.head_sha)
        upsert_comment(publisher, trigger.pr_number, comment, marker=REFUSAL_MARKER)
    return ActionOutcome(status="refused", reason=why, exit_code=EXIT_OK)


def _refusal(trigger: Trigger, publisher: Publisher, phase: Phase) -> ActionOutcome | None:
    allowed, why = may_trigger(publisher, trigger.actor)
    if allowed:
        return None
    log.get().info("refused", user=neutral(trigger.actor), reason=neutral(why))
    if phase != "fix" and trigger.pr_number is not None:
        # One refusal comment per PR, edited in place: repeated /fix from a reader adds nothing.
        upsert_comment(
            publisher, trigger.pr_number, refusal_comment(trigger.actor), marker=REFUSAL_MARKER
        )
    return ActionOutcome(status="refused", reason=why, exit_code=EXIT_OK)


def _resolve_pull(
    trigger: Trigger, publisher: Publisher, never_fix: Sequence[str]
) -> Trigger | Skip:
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
    return with_pull(trigger, info, never_fix=never_fix)
