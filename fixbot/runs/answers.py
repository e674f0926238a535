"""Which escalated thread a human's answer (`fixbot resume`, a `/fix` comment) can resume."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver

from fixbot.runs.session import recorded


def answer(command: Literal["fix", "abort"], hint: str, by: str) -> dict[str, Any]:
    """The resume value of a `/fix [hint]` (continue) or `/fix abort` comment by `by`."""
    if command == "abort":
        return {"action": "abort", "by": by}
    return {"action": "continue", "hint": hint, "by": by}


def unanswerable(thread: str, checkpointer: BaseCheckpointSaver[Any], commit: str) -> str:
    """Why `thread` cannot take an answer about `commit` here ("" when it can): no checkpoint
    of it in this state, not waiting for an answer, or escalated on another commit."""
    found = recorded(thread, checkpointer)
    if found is None:
        return (
            f"no checkpoint of thread {thread} is here (fixbot's state was not kept between "
            "workflow runs; see docs/action.md#answering-an-escalation)"
        )
    status, recorded_commit = found
    if status != "waiting":
        return f"thread {thread} is not waiting for an answer (status {status})"
    if recorded_commit != commit:
        return (
            f"thread {thread} escalated on {recorded_commit[:12]}, but the pull request is now "
            f"at {commit[:12]}"
        )
    return ""
