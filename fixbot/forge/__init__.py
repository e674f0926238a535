"""Decide, then publish: a CI event in, exactly one PR (or one comment) out.

    Publisher        the forge's REST calls (port.py); github/ implements it with PyGithub
    publish/cleanup  a recorded FixResult -> the one PR per failure, the one comment per PR
    Git              the fix as a deterministic commit, pushed with a lease (git.py)
    Trigger/Skip     what an event asks for (trigger.py); github/event.py parses payloads

The publish side runs no repository code: nothing here imports the sandbox, the checks or the
loop (a test in tests/test_architecture.py says so).
"""

from __future__ import annotations

from fixbot.forge import runlog
from fixbot.forge.git import Git, GitFailed, refuse_paths
from fixbot.forge.port import (
    Comment,
    Published,
    Publisher,
    PullRequest,
    PullRequestExists,
    PullRequestsNotPermitted,
)
from fixbot.forge.publish import (
    FIX_BRANCH,
    WRITE_PERMISSIONS,
    check_branch,
    cleanup,
    close_superseded,
    find_or_create_pr,
    fingerprint,
    fix_branch,
    may_trigger,
    pending_thread,
    publish,
    upsert_comment,
)
from fixbot.forge.runlog import JobSummary
from fixbot.forge.texts import (
    BODY_CAP,
    COMMENT_MARKER,
    REFUSAL_MARKER,
    THREAD_MARKER,
    moved_comment,
    refusal_comment,
)
from fixbot.forge.trigger import (
    BRANCH_PREFIX,
    Cleanup,
    Command,
    Decision,
    EventName,
    PullInfo,
    Push,
    Skip,
    Trigger,
    commit_id,
    moved_since,
)

__all__ = [
    "BODY_CAP",
    "BRANCH_PREFIX",
    "COMMENT_MARKER",
    "FIX_BRANCH",
    "REFUSAL_MARKER",
    "THREAD_MARKER",
    "WRITE_PERMISSIONS",
    "Cleanup",
    "Command",
    "Comment",
    "Decision",
    "EventName",
    "Git",
    "GitFailed",
    "JobSummary",
    "Published",
    "Publisher",
    "PullInfo",
    "PullRequest",
    "PullRequestExists",
    "PullRequestsNotPermitted",
    "Push",
    "Skip",
    "Trigger",
    "check_branch",
    "cleanup",
    "close_superseded",
    "commit_id",
    "find_or_create_pr",
    "fingerprint",
    "fix_branch",
    "may_trigger",
    "moved_comment",
    "moved_since",
    "pending_thread",
    "publish",
    "refusal_comment",
    "refuse_paths",
    "runlog",
    "upsert_comment",
]
