"""`fixbot action`: the Action's fix runner and its publisher, built from the real clients."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from fixbot import log
from fixbot.config import Config, load_config, names_no_checks
from fixbot.errors import UsageError
from fixbot.forge import Publisher
from fixbot.forge.github import ActionEnv, FixJob, connect, run_action, secrets_of
from fixbot.paths import StateDir
from fixbot.report import FixResult
from fixbot.runs import (
    FixRequest,
    answer,
    checkpointer_for,
    open_clients,
    request_for,
    resume_fix,
    run_fix,
    thread_id,
    unanswerable,
)
from fixbot.snapshot import find_root


def action(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    def publisher(settings: ActionEnv) -> Publisher:
        return connect(settings.repository, settings.token, api_url=settings.api_url)

    return run_action(
        env,
        fix=partial(fix_for_action, env=env),
        connect=publisher,
        phase=args.phase,
        result_dir=args.result,
    )


def fix_for_action(job: FixJob, *, env: Mapping[str, str]) -> FixResult:
    """The action's FixRunner: `fixbot fix` on job.commit of the trusted checkout (its config,
    not the PR head's). Raises FixbotError; run_action records that as the result."""
    root = find_root(job.repo)
    config = run_config(root, job)
    if not config.model:
        raise UsageError("no model named: set the model input, or model in .fixbot.yml")
    hint = job.hint if job.command == "fix" else ""
    request = request_for(root, job.commit, config, hint=hint, ci_jobs=job.ci_jobs)
    thread, reply = _thread(job, request, env)
    secrets = secrets_of(env)
    with open_clients(root, thread, config, env, secrets=secrets) as clients:
        if reply is None:
            return run_fix(request, clients)
        return resume_fix(thread, reply, repo=root, config=config, clients=clients)


def run_config(root: Path, job: FixJob) -> Config:
    """The trusted checkout's config with the action's inputs over it; the failed run's steps
    (job.checks) are its checks when it names none of its own."""
    config = load_config(root, config_file=job.config_file, overrides=job.inputs.overrides())
    if job.checks and names_no_checks(config):
        config = replace(config, checks=job.checks)
    return config


def _thread(
    job: FixJob, request: FixRequest, env: Mapping[str, str]
) -> tuple[str, dict[str, Any] | None]:
    """The thread to run and the answer to resume it with (None: run, or resume after a
    crash). `/fix [hint]` and `/fix abort` answer the escalated run fixbot's comment named,
    when its paused state is here and it is about the PR's current head; else `/fix [hint]`
    starts a fresh fix with the hint, saying why."""
    # Without a named thread, /fix abort means the plain fix of this commit (no hint).
    thread = job.thread or (thread_id(request) if job.command == "abort" else "")
    if thread:
        database_url = env.get("FIXBOT_DATABASE_URL")
        with checkpointer_for(StateDir(request.repo), database_url) as saver:
            why = unanswerable(thread, saver, job.commit)
        if not why:
            return thread, answer(job.command, job.hint, job.trigger.actor)
        if job.command == "abort":
            raise UsageError(f"/fix abort: nothing to abort: {why}")
        log.get().info("fresh_fix", thread_id=thread, reason=f"{why}: starting a fresh fix")
    return thread_id(request), None
