"""The one composition root: argv + environment -> real clients -> a run -> an exit code."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import asdict, replace
from functools import partial
from pathlib import Path
from typing import Any

from fixbot import __version__, log, proc
from fixbot.cli import doctor
from fixbot.cli.bench import Wrap, find_entries, render_json, render_table, run_bench
from fixbot.cli.progress import Progress
from fixbot.cli.views import render_attempt, render_history
from fixbot.cli.views import rows as history_rows
from fixbot.config import Config, load_config
from fixbot.errors import FixbotError, UsageError
from fixbot.forge.github import actions
from fixbot.forge.github import client as github
from fixbot.forge.publish import Publisher
from fixbot.llm import OpenAIModel
from fixbot.loop import lessons
from fixbot.loop.graph import build_graph
from fixbot.report import result as report
from fixbot.report.result import FixResult
from fixbot.runs.reverify import load_evidence, reverify
from fixbot.runs.session import (
    FixRequest,
    fork_fix,
    fork_id,
    recorded,
    resume_fix,
    run_fix,
    thread_id,
)
from fixbot.runs.store import checkpointer_for, prune_threads, store_for, thread_lock
from fixbot.sandbox import Sandbox
from fixbot.sandbox.select import Backend, choose
from fixbot.snapshot.protected import find_root, pin_commit, repository_identity

STATE_DIR = ".fixbot"
SECRET_VARIABLES = ("OPENAI_API_KEY", "GITHUB_TOKEN", "FIXBOT_DATABASE_URL")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse exits 2 on usage errors; keep that, say why
        self.print_usage(sys.stderr)
        self.exit(report.EXIT_USAGE, f"fixbot: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fixbot", description="Fix failing builds, verified in a sandbox.")
    parser.add_argument("--version", action="version", version=f"fixbot {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    fix = commands.add_parser("fix", help="fix the failing checks of a local git repository")
    fix.add_argument("path", nargs="?", default=".", help="the repository (default: .)")
    fix.add_argument("--config", type=Path, help="config file (default: PATH/.fixbot.yml)")
    fix.add_argument("--model", help="model name (else $FIXBOT_MODEL, else config)")
    fix.add_argument(
        "--base-url",
        help="OpenAI-compatible endpoint (else $OPENAI_BASE_URL, else config, else api.openai.com)",
    )
    fix.add_argument("--max-iterations", type=int, help="attempts before escalating")
    fix.add_argument("--sandbox", choices=["auto", "docker", "bwrap"], help="sandbox backend")
    fix.add_argument("--out", type=Path, help="output folder (default: PATH/.fixbot/out)")
    fix.add_argument(
        "--apply",
        action="store_true",
        help="apply the verified fix to the working tree (never otherwise)",
    )
    fix.add_argument("--json", action="store_true", help="print one JSON summary on stdout")
    fix.add_argument(
        "--fresh", action="store_true", help="start a new run instead of resuming the recorded one"
    )
    fix.add_argument("--hint", default="", help="a hint for the model")
    fix.add_argument(
        "--base",
        help="base branch or commit: failures that also fail there are labelled pre-existing",
    )
    fix.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")
    resume = commands.add_parser(
        "resume", help="answer an escalated run: continue it with a hint, or abort it"
    )
    resume.add_argument("thread", help="the thread id the escalated run printed")
    resume.add_argument("path", nargs="?", default=".", help="the repository (default: .)")
    resume.add_argument("--hint", default="", help="the next critique for the model")
    resume.add_argument("--extra-iterations", type=int, help="more attempts (capped by config)")
    resume.add_argument(
        "--allow-protected",
        action="append",
        default=[],
        metavar="PATH",
        help="allow edits to this one protected file (explicit, logged)",
    )
    resume.add_argument("--abort", action="store_true", help="end the run with status aborted")
    fork = commands.add_parser(
        "fork", help="continue a thread from an earlier attempt in a new thread (other settings)"
    )
    fork.add_argument("thread", help="the thread to fork")
    fork.add_argument("path", nargs="?", default=".", help="the repository (default: .)")
    fork.add_argument(
        "--from-attempt", type=int, required=True, help="continue after this attempt was judged"
    )
    fork.add_argument("--hint", default="", help="a hint for the model")
    fork.add_argument("--extra-iterations", type=int, help="more attempts (capped by config)")
    for sub in (resume, fork):
        sub.add_argument("--config", type=Path, help="config file (default: PATH/.fixbot.yml)")
        sub.add_argument("--model", help="model name (else $FIXBOT_MODEL, else config)")
        sub.add_argument("--base-url", help="OpenAI-compatible endpoint")
        sub.add_argument("--sandbox", choices=["auto", "docker", "bwrap"])
        sub.add_argument("--out", type=Path, help="output folder (default: PATH/.fixbot/out)")
        sub.add_argument("--apply", action="store_true", help="apply a verified fix")
        sub.add_argument("--json", action="store_true", help="print one JSON summary on stdout")
        sub.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")
    for name, text in (("history", "list a thread's attempts"), ("show", "print one attempt")):
        view = commands.add_parser(name, help=text)
        view.add_argument("thread", help="the thread id")
        view.add_argument("path", nargs="?", default=".", help="the repository (default: .)")
        if name == "show":
            view.add_argument("--attempt", type=int, required=True, help="the attempt number")
        view.add_argument("--json", action="store_true", help="print JSON on stdout")
        view.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")
    act = commands.add_parser(
        "action", help="one GitHub Actions step: the event in, at most one fix PR out"
    )
    act.add_argument(
        "--phase",
        choices=actions.PHASES,
        default="all",
        help="fix: record the result, write nothing to GitHub; publish: open the PR from --result",
    )
    act.add_argument("--result", type=Path, help="with --phase publish: the recorded result folder")
    act.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")
    doc = commands.add_parser(
        "doctor", help="what this machine offers fixbot: sandboxes, git, test tools"
    )
    doc.add_argument("--json", action="store_true", help="print JSON on stdout")
    doc.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")
    learned = commands.add_parser(
        "lessons", help="list or delete what fixbot learned from its verified fixes"
    )
    learned_commands = learned.add_subparsers(
        dest="lessons_command", required=True, parser_class=_Parser
    )
    listed = learned_commands.add_parser("list", help="this repository's lessons, newest first")
    listed.add_argument("path", nargs="?", default=".", help="the repository (default: .)")
    removed = learned_commands.add_parser("rm", help="delete one lesson")
    removed.add_argument("key", help="the lesson's key (from fixbot lessons list)")
    removed.add_argument("path", nargs="?", default=".", help="the repository (default: .)")
    for sub in (listed, removed):
        sub.add_argument("--json", action="store_true", help="print JSON on stdout")
        sub.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")
    prune = commands.add_parser(
        "prune", help="delete threads idle, and lessons older, than the retention age"
    )
    prune.add_argument("path", nargs="?", default=".", help="the repository (default: .)")
    prune.add_argument("--older-than-days", type=int, help="default: retention_days (config)")
    prune.add_argument("--json", action="store_true", help="print JSON on stdout")
    prune.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")
    check = commands.add_parser(
        "verify", help="re-run the verification recorded in an evidence.json"
    )
    check.add_argument("evidence", type=Path, help="the evidence.json of a fixed run")
    check.add_argument("--repo", type=Path, default=Path("."), help="the repository (default: .)")
    check.add_argument("--json", action="store_true", help="print one JSON summary on stdout")
    check.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")
    bench = commands.add_parser(
        "bench", help="run fixbot over a corpus of failing repositories: a table and totals"
    )
    bench.add_argument(
        "corpus", type=Path, help="a folder of entries: each a repository's files and .fixbot.yml"
    )
    bench.add_argument("--model", help="model name (else $FIXBOT_MODEL, else each entry's config)")
    bench.add_argument("--base-url", help="OpenAI-compatible endpoint (else $OPENAI_BASE_URL)")
    bench.add_argument("--max-iterations", type=int, help="attempts per entry before escalating")
    bench.add_argument("--sandbox", choices=["auto", "docker", "bwrap"], help="sandbox backend")
    bench.add_argument("--out", type=Path, help="keep each entry's outputs under OUT/ENTRY/")
    bench.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    bench.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")
    return parser


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    env = os.environ if environ is None else environ
    secrets = [env[k] for k in SECRET_VARIABLES if env.get(k)]
    if args.command == "action":
        secrets += actions.secrets_of(env)  # the token as git's auth header, too
    log.configure(fmt=args.log_format, secrets=secrets)
    if args.command == "action":
        return _action(args, env)
    if args.command == "verify":
        return _verify(args, env)
    if args.command == "doctor":
        return _doctor(args, env)
    if args.command in ("history", "show"):
        return _history(args, env)
    if args.command == "lessons":
        return _lessons(args, env)
    if args.command == "prune":
        return _prune(args, env)
    if args.command == "bench":
        return _bench(args, env)
    return _fix(args, env)  # fix, resume and fork


def _lessons(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    try:
        root = find_root(Path(args.path).resolve())
        repository = repository_identity(root)
        with store_for(root / STATE_DIR, env.get("FIXBOT_DATABASE_URL")) as store:
            if args.lessons_command == "rm":
                if not lessons.remove(store, repository, args.key):
                    raise UsageError(f"no lesson {args.key!r} for this repository")
                data: Any = {"removed": args.key}
                text = f"removed lesson {args.key}\n"
            else:
                found = lessons.listing(store, repository)
                data = [{"key": item.key, **item.as_value()} for item in found]
                text = (
                    "".join(
                        f"{item.key}  {time.strftime('%Y-%m-%d', time.gmtime(item.created_at))}  "
                        f"{'; '.join(item.failure)[:80]}\n    {item.fix[:160]}\n"
                        for item in found
                    )
                    or "no lessons yet\n"
                )
    except FixbotError as exc:
        log.get().error("lessons_failed", error=str(exc))
        return report.exit_code("error", report.error_kind(exc))
    sys.stdout.write(json.dumps(data, sort_keys=True) + "\n" if args.json else text)
    return report.EXIT_OK


def _prune(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    try:
        root = find_root(Path(args.path).resolve())
        days = args.older_than_days
        if days is None:
            days = load_config(root).retention_days
        if days < 1:
            raise UsageError("--older-than-days must be at least 1")
        database_url = env.get("FIXBOT_DATABASE_URL")
        now = time.time()
        with (
            checkpointer_for(root / STATE_DIR, database_url) as saver,
            store_for(root / STATE_DIR, database_url) as store,
        ):
            threads = prune_threads(saver, days * 86400, now)
            gone = lessons.prune(store, days * 86400, now)
        for thread in threads:  # their older attempts' full results go with them
            shutil.rmtree(root / STATE_DIR / "logs" / thread, ignore_errors=True)
    except FixbotError as exc:
        log.get().error("prune_failed", error=str(exc))
        return report.exit_code("error", report.error_kind(exc))
    log.get().info("pruned", threads=len(threads), lessons=gone, older_than_days=days)
    data = {"threads": threads, "lessons": gone, "older_than_days": days}
    text = f"pruned {len(threads)} thread(s) and {gone} lesson(s) older than {days} days\n"
    sys.stdout.write(json.dumps(data, sort_keys=True) + "\n" if args.json else text)
    return report.EXIT_OK


def _history(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    try:
        root = find_root(Path(args.path).resolve())
        with checkpointer_for(root / STATE_DIR, env.get("FIXBOT_DATABASE_URL")) as saver:
            state = build_graph(saver).get_state({"configurable": {"thread_id": args.thread}})
        if not state.values:
            raise UsageError(f"no run is recorded under thread {args.thread!r}")
        values = state.values
        if args.command == "history":
            text = render_history(args.thread, values)
            data: Any = {
                "thread_id": args.thread,
                "status": values["status"],
                "attempts": history_rows(values),
            }
        else:
            text = render_attempt(values, args.attempt)
            data = next(a for a in values["attempts"] if a["number"] == args.attempt)
    except FixbotError as exc:
        log.get().error("history_failed", error=str(exc))
        return report.exit_code("error", report.error_kind(exc))
    sys.stdout.write(json.dumps(data, sort_keys=True) + "\n" if args.json else text)
    return report.EXIT_OK


def _verify(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    logger = log.get()
    try:
        evidence = load_evidence(args.evidence)
        with closing(choose_sandbox("auto", env)) as sandbox:
            outcome = reverify(evidence, find_root(args.repo.resolve()), sandbox)
    except FixbotError as exc:
        logger.error("verify_failed", error=str(exc), kind=type(exc).__name__)
        if args.json:
            sys.stdout.write(json.dumps({"holds": False, "error": str(exc)}) + "\n")
        return report.exit_code("error", report.error_kind(exc))
    logger.info("verified", holds=outcome.holds, problems=outcome.problems)
    if args.json:
        sys.stdout.write(json.dumps(outcome.summary(), sort_keys=True) + "\n")
    return report.EXIT_OK if outcome.holds else report.EXIT_NOT_FIXED


def _overrides(args: argparse.Namespace, env: Mapping[str, str]) -> dict[str, object]:
    overrides: dict[str, object] = {}
    model = args.model or env.get("FIXBOT_MODEL")
    base_url = args.base_url or env.get("OPENAI_BASE_URL")
    for key, value in (
        ("model", model),
        ("base_url", base_url),
        ("max_iterations", getattr(args, "max_iterations", None)),
        ("sandbox.backend", args.sandbox),
        ("base", getattr(args, "base", None)),
    ):
        if value is not None and value != "":
            overrides[key] = value
    return overrides


def choose_sandbox(
    backend: Backend, env: Mapping[str, str], *, image: str | None = None
) -> Sandbox:
    """The backend asked for; DOCKER_* variables say where the Docker engine is."""
    docker_env = {k: v for k, v in env.items() if k.startswith("DOCKER_")}
    return choose(backend, image=image, environment=docker_env)


def _doctor(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    docker_env = {k: v for k, v in env.items() if k.startswith("DOCKER_")}
    checks = doctor.diagnose(environment=docker_env)
    if args.json:
        sys.stdout.write(json.dumps([asdict(c) for c in checks]) + "\n")
    else:
        sys.stdout.write(doctor.render(checks))
    return report.EXIT_OK if doctor.ready(checks) else report.EXIT_ENVIRONMENT


def _fix(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """`fix`, `resume` and `fork` share everything but the call that drives the graph."""
    logger = log.get()
    secrets = [env[k] for k in SECRET_VARIABLES if env.get(k)]
    repo = Path(args.path).resolve()
    out: Path | None = args.out.resolve() if args.out else None
    facts: dict[str, Any] = {"repo": str(repo)}
    try:
        root = find_root(repo)
        facts.update(repo=str(root))
        out = out or root / STATE_DIR / "out"
        config = load_config(root, config_file=args.config, overrides=_overrides(args, env))
        if not config.model:
            raise UsageError(
                "no model named: pass --model, set FIXBOT_MODEL, or set model in .fixbot.yml"
            )
        request: FixRequest | None = None
        if args.command == "resume":
            thread = args.thread
        elif args.command == "fork":
            thread = fork_id(args.thread, args.from_attempt, config.model, args.hint)
        else:
            commit = pin_commit(root)
            request = FixRequest(
                repo=root,
                commit=commit,
                config=config,
                model_name=config.model,
                base_url=config.base_url,
                hint=args.hint,
                salt=uuid.uuid4().hex if args.fresh else "",
            )
            thread = thread_id(request)
            facts.update(commit=commit)
        facts.update(thread_id=thread)
        with _clients(root, thread, config, env, secrets) as drive:
            if args.command == "fork":
                result = fork_fix(
                    args.thread,
                    args.from_attempt,
                    hint=args.hint,
                    extra_iterations=args.extra_iterations,
                    repo=root,
                    config=config,
                    **drive,
                )
            elif request is None:
                result = resume_fix(thread, _answer(args, env), repo=root, config=config, **drive)
            else:
                result = run_fix(request, **drive)
        if result.status == "fixed":
            evidence_path = shlex.quote(str(out / "evidence.json"))
            result = replace(
                result, reproduce=f"fixbot verify {evidence_path} --repo {shlex.quote(str(root))}"
            )
        if args.apply and result.status == "fixed":
            _apply(root, result.commit, result.diff)
    except FixbotError as exc:
        logger.error("run_failed", error=str(exc), kind=type(exc).__name__)
        result = report.error_result(exc, **facts)
    if out is not None:
        paths = report.write_outputs(result, out, known=secrets)
        logger.info("outputs_written", files=[str(p) for p in paths])
    logger.info(
        "run_finished",
        status=result.status,
        reason=result.reason,
        thread_id=result.thread_id,
        exit_code=result.exit_code,
    )
    if result.status == "escalated" and result.thread_id:
        logger.info("how_to_resume", command=_resume_hint(result))
    if args.json:
        sys.stdout.write(json.dumps(result.summary(), sort_keys=True) + "\n")
    return result.exit_code


@contextmanager
def _clients(
    root: Path, thread: str, config: Config, env: Mapping[str, str], secrets: Sequence[str]
) -> Iterator[dict[str, Any]]:
    """What one run drives the graph with (run_fix / resume_fix keyword arguments): the
    sandbox, the thread's lock, the checkpointer and store, the model (and the strong one),
    released in reverse order."""
    assert config.model, "the caller says which model is missing, in its own words"
    database_url = env.get("FIXBOT_DATABASE_URL")
    with (
        closing(choose_sandbox(config.sandbox.backend, env, image=config.sandbox.image)) as sandbox,
        thread_lock(root / STATE_DIR, thread, database_url),
        checkpointer_for(root / STATE_DIR, database_url) as checkpointer,
        store_for(root / STATE_DIR, database_url) as store,
        OpenAIModel(
            model=config.model,
            api_key=env.get("OPENAI_API_KEY"),
            base_url=config.base_url,
            timeout_seconds=config.request_timeout_seconds,
        ) as model,
        ExitStack() as optional,
    ):
        strong = None
        if config.strong_model:
            strong = optional.enter_context(
                OpenAIModel(
                    model=config.strong_model,
                    api_key=env.get("OPENAI_API_KEY"),
                    base_url=config.base_url,
                    timeout_seconds=config.request_timeout_seconds,
                )
            )
        yield {
            "model": model,
            "strong_model": strong,
            "sandbox": sandbox,
            "checkpointer": checkpointer,
            "store": store,
            "observe": Progress(
                log.get(),
                terminal=sys.stderr if log.is_human() else None,
                attempts=config.max_iterations,
            ),
            "secrets": list(secrets),
        }


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
    proc.check(
        ["git", "-C", str(root), "apply", "--whitespace=nowarn", "-"], stdin_data=diff_text.encode()
    )


def _action(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    def connect(settings: actions.ActionEnv) -> Publisher:
        return github.connect(settings.repository, settings.token, api_url=settings.api_url)

    return actions.run_action(
        env,
        fix=partial(_fix_for_action, env=env),
        connect=connect,
        phase=args.phase,
        result_dir=args.result,
    )


def _fix_for_action(job: actions.FixJob, *, env: Mapping[str, str]) -> FixResult:
    """The action's FixRunner: `fixbot fix` on job.commit of the trusted checkout (its config,
    not the PR head's). Raises FixbotError; run_action records that as the result."""
    overrides: dict[str, object] = {}
    for key, variable in (
        ("model", "FIXBOT_MODEL"),
        ("base_url", "OPENAI_BASE_URL"),
        ("sandbox.backend", "FIXBOT_SANDBOX"),
    ):
        if env.get(variable):
            overrides[key] = env[variable]
    if env.get("FIXBOT_MAX_ITERATIONS"):
        try:
            overrides["max_iterations"] = int(env["FIXBOT_MAX_ITERATIONS"])
        except ValueError:
            raise UsageError("max-iterations must be a whole number") from None
    root = find_root(job.repo)
    config = load_config(root, config_file=job.config_file, overrides=overrides)
    if not config.model:
        raise UsageError("no model named: set the model input, or model in .fixbot.yml")
    request = FixRequest(
        repo=root,
        commit=job.commit,
        config=config,
        model_name=config.model,
        base_url=config.base_url,
        hint=job.hint if job.command == "fix" else "",
        ci_jobs=job.ci_jobs,
    )
    thread, answer = _action_thread(job, request, env)
    with _clients(root, thread, config, env, actions.secrets_of(env)) as drive:
        if answer is None:
            return run_fix(request, **drive)
        return resume_fix(thread, answer, repo=root, config=config, **drive)


def _action_thread(
    job: actions.FixJob, request: FixRequest, env: Mapping[str, str]
) -> tuple[str, dict[str, Any] | None]:
    """The thread to run and the answer to resume it with (None: run, or resume after a
    crash). `/fix [hint]` and `/fix abort` answer the escalated run fixbot's comment named,
    when its paused state is here and it is about the PR's current head; else `/fix [hint]`
    starts a fresh fix with the hint, saying why."""
    by = job.trigger.actor
    if job.command == "abort":
        answer: dict[str, Any] = {"action": "abort", "by": by}
    else:
        answer = {"action": "continue", "hint": job.hint, "by": by}
    # Without a named thread, /fix abort means the plain fix of this commit (no hint).
    thread = job.thread or (thread_id(request) if job.command == "abort" else "")
    if thread:
        root = request.repo
        with checkpointer_for(root / STATE_DIR, env.get("FIXBOT_DATABASE_URL")) as saver:
            found = recorded(thread, saver)
        why = _not_answerable(thread, found, job.commit)
        if not why:
            return thread, answer
        if job.command == "abort":
            raise UsageError(f"/fix abort: nothing to abort: {why}")
        log.get().info("fresh_fix", thread_id=thread, reason=f"{why}: starting a fresh fix")
    return thread_id(request), None


def _not_answerable(thread: str, found: tuple[str, str] | None, commit: str) -> str:
    if found is None:
        return (
            f"no checkpoint of thread {thread} is here (fixbot's state was not kept between "
            "workflow runs; see the README)"
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


def _bench(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    """`fixbot bench`: each corpus entry fixed as `fixbot fix` fixes it, a row each. Exit 0 when
    the bench ran, whatever it fixed (the rows say); 2 when there is nothing to run or an option
    is invalid."""
    logger = log.get()
    overrides = _overrides(args, env)
    try:
        found = find_entries(args.corpus.resolve())
        with tempfile.TemporaryDirectory() as empty:  # the options alone, checked once
            load_config(Path(empty), overrides=overrides)
    except UsageError as exc:
        logger.error("bench_failed", error=str(exc))
        return report.EXIT_USAGE
    fix = partial(
        _bench_fix, overrides=overrides, env=env, out=args.out.resolve() if args.out else None
    )
    rows = run_bench(found, fix, on_row=lambda row: logger.info("bench_entry", **row.as_dict()))
    facts = {"corpus": str(args.corpus.resolve()), "model": overrides.get("model", "")}
    sys.stdout.write(render_json(rows, **facts) if args.json else render_table(rows))
    return report.EXIT_OK


def _bench_fix(
    repo: Path,
    wrap: Wrap,
    *,
    overrides: dict[str, object],
    env: Mapping[str, str],
    out: Path | None,
) -> FixResult:
    """One committed corpus entry, fixed as `fixbot fix REPO` fixes it, its sandbox wrapped."""
    secrets = [env[k] for k in SECRET_VARIABLES if env.get(k)]
    try:
        config = load_config(repo, overrides=overrides)
        if not config.model:
            raise UsageError(
                "no model named: pass --model, set FIXBOT_MODEL, or set model in .fixbot.yml"
            )
        request = FixRequest(
            repo=repo,
            commit=pin_commit(repo),
            config=config,
            model_name=config.model,
            base_url=config.base_url,
        )
        with _clients(repo, thread_id(request), config, env, secrets) as drive:
            result = run_fix(request, **{**drive, "sandbox": wrap(drive["sandbox"])})
    except FixbotError as exc:
        log.get().error("run_failed", error=str(exc), kind=type(exc).__name__)
        result = report.error_result(exc, repo=str(repo))
    if out is not None:
        report.write_outputs(result, out / repo.name, known=secrets)
    return result
