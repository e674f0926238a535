"""Decide, then publish: a recorded FixResult -> exactly one PR per failure, one comment per PR.

The logic here runs over two small seams, so tests can drive it with real things:

    Publisher   the GitHub REST calls fixbot makes (port.py; github/client.py implements it)
    Git         git in the workspace (git.py); the token reaches git only through
                GIT_CONFIG_* environment variables, never argv and never .git/config

Exactly one PR per failure:
    * the head branch is `fixbot/fix-<12 hex>`, a fingerprint of the failure (repository,
      failing commit, workflow, the normalised set of failing test ids);
    * the fix commit is deterministic (fixed identity and dates, parent = the failing commit),
      so the same fix is the same commit: nothing is pushed when the branch already holds it;
    * a push uses `--force-with-lease` against what `ls-remote` saw; losing the lease to a
      concurrent run that pushed the same commit is success;
    * the PR is found by its head branch, else created; "a pull request already exists" (a
      concurrent run, or a retried POST) is answered by finding and updating it.

fixbot never pushes anywhere but `fixbot/fix-*` in the base repository: not the default branch,
not the failing branch, not a fork (for a fork's PR the diff goes into a comment instead).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable, Sequence

from fixbot.errors import EnvironmentProblem, UsageError
from fixbot.forge.git import Git
from fixbot.forge.port import Comment, Published, Publisher, PullRequest, PullRequestExists
from fixbot.forge.recorded import check_recorded
from fixbot.forge.texts import (
    COMMENT_MARKER,
    THREAD_PATTERN,
    cap,
    commit_message,
    fork_comment,
    pr_body,
    status_comment,
    title,
)
from fixbot.forge.trigger import BRANCH_PREFIX, Trigger
from fixbot.inert import code_span
from fixbot.report import FixResult
from fixbot.secrets import redact

FIX_BRANCH = re.compile(r"fixbot/fix-[0-9a-f]{12}")
WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})


# --- who may ask ---------------------------------------------------------------------------


def may_trigger(publisher: Publisher, user: str) -> tuple[bool, str]:
    """Write, maintain or admin, per the collaborator-permission API. Any error refuses."""
    try:
        permission = publisher.permission(user)
    except Exception as exc:  # fail closed: whatever went wrong, nobody gets in
        return False, f"could not read the permission of {user!r} ({type(exc).__name__}): refused"
    if permission in WRITE_PERMISSIONS:
        return True, f"{user!r} has {permission} permission"
    return False, f"{user!r} has {permission or 'no'} permission; write is needed"


# --- the failure's identity ----------------------------------------------------------------


def fingerprint(repository: str, commit: str, workflow: str, tests: Iterable[str]) -> str:
    """12 hex digits naming one failure: the same failure always maps to the same branch."""
    normalised = sorted({t.strip().replace("\\", "/") for t in tests if t.strip()})
    identity = json.dumps([repository.lower(), commit, workflow.strip(), normalised])
    return hashlib.sha256(identity.encode()).hexdigest()[:12]


def fix_branch(trigger: Trigger, result: FixResult) -> str:
    digest = fingerprint(trigger.repository, result.commit, trigger.workflow, result.failing_tests)
    return f"{BRANCH_PREFIX}fix-{digest}"


def check_branch(branch: str, trigger: Trigger) -> None:
    """The one place that says where fixbot may push: its own `fixbot/fix-*` branches only."""
    if not FIX_BRANCH.fullmatch(branch) or branch in (trigger.head_ref, trigger.default_branch):
        raise UsageError(
            f"refusing to push to {branch!r}: fixbot pushes only fixbot/fix-* branches"
        )
    if trigger.from_fork:
        raise UsageError("refusing to push for a fork's pull request")


# --- PRs and comments ----------------------------------------------------------------------


def find_or_create_pr(
    publisher: Publisher,
    *,
    branch: str,
    base: str,
    title: str,
    body: str,
    draft: bool,
    wait: Callable[[float], None] = time.sleep,
) -> tuple[PullRequest, str]:
    """The one open PR for `branch`, created or brought up to date; and what was done."""
    existing = publisher.find_pr_by_branch(branch)
    if existing is None:
        try:
            return publisher.create_pr(
                branch=branch, base=base, title=title, body=body, draft=draft
            ), "created"
        except PullRequestExists:
            existing = _find_after_conflict(publisher, branch, wait)
    if existing.title == title and existing.body == body:
        return existing, "unchanged"
    return publisher.update_pr(existing.number, title=title, body=body), "updated"


def _find_after_conflict(
    publisher: Publisher, branch: str, wait: Callable[[float], None]
) -> PullRequest:
    for delay in (0.0, 0.5, 1.0, 2.0):  # the PR another run just opened may take a moment to list
        wait(delay)
        found = publisher.find_pr_by_branch(branch)
        if found is not None:
            return found
    raise EnvironmentProblem(f"GitHub says a pull request for {branch} exists, but none is open")


def own_comments(publisher: Publisher, number: int) -> list[Comment]:
    """The comments on `number` that fixbot wrote: authored by this token's own identity. A
    marker in anyone else's comment (a reader can paste one) makes it nothing of fixbot's."""
    me = publisher.identity()
    return [c for c in publisher.comments(number) if c.author == me]


def upsert_comment(
    publisher: Publisher, number: int, body: str, *, marker: str = COMMENT_MARKER
) -> None:
    """One fixbot comment per pull request and marker, edited in place."""
    body = cap(body if marker in body else f"{marker}\n{body}")
    for comment in own_comments(publisher, number):
        if marker in comment.body:
            if comment.body != body:
                publisher.edit_comment(number, comment.id, body)
            return
    publisher.create_comment(number, body)


def pending_thread(publisher: Publisher, number: int) -> str:
    """The thread of the escalated run fixbot's comment on PR `number` asks about, or ""."""
    for comment in own_comments(publisher, number):
        if COMMENT_MARKER in comment.body:
            found = THREAD_PATTERN.search(comment.body)
            return found.group(1) if found else ""
    return ""


def close_superseded(
    publisher: Publisher, repository: str, branch: str, why: str
) -> tuple[int, ...]:
    """Close fixbot's open PRs into `branch` (with a comment) and delete their branches."""
    closed: list[int] = []
    for pull in publisher.open_pulls_into(branch):
        if not FIX_BRANCH.fullmatch(pull.head_ref):
            continue
        if pull.head_repository.lower() != repository.lower():
            continue
        publisher.create_comment(
            pull.number, f"{COMMENT_MARKER}\nSuperseded: {why} Closing this pull request.\n"
        )
        publisher.close_pr(pull.number)
        publisher.delete_branch(pull.head_ref)
        closed.append(pull.number)
    return tuple(closed)


# --- what a result publishes ----------------------------------------------------------------


def publish(
    result: FixResult,
    trigger: Trigger,
    *,
    publisher: Publisher,
    git: Git,
    draft: bool = True,
    default_token: bool = True,
    secrets: Sequence[str] = (),
    labels: Sequence[str] = (),
    protected: Sequence[str] = (),
    expected_sha256: str | None = None,
) -> Published:
    """Everything a recorded result leads to on GitHub; nothing else writes there. The result
    is checked first (forge/recorded.py): `expected_sha256` is the fix job's own hash of the
    diff (None when this process decided the result), `protected` the trusted globs."""
    if result.commit and result.commit != trigger.head_sha:
        raise UsageError(
            f"the recorded result is for commit {result.commit[:12]}, "
            f"but the event is about {trigger.head_sha[:12]}"
        )
    check_recorded(result, expected_sha256=expected_sha256, protected=protected)
    known = [*secrets, *git.secrets()]
    if result.status == "fixed" and result.diff:
        if trigger.from_fork:
            return _comment_only(publisher, trigger, fork_comment(result), known)
        return _open_fix_pr(
            result, trigger, publisher, git, draft, default_token, known, labels, protected
        )
    if result.status == "already_passing":
        closed = close_superseded(
            publisher,
            trigger.repository,
            trigger.head_ref,
            f"{code_span(trigger.head_ref)} passes at {code_span(result.commit[:12])} "
            "without this change.",
        )
        if trigger.pr_number is not None:
            body = f"The checks already pass at {code_span(result.commit[:12])}: nothing to fix.\n"
            upsert_comment(publisher, trigger.pr_number, body)
        return Published(action="closed" if closed else "none", closed=closed)
    return _comment_only(publisher, trigger, status_comment(result), known)


def cleanup(publisher: Publisher, repository: str, branch: str, sha: str) -> Published:
    why = f"the checks of {code_span(branch)} pass at {code_span(sha[:12])} without this change."
    closed = close_superseded(publisher, repository, branch, why)
    return Published(action="closed" if closed else "none", closed=closed)


def _open_fix_pr(
    result: FixResult,
    trigger: Trigger,
    publisher: Publisher,
    git: Git,
    draft: bool,
    default_token: bool,
    known: Sequence[str],
    labels: Sequence[str],
    protected: Sequence[str],
) -> Published:
    branch = fix_branch(trigger, result)
    check_branch(branch, trigger)
    git.ensure_commit(result.commit)
    message = commit_message(result, trigger)
    sha = git.commit_fix(result.commit, result.diff, message, protected=protected)
    pushed = _push_once(git, sha, branch)
    heading = title(result, trigger)
    body = pr_body(result, trigger, default_token, known)
    pull, action = find_or_create_pr(
        publisher, branch=branch, base=trigger.head_ref, title=heading, body=body, draft=draft
    )
    missing = [label for label in dict.fromkeys(labels) if label not in pull.labels]
    if missing:
        publisher.add_labels(pull.number, missing)
    if trigger.pr_number is not None:
        verb = "opened" if action == "created" else "updated"
        fixed = code_span(result.commit[:12])
        note = f"fixbot {verb} {pull.url} with a verified fix for {fixed}.\n"
        upsert_comment(publisher, trigger.pr_number, note)
    return Published(
        action=action, pr_number=pull.number, pr_url=pull.url, branch=branch, pushed=pushed
    )


def _push_once(git: Git, sha: str, branch: str) -> bool:
    """Push unless the branch already holds this exact commit. True when this run pushed."""
    current = git.remote_sha(branch)
    if current == sha:
        return False
    if git.push(sha, branch, expected=current):
        return True
    if git.remote_sha(branch) == sha:  # a concurrent run pushed the same fix first
        return False
    raise EnvironmentProblem(f"{branch} moved while fixbot pushed to it; run fixbot again")


def _comment_only(
    publisher: Publisher, trigger: Trigger, body: str, known: Sequence[str]
) -> Published:
    if trigger.pr_number is None:
        return Published(action="none")
    upsert_comment(publisher, trigger.pr_number, redact(body, known=known))
    return Published(action="commented", pr_number=None)
