"""A run's FixResult, read from its graph state (what the state does not hold: the facts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fixbot.config import Config
from fixbot.loop import FixState
from fixbot.report import FixResult
from fixbot.sandbox import Sandbox
from fixbot.snapshot import manifest_digest


def result_of(state: Any, repo: Path, config: Config, sandbox: Sandbox) -> FixResult:
    manifest = state["manifest"]
    return from_state(
        state,
        repo=str(repo),
        sandbox=sandbox.describe(),
        config=config.to_dict(),
        manifest_sha256=manifest_digest(manifest),
        protected=sorted(manifest),
    )


def from_state(state: FixState, **facts: Any) -> FixResult:
    """The result a run's final state records (facts: what the state does not hold)."""
    attempts, reviews = state["attempts"], state["reviews"]
    calls = [*attempts, *reviews]  # every model call's tokens: the attempts' and the reviews'
    tokens = {
        "prompt": sum(c["prompt_tokens"] for c in calls),
        "completion": sum(c["completion_tokens"] for c in calls),
    }
    tokens["total"] = tokens["prompt"] + tokens["completion"]
    return FixResult(
        status=state["status"],
        escalation=state["escalation"],
        reason=state["reason"],
        thread_id=state["thread_id"],
        commit=state["commit"],
        baseline=state["baseline"],
        attempts=list(attempts),
        verification=state["verification"],
        diff=state["final_diff"] if state["status"] == "fixed" else "",
        tokens=tokens,
        cost_usd=float(state["cost_used"]),
        classification=state["classification"],
        labels=list(state["labels"]),
        flaky_tests=list(state["flaky_tests"]),
        dropped_hunks=list(state["dropped_hunks"]),
        reviews=list(reviews),
        network_probe=state["network_probe"],
        allowed_protected=list(state["allowed_protected"]),
        hint=state["hint"],
        resumes=state["resumes"],
        escalated_at=list(state["escalated_at"]),
        **facts,
    )
