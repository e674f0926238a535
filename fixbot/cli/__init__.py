"""The composition root: argv + environment -> real clients -> a run -> an exit code.

Nothing else reads os.environ or an argparse namespace; every command is a function of both,
and every FixbotError leaves through one envelope that logs it and returns its exit code
(report.exit_code). `fix`, `resume` and `fork` also record an error as their result.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path

from fixbot import log
from fixbot.checks import index_settings
from fixbot.cli import doctor
from fixbot.cli.action import action
from fixbot.cli.bench import Wrap, find_entries, render_json, render_table, run_bench
from fixbot.cli.fix import fix_command, inputs
from fixbot.cli.init import init
from fixbot.cli.parser import build_parser
from fixbot.cli.views import history, learned, prune
from fixbot.config import load_config
from fixbot.errors import FixbotError, UsageError
from fixbot.forge.github import secrets_of
from fixbot.report import (
    EXIT_ENVIRONMENT,
    EXIT_NOT_FIXED,
    EXIT_OK,
    EXIT_USAGE,
    FixResult,
    error_kind,
    error_result,
    exit_code,
    write_outputs,
)
from fixbot.runs import (
    choose_sandbox,
    load_evidence,
    open_clients,
    request_for,
    reverify,
    run_fix,
    secrets_in,
    thread_id,
)
from fixbot.snapshot import find_root, pin_commit

Command = Callable[[argparse.Namespace, Mapping[str, str]], int]

__all__ = ["build_parser", "main"]


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    env = os.environ if environ is None else environ
    secrets = list(secrets_in(env))
    if args.command == "action":
        secrets += secrets_of(env)  # the token as git's auth header, too
    log.configure(fmt=args.log_format, secrets=secrets)
    command = COMMANDS[args.command]
    try:
        return command(args, env)
    except FixbotError as exc:
        log.get().error(f"{args.command}_failed", error=str(exc), kind=type(exc).__name__)
        if args.command == "verify" and args.json:
            sys.stdout.write(json.dumps({"holds": False, "error": str(exc)}) + "\n")
        return exit_code("error", error_kind(exc))


def verify(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    evidence = load_evidence(args.evidence)
    with closing(choose_sandbox("auto", env)) as sandbox:
        root = find_root(args.repo.resolve())
        outcome = reverify(evidence, root, sandbox, index=index_settings(env))
    log.get().info("verified", holds=outcome.holds, problems=outcome.problems)
    if args.json:
        sys.stdout.write(json.dumps(outcome.summary(), sort_keys=True) + "\n")
    return EXIT_OK if outcome.holds else EXIT_NOT_FIXED


def diagnose(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    docker_env = {k: v for k, v in env.items() if k.startswith("DOCKER_")}
    checks = doctor.diagnose(environment=docker_env, index=index_settings(env))
    if args.json:
        sys.stdout.write(json.dumps([asdict(c) for c in checks]) + "\n")
    else:
        sys.stdout.write(doctor.render(checks))
    return EXIT_OK if doctor.ready(checks) else EXIT_ENVIRONMENT


def bench(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """`fixbot bench`: each corpus entry fixed as `fixbot fix` fixes it, a row each. Exit 0 when
    the bench ran, whatever it fixed (the rows say); 2 when there is nothing to run or an option
    is invalid."""
    logger = log.get()
    settings = inputs(args, env).overrides()
    try:
        found = find_entries(args.corpus.resolve())
        with tempfile.TemporaryDirectory() as empty:  # the options alone, checked once
            load_config(Path(empty), overrides=settings)
    except UsageError as exc:
        logger.error("bench_failed", error=str(exc))
        return EXIT_USAGE
    out = args.out.resolve() if args.out else None
    one = partial(_bench_entry, settings=settings, env=env, out=out)
    rows = run_bench(found, one, on_row=lambda row: logger.info("bench_entry", **row.as_dict()))
    facts = {"corpus": str(args.corpus.resolve()), "model": settings.get("model", "")}
    sys.stdout.write(render_json(rows, **facts) if args.json else render_table(rows))
    return EXIT_OK


def _bench_entry(
    repo: Path,
    wrap: Wrap,
    *,
    settings: dict[str, object],
    env: Mapping[str, str],
    out: Path | None,
) -> FixResult:
    """One committed corpus entry, fixed as `fixbot fix REPO` fixes it, its sandbox wrapped."""
    try:
        config = load_config(repo, overrides=settings)
        request = request_for(repo, pin_commit(repo), config)
        with open_clients(repo, thread_id(request), config, env) as clients:
            result = run_fix(request, replace(clients, sandbox=wrap(clients.sandbox)))
    except FixbotError as exc:
        log.get().error("run_failed", error=str(exc), kind=type(exc).__name__)
        result = error_result(exc, repo=str(repo))
    if out is not None:
        write_outputs(result, out / repo.name, known=secrets_in(env), env=env)
    return result


COMMANDS: Mapping[str, Command] = {
    "fix": fix_command,
    "resume": fix_command,
    "fork": fix_command,
    "action": action,
    "verify": verify,
    "doctor": diagnose,
    "history": history,
    "show": history,
    "lessons": learned,
    "prune": prune,
    "bench": bench,
    "init": init,
}
