"""The command line: one small function per command, and the option groups they share."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fixbot import __version__
from fixbot.forge.github import PHASES
from fixbot.report import EXIT_USAGE

BACKENDS = ["auto", "docker", "bwrap"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse exits 2 on usage errors; keep that, say why
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"fixbot: error: {message}\n")


def _path(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("path", nargs="?", default=".", help="the repository (default: .)")


def _output(sub: argparse.ArgumentParser, json_help: str = "print JSON on stdout") -> None:
    sub.add_argument("--json", action="store_true", help=json_help)
    sub.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")


def _model(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--model", help="model name (else $FIXBOT_MODEL, else config)")
    sub.add_argument(
        "--base-url",
        help="OpenAI-compatible endpoint (else $OPENAI_BASE_URL, else config, else api.openai.com)",
    )


def _run(sub: argparse.ArgumentParser) -> None:
    """What fix, resume and fork share: the config, the model, the sandbox, the outputs."""
    sub.add_argument("--config", type=Path, help="config file (default: PATH/.fixbot.yml)")
    _model(sub)
    sub.add_argument("--sandbox", choices=BACKENDS, help="sandbox backend")
    sub.add_argument("--out", type=Path, help="output folder (default: PATH/.fixbot/out)")
    sub.add_argument(
        "--apply", action="store_true", help="apply the verified fix to the working tree"
    )
    _output(sub, "print one JSON summary on stdout")


def _fix(commands: Any) -> None:
    fix = commands.add_parser("fix", help="fix the failing checks of a local git repository")
    _path(fix)
    _run(fix)
    fix.add_argument("--max-iterations", type=int, help="attempts before escalating")
    fix.add_argument(
        "--fresh", action="store_true", help="start a new run instead of resuming the recorded one"
    )
    fix.add_argument("--hint", default="", help="a hint for the model")
    fix.add_argument(
        "--base",
        help="base branch or commit: failures that also fail there are labelled pre-existing",
    )


def _resume(commands: Any) -> None:
    resume = commands.add_parser(
        "resume", help="answer an escalated run: continue it with a hint, or abort it"
    )
    resume.add_argument("thread", help="the thread id the escalated run printed")
    _path(resume)
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
    _run(resume)


def _fork(commands: Any) -> None:
    fork = commands.add_parser(
        "fork", help="continue a thread from an earlier attempt in a new thread (other settings)"
    )
    fork.add_argument("thread", help="the thread to fork")
    _path(fork)
    fork.add_argument(
        "--from-attempt", type=int, required=True, help="continue after this attempt was judged"
    )
    fork.add_argument("--hint", default="", help="a hint for the model")
    fork.add_argument("--extra-iterations", type=int, help="more attempts (capped by config)")
    _run(fork)


def _views(commands: Any) -> None:
    for name, text in (("history", "list a thread's attempts"), ("show", "print one attempt")):
        view = commands.add_parser(name, help=text)
        view.add_argument("thread", help="the thread id")
        _path(view)
        if name == "show":
            view.add_argument("--attempt", type=int, required=True, help="the attempt number")
        _output(view)
    learned = commands.add_parser(
        "lessons", help="list or delete what fixbot learned from its verified fixes"
    )
    learned_commands = learned.add_subparsers(
        dest="lessons_command", required=True, parser_class=_Parser
    )
    listed = learned_commands.add_parser("list", help="this repository's lessons, newest first")
    _path(listed)
    removed = learned_commands.add_parser("rm", help="delete one lesson")
    removed.add_argument("key", help="the lesson's key (from fixbot lessons list)")
    _path(removed)
    for sub in (listed, removed):
        _output(sub)
    prune = commands.add_parser(
        "prune", help="delete threads idle, and lessons older, than the retention age"
    )
    _path(prune)
    prune.add_argument("--older-than-days", type=int, help="default: retention_days (config)")
    _output(prune)


def _init(commands: Any) -> None:
    init = commands.add_parser(
        "init", help="propose a .fixbot.yml from the CI's workflows (checks, setup_command)"
    )
    _path(init)
    init.add_argument("--force", action="store_true", help="overwrite an existing .fixbot.yml")
    init.add_argument(
        "--print", action="store_true", help="print the proposal on stdout instead of writing it"
    )
    init.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")


def _tools(commands: Any) -> None:
    act = commands.add_parser(
        "action", help="one GitHub Actions step: the event in, at most one fix PR out"
    )
    act.add_argument(
        "--phase",
        choices=PHASES,
        default="all",
        help="fix: record the result, write nothing to GitHub; publish: open the PR from --result",
    )
    act.add_argument("--result", type=Path, help="with --phase publish: the recorded result folder")
    act.add_argument("--log-format", choices=["auto", "human", "json"], default="auto")
    doc = commands.add_parser(
        "doctor", help="what this machine offers fixbot: sandboxes, git, test tools"
    )
    _output(doc)
    check = commands.add_parser(
        "verify", help="re-run the verification recorded in an evidence.json"
    )
    check.add_argument("evidence", type=Path, help="the evidence.json of a fixed run")
    check.add_argument("--repo", type=Path, default=Path("."), help="the repository (default: .)")
    _output(check, "print one JSON summary on stdout")
    bench = commands.add_parser(
        "bench", help="run fixbot over a corpus of failing repositories: a table and totals"
    )
    bench.add_argument(
        "corpus", type=Path, help="a folder of entries: each a repository's files and .fixbot.yml"
    )
    _model(bench)
    bench.add_argument("--max-iterations", type=int, help="attempts per entry before escalating")
    bench.add_argument("--sandbox", choices=BACKENDS, help="sandbox backend")
    bench.add_argument("--out", type=Path, help="keep each entry's outputs under OUT/ENTRY/")
    _output(bench, "print one JSON object on stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fixbot", description="Fix failing builds, verified in a sandbox.")
    parser.add_argument("--version", action="version", version=f"fixbot {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for add in (_fix, _resume, _fork, _views, _init, _tools):
        add(commands)
    return parser
