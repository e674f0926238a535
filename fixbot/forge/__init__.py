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
from fixbot.forge.git import Git
from fixbot.forge.port import (
    Comment,
    Published,
    Publisher,
    PullRequest,
    PullRequestExists,
    PullRequestsNotPermitted,
)
from fixbot.forge.publish import cleanup, may_trigger, pending_thread, publish, upsert_comment
from fixbot.forge.runlog import JobSummary
from fixbot.forge.texts import REFUSAL_MARKER, moved_comment, refusal_comment
from fixbot.forge.trigger import Cleanup, Command, PullInfo, Push, Skip, Trigger, moved_since

__all__ = [
    "REFUSAL_MARKER",
    "Cleanup",
    "Command",
    "Comment",
    "Git",
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
    "cleanup",
    "may_trigger",
    "moved_comment",
    "moved_since",
    "pending_thread",
    "publish",
    "refusal_comment",
    "runlog",
    "upsert_comment",
]
