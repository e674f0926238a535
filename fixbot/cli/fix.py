"""`fixbot fix`, `resume` and `fork`: one run over a local repository, and its outputs."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import uuid
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from fixbot import log
from fixbot.cli.progress import Progress
from fixbot.config import Inputs, load_config
from fixbot.errors import FixbotError, UsageError
from fixbot.paths import StateDir
from fixbot.report import FixResult, error_result, write_outputs
from fixbot.runs import (
    NO_MODEL,
    FixRequest,
    fork_fix,
    fork_id,
    open_clients,
    request_for,
    resume_fix,
    run_fix,
    secrets_in,
    thread_id,
)
from fixbot.snapshot import apply_to_worktree, find_root, pin_commit


def inputs(args: argparse.Namespace, env: Mapping[str, str]) -> Inputs:
    """The command line (and FIXBOT_MODEL, OPENAI_BASE_URL) over the config file."""
    return Inputs(
        model=args.model,
        base_url=args.base_url,
        sandbox=args.sandbox,
        max_iterations=getattr(args, "max_iterations", None),
        base=getattr(args, "base", None),
    ).over(env)


def progress(max_iterations: int) -> Progress:
    return Progress(
        log.get(), terminal=sys.stderr if log.is_human() else None, attempts=max_iterations
    )


def fix_command(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """`fix`, `resume` and `fork` share everything but the call that drives the graph. Every
    outcome, an error included, is written to the outputs before the exit code is returned."""
    logger = log.get()
    repo = Path(args.path).resolve()
    out: Path | None = args.out.resolve() if args.out else None
    facts: dict[str, Any] = {"repo": str(repo)}
    try:
        root = find_root(repo)
        facts.update(repo=str(root))
        out = out or StateDir(root).out
        config = load_config(root, config_file=args.config, overrides=inputs(args, env).overrides())
        request: FixRequest | None = None
        if not config.model:
            raise UsageError(NO_MODEL)
        if args.command == "resume":
            thread = args.thread
        elif args.command == "fork":
            thread = fork_id(args.thread, args.from_attempt, config.model, args.hint)
        else:
            commit = pin_commit(root)
            salt = uuid.uuid4().hex if args.fresh else ""
            request = request_for(root, commit, config, hint=args.hint, salt=salt)
            thread = thread_id(request)
            facts.update(commit=commit)
        facts.update(thread_id=thread)
        observe = progress(config.max_iterations)
        with open_clients(root, thread, config, env, observe=observe) as clients:
            if args.command == "fork":
                result = fork_fix(
                    args.thread,
                    args.from_attempt,
                    hint=args.hint,
                    extra_iterations=args.extra_iterations,
                    repo=root,
                    config=config,
                    clients=clients,
                )
            elif request is None:
                answer = _answer(args, env)
                result = resume_fix(thread, answer, repo=root, config=config, clients=clients)
            else:
                result = run_fix(request, clients)
        if result.status == "fixed":
            evidence = shlex.quote(str(out / "evidence.json"))
            result = replace(
                result, reproduce=f"fixbot verify {evidence} --repo {shlex.quote(str(root))}"
            )
        if args.apply and result.status == "fixed":
            _apply(root, result.commit, result.diff)
    except FixbotError as exc:
        logger.error("run_failed", error=str(exc), kind=type(exc).__name__)
        result = error_result(exc, **facts)
    if out is not None:
        paths = write_outputs(result, out, known=secrets_in(env), env=env)
        logger.info("outputs_written", files=[str(p) for p in paths])
    logger.info(
        "run_finished",
        status=result.status,
        escalation=result.escalation,
        reason=result.reason,
        thread_id=result.thread_id,
        exit_code=result.exit_code,
    )
    if result.status == "escalated" and result.thread_id:
        logger.info("how_to_resume", command=_resume_hint(result))
    if args.json:
        sys.stdout.write(json.dumps(result.summary(), sort_keys=True) + "\n")
    return result.exit_code


def _answer(args: argparse.Namespace, env: Mapping[str, str]) -> dict[str, Any]:
    if args.abort:
        return {"action": "abort", "by": env.get("USER", "")}
    return {
        "action": "continue",
        "hint": args.hint,
        "extra_iterations": args.extra_iterations or 0,
        "allow_protected": list(args.allow_protected),
        "by": env.get("USER", ""),
    }


def _resume_hint(result: FixResult) -> str:
    repo = shlex.quote(result.repo)
    return (
        f"fixbot resume {result.thread_id} {repo} --hint 'where the bug is' "
        f"[--extra-iterations N] [--allow-protected PATH] | "
        f"fixbot resume {result.thread_id} {repo} --abort"
    )


def _apply(root: Path, commit: str, diff_text: str) -> None:
    head = pin_commit(root)
    if head != commit:
        raise UsageError(f"--apply: HEAD moved from {commit[:12]} to {head[:12]}; not applying")
    apply_to_worktree(root, diff_text)
