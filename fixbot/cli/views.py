"""`fixbot history`, `show`, `lessons` and `prune`: what the state database holds, read back."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fixbot import log
from fixbot.checks import prune_environments
from fixbot.config import load_config
from fixbot.edits import summary as diff_summary
from fixbot.errors import UsageError
from fixbot.loop import build_graph, lessons
from fixbot.paths import StateDir
from fixbot.report import EXIT_OK
from fixbot.runs import checkpointer_for, prune_threads, store_for
from fixbot.snapshot import find_root, repository_identity


def _emit(args: argparse.Namespace, data: Any, text: str) -> int:
    sys.stdout.write(json.dumps(data, sort_keys=True) + "\n" if args.json else text)
    return EXIT_OK


def history(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """`history` (every attempt of a thread) and `show` (one attempt in full)."""
    root = find_root(Path(args.path).resolve())
    with checkpointer_for(StateDir(root), env.get("FIXBOT_DATABASE_URL")) as saver:
        state = build_graph(saver).get_state({"configurable": {"thread_id": args.thread}})
    if not state.values:
        raise UsageError(f"no run is recorded under thread {args.thread!r}")
    values = state.values
    if args.command == "history":
        data: Any = {"thread_id": args.thread, "status": values["status"], "attempts": rows(values)}
        return _emit(args, data, render_history(args.thread, values))
    text = render_attempt(values, args.attempt)
    return _emit(args, next(a for a in values["attempts"] if a["number"] == args.attempt), text)


def learned(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """`lessons list` and `lessons rm KEY`."""
    root = find_root(Path(args.path).resolve())
    repository = repository_identity(root)
    with store_for(StateDir(root), env.get("FIXBOT_DATABASE_URL")) as store:
        if args.lessons_command == "rm":
            if not lessons.remove(store, repository, args.key):
                raise UsageError(f"no lesson {args.key!r} for this repository")
            return _emit(args, {"removed": args.key}, f"removed lesson {args.key}\n")
        found = lessons.listing(store, repository)
    data = [{"key": item.key, **item.as_value()} for item in found]
    text = "".join(
        f"{item.key}  {time.strftime('%Y-%m-%d', time.gmtime(item.created_at))}  "
        f"{'; '.join(item.failure)[:80]}\n    {item.fix[:160]}\n"
        for item in found
    )
    return _emit(args, data, text or "no lessons yet\n")


def prune(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """Threads idle, and lessons older, than the retention age, deleted (logs included)."""
    root = find_root(Path(args.path).resolve())
    days = args.older_than_days
    if days is None:
        days = load_config(root).retention_days
    if days < 1:
        raise UsageError("--older-than-days must be at least 1")
    state, database_url, now = StateDir(root), env.get("FIXBOT_DATABASE_URL"), time.time()
    with checkpointer_for(state, database_url) as saver, store_for(state, database_url) as store:
        threads = prune_threads(saver, days * 86400, now)
        gone = lessons.prune(store, days * 86400, now)
    for thread in threads:  # their older attempts' full results go with them
        shutil.rmtree(state.logs(thread), ignore_errors=True)
    envs = prune_environments(state.envs, days * 86400, now)  # one per commit prepared
    log.get().info(
        "pruned", threads=len(threads), lessons=gone, environments=len(envs), older_than_days=days
    )
    data = {"threads": threads, "lessons": gone, "environments": envs, "older_than_days": days}
    text = (
        f"pruned {len(threads)} thread(s), {gone} lesson(s) and {len(envs)} prepared "
        f"environment(s) older than {days} days\n"
    )
    return _emit(args, data, text)


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
