"""`fixbot history` and `fixbot show`: a thread's attempts, read from its checkpoints (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixbot.edits.patch import summary as diff_summary
from fixbot.errors import UsageError


def rows(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "attempt": a["number"],
            "model": a["model"],
            "temperature": a.get("temperature"),  # None: the provider's default
            "round_size": a.get("round_size", 1),  # > 1: one of a round of parallel candidates
            "verdict": a["verdict"],
            "tokens": a["prompt_tokens"] + a["completion_tokens"],
            "diff": diff_summary(a["diff"]),
            "problem": a["problems"][0] if a["problems"] else "",
        }
        for a in state.get("attempts", [])
    ]


def render_history(thread: str, state: Mapping[str, Any]) -> str:
    lines = [
        f"thread {thread}: {state.get('status', '?')} ({state.get('reason', '')})",
        f"commit {state.get('commit', '?')}, {state.get('tokens_used', 0)} tokens",
        "",
        f"{'#':>3}  {'verdict':<9} {'tokens':>7}  {'model':<20} diff / first problem",
    ]
    for row in rows(state):
        lines.append(
            f"{row['attempt']:>3}  {row['verdict']:<9} {row['tokens']:>7}  {row['model'][:20]:<20} "
            f"{row['diff']}"
        )
        if row["problem"]:
            lines.append(f"{'':>44}{row['problem'][:100]}")
    return "\n".join(lines) + "\n"


def render_attempt(state: Mapping[str, Any], number: int) -> str:
    for attempt in state.get("attempts", []):
        if attempt["number"] == number:
            break
    else:
        raise UsageError(f"the thread has no attempt {number} (it has {len(rows(state))})")
    asked = attempt.get("temperature")
    at = "" if asked is None else f" at temperature {asked:g}"
    size = attempt.get("round_size", 1)
    at += f", one of a round of {size} parallel candidates" if size > 1 else ""
    parts = [
        f"attempt {number}: {attempt['verdict']} by {attempt['model']}{at}, "
        f"{attempt['prompt_tokens']} prompt + {attempt['completion_tokens']} completion tokens",
        "",
        "## problems",
        *(f"- {p}" for p in attempt["problems"]),
        "",
        "## diff as applied",
        attempt["diff"] or "(none)",
        "## the model's reply",
        attempt["reply"],
    ]
    check = attempt.get("check")
    if check:
        parts += ["", f"## check: {check['status']}"]
        parts += [f"{t}: {r['outcome']} {r['message'][:120]}" for t, r in check["tests"].items()]
    return "\n".join(parts) + "\n"
