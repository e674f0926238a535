"""`fixbot init [PATH] [--force] [--print]`: a commented `.fixbot.yml` from what the CI runs.

It reads `.github/workflows/*.yml` (and the repository scripts their `run:` steps call), proposes
`checks:` and a `setup_command` from the commands fixbot can run, and lists, in the file, what it
cannot (with why) and the tox, nox and make targets it found (named, never run). Nothing is run.
The file it writes loads with fixbot's own loader; an existing one is kept unless --force.
Exit 0 when it wrote (or printed) a config, 2 on bad input.
"""

from __future__ import annotations

import argparse
import configparser
import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from fixbot import log
from fixbot.commands import CheckSpec
from fixbot.config import CONFIG_FILE, load_config
from fixbot.errors import ConfigError, UsageError
from fixbot.forge.github import (
    Derived,
    Left,
    derive,
    parse_workflow,
    proposed_checks,
    proposed_setup,
)
from fixbot.report import EXIT_OK
from fixbot.secrets import redact
from fixbot.snapshot import read_inside

WORKFLOWS = ".github/workflows"
MAKE_TARGETS = ("test", "tests", "lint", "check", "typecheck")


def init(args: argparse.Namespace, env: Mapping[str, str]) -> int:
    root = Path(args.path).resolve()
    if not root.is_dir():
        raise UsageError(f"fixbot init: {root} is not a folder")
    target = root / CONFIG_FILE
    if target.exists() and not (args.force or args.print):
        raise UsageError(
            f"fixbot init: {target} exists; --force to overwrite it, --print to see the proposal"
        )
    paths, derived = read_ci(root)
    checks = proposed_checks(derived.checks)
    setup = proposed_setup(derived.installs)
    text = render(paths, derived, checks, setup, elsewhere(root))
    must_load(text)
    if args.print:
        sys.stdout.write(text)
    else:
        _write(target, text)
    log.get().info(
        "init_proposed",
        config="stdout" if args.print else str(target),
        workflows=paths,
        checks=[f"{check.name}: {check.run}" for check in checks],
        setup_command=setup or "",
        not_mapped=len(derived.unmapped),
    )
    return EXIT_OK


def read_ci(root: Path) -> tuple[list[str], Derived]:
    """Every workflow's steps, derived in turn (files in name order). UsageError when there are
    none, or one is not a workflow."""
    folder = root / WORKFLOWS
    names = sorted(p.name for p in folder.glob("*") if p.suffix in (".yml", ".yaml"))
    if not names:
        raise UsageError(f"fixbot init: no workflow files in {folder} (.yml or .yaml)")
    derived = Derived()
    for name in names:
        rel = f"{WORKFLOWS}/{name}"
        text = read_inside(root, rel)
        if text is None:
            raise UsageError(f"fixbot init: {rel} is not a regular file in the repository")
        one = derive(parse_workflow(text, rel).steps, root, label=rel)
        derived.checks += one.checks
        derived.installs += one.installs
        derived.unmapped += one.unmapped
        derived.ignored += one.ignored
    return [f"{WORKFLOWS}/{name}" for name in names], derived


def elsewhere(root: Path) -> list[str]:
    """tox envs, nox sessions and make targets the repository defines: named, never run."""
    found = []
    tox = read_inside(root, "tox.ini")
    if tox is not None:
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(tox)
        except configparser.Error:
            found.append("tox.ini (unreadable)")
        else:
            listed = re.split(r"[,\s]+", parser.get("tox", "envlist", fallback="").strip())
            sections = [s.removeprefix("testenv:") for s in parser if s.startswith("testenv:")]
            envs = list(dict.fromkeys(e for e in (*listed, *sections) if e))
            found.append(f"tox.ini: environments {', '.join(envs) or '(none listed)'}")
    nox = read_inside(root, "noxfile.py")
    if nox is not None:
        sessions = re.findall(r"@nox\.session\b[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+(\w+)", nox)
        found.append(f"noxfile.py: sessions {', '.join(sessions) or '(none found)'}")
    make = read_inside(root, "Makefile")
    if make is not None:
        pattern = rf"^({'|'.join(MAKE_TARGETS)})\s*:(?!=)"
        targets = list(dict.fromkeys(re.findall(pattern, make, re.MULTILINE)))
        if targets:
            found.append(f"Makefile: targets {', '.join(targets)}")
    return found


def render(
    workflows: Sequence[str],
    derived: Derived,
    checks: Sequence[CheckSpec],
    setup: str | None,
    found: Sequence[str],
) -> str:
    """The proposal as a commented .fixbot.yml; every comment one inert line."""
    lines = [
        f"# {CONFIG_FILE}, proposed by `fixbot init` from {', '.join(workflows)}.",
        "# Review it. The checks are the commands your CI runs that fixbot can run too, in the",
        "# CI's order. fixbot runs each in its sandbox (no network, no services), split into",
        "# words like a shell command and never through a shell; `kind` says how its result is",
        "# read. Every key is described in fixbot's docs/config.md.",
        "",
    ]
    if setup:
        lines += [
            "# The install your CI runs: fixbot's prepare step (the one step with a network)."
        ]
        lines += [f"setup_command: {_scalar(setup)}", ""]
    else:
        lines += ["# No install found in the CI: the checks run with fixbot's own toolchain.", ""]
    if checks:
        lines.append("checks:")
        where = {check.name: _where(check, derived) for check in checks}
        for check in checks:
            lines += [f"  # {_comment(where[check.name])}", f"  - name: {check.name}"]
            lines += [f"    run: {_scalar(check.run)}", f"    kind: {check.kind}"]
        lines.append("")
    else:
        lines += [
            "# No command of the CI maps to a check: without `checks:`, fixbot runs",
            "# test_command (python -m pytest), with the ruff and mypy gates where the",
            "# repository configures ruff and mypy.",
            "",
        ]
    lines += _listed(
        "What the CI runs that fixbot does not (no network, no services, no shell):",
        derived.unmapped,
    )
    if found:
        lines.append("# Found, not run (fixbot runs none of these; list their commands as checks):")
        lines += [f"#   {_comment(item)}" for item in found]
    return "\n".join(lines).rstrip("\n") + "\n"


def _where(check: CheckSpec, derived: Derived) -> str:
    return next(f.where for f in derived.checks if f.argv == check.argv)


def _listed(heading: str, items: Sequence[Left]) -> list[str]:
    if not items:
        return []
    lines = [f"# {heading}"]
    for item in items:
        lines += [
            f"#   {_comment(item.where)}: {_comment(item.text)}",
            f"#     {_comment(item.why)}",
        ]
    return [*lines, ""]


def _comment(text: str) -> str:
    """Repository text as part of a YAML comment: one printable line, secrets redacted."""
    one = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return redact(one)


def _scalar(value: str) -> str:
    """A string as a YAML scalar (plain where YAML allows it, else quoted)."""
    dumped = yaml.safe_dump(value, width=1_000_000, allow_unicode=False)
    return dumped.removesuffix("\n...\n").strip()


def must_load(text: str) -> None:
    """The proposal loads with fixbot's own loader, or this is fixbot's bug, said plainly."""
    with tempfile.TemporaryDirectory(prefix="fixbot-init-") as folder:
        Path(folder, CONFIG_FILE).write_text(text, encoding="utf-8")
        try:
            load_config(Path(folder))
        except ConfigError as exc:
            raise UsageError(f"fixbot init proposed a config fixbot refuses ({exc})") from exc


def _write(target: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, target)
