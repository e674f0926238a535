"""What a first-attempt fix and a fork-bomb candidate cost on a real project, beside its suite,
this checkout side by side with another (`--against`: the code before a change).

The project is python-humanize 4.11.0 as its sdist ships it (its tests included), fetched once
with pip from the package index into --cache; the fix's source half is reverted (ordinal()'s
special case loses 13: `113` becomes `113rd`), its tests kept, and `.fixbot.yml` says what its CI
does (`python -m pip install -e .[tests]`, then `python -m pytest`). A model that answers the
real fix at once drives `fixbot fix`'s code path (runs.run_fix, the real graph, bubblewrap).
Each round measures, on this machine, for each checkout in turn (a child process that imports
that checkout's fixbot):

    suite       the project's suite run bare: `python -m pytest` in a virtualenv made outside any
                sandbox with the same install, on a fresh copy (the median of three, measured
                before each checkout's runs)
    cold fix    a fresh clone: the prepare step builds the project's environment (the shared
                ones this checkout keeps per machine, if any, are warm)
    fresh fix   the same on a fresh machine: the shared environments built too (this checkout
                only; the other has none)
    warm fix    the first clone again, fresh state: its prepared environment is reused
    fork bomb   one attempt whose diff makes ordinal() fork for ever (the whole-sandbox process
                cap holds it), failing first: from its diff to its verdict

and prints each figure, what the fix's time went to (its sandboxed commands; the rest is
fixbot's own work outside the sandbox), the overhead beyond three runs of the suite, and the
medians and ratios.

    python benchmarks/cost.py [--rounds 3] [--against ../main] [--bomb-timeout 60]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECT = "humanize==4.11.0"
FOLDER = "humanize-4.11.0"
BUGGY = ("if value % 100 in (11, 12, 13):", "if value % 100 in (11, 12):")
FIX = (
    "```diff\n--- a/src/humanize/number.py\n+++ b/src/humanize/number.py\n"
    "@@ -105,3 +105,3 @@\n         )\n"
    "-    if value % 100 in (11, 12):  # special case\n"
    "+    if value % 100 in (11, 12, 13):  # special case\n"
    '         return f"{value}{t[0]}"\n```\n'
)
BOMB = (
    "--- a/src/humanize/number.py\n+++ b/src/humanize/number.py\n"
    "@@ -105,3 +105,10 @@\n         )\n"
    "-    if value % 100 in (11, 12):  # special case\n"
    "+    if value % 100 in (11, 12, 13):  # special case\n"
    "+        import os\n"
    "+        while True:\n"
    "+            try:\n"
    "+                os.fork()\n"
    "+            except OSError:\n"
    "+                pass\n"
    '         return f"{value}{t[0]}"\n'
)
SETUP = "python -m pip install -e .[tests]"  # the project's own install, as its CI does it
CONFIG = (
    f"setup_command: {SETUP}\n"
    "checks:\n  - {name: tests, run: python -m pytest}\n"
    "max_iterations: 1\n"
)
BARE_ENV = {"PYTHONDONTWRITEBYTECODE": "1"}
HERE = Path(__file__).resolve().parent.parent


# --- the parent: the project, the bare suite, the children, the table ---------------------


def fetch(cache: Path) -> Path:
    """The project's sdist, downloaded once with pip."""
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"{FOLDER}.tar.gz"))
    if not found:
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*pip, "-d", str(cache), PROJECT], check=True)
        found = sorted(cache.glob(f"{FOLDER}.tar.gz"))
    return found[0]


def make_repo(sdist: Path, where: Path) -> Path:
    with tarfile.open(sdist) as archive:
        archive.extractall(where, filter="data")
    repo = where / FOLDER
    number = repo / "src" / "humanize" / "number.py"
    text = number.read_text()
    assert BUGGY[0] in text, "the sdist is not the one this benchmark knows"
    number.write_text(text.replace(BUGGY[0], BUGGY[1]))
    (repo / ".fixbot.yml").write_text(CONFIG)
    git = ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "ordinal: 113rd"], check=True)
    return repo


def bare_env(repo: Path, scratch: Path) -> Path:
    """A virtualenv outside any sandbox with the project installed as its CI does."""
    venv = scratch / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-e", ".[tests]"]
    subprocess.run(install, cwd=repo, check=True, capture_output=True)
    return venv


def suite(repo: Path, venv: Path, scratch: Path) -> float:
    """One bare run of the whole suite on a fresh copy (it fails: the bug is in)."""
    copy = scratch / f"bare-{time.monotonic_ns()}"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git", ".fixbot"))
    env = {**os.environ, **BARE_ENV}
    start = time.perf_counter()
    argv = [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    subprocess.run(argv, cwd=copy, capture_output=True, env=env)
    seconds = time.perf_counter() - start
    shutil.rmtree(copy)
    return seconds


def child(checkout: Path, origin: Path, scratch: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One checkout's figures, from a process that imports that checkout's fixbot."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", str(origin), str(scratch)]
    argv += ["--bomb-timeout", str(args.bomb_timeout)]
    argv += ["--no-bomb"] if args.no_bomb else []
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: the child failed:\n{done.stderr[-3000:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def beyond(fix: float, one: float) -> float:
    return fix - 3 * one


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "fixbot-bench")
    parser.add_argument("--against", type=Path, help="another checkout, side by side")
    parser.add_argument("--no-bomb", action="store_true", help="skip the fork-bomb candidate")
    parser.add_argument(
        "--bomb-timeout", type=int, default=60, help="sandbox.timeout_seconds for the fork bomb"
    )
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(*args.child, args)))
        return
    checkouts = {"this": HERE, **({"against": args.against.resolve()} if args.against else {})}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    with tempfile.TemporaryDirectory(prefix="fixbot-cost-") as tmp:
        scratch = Path(tmp)
        origin = make_repo(fetch(args.cache), scratch / "origin")
        venv = bare_env(origin, scratch)
        print(f"project: {PROJECT} (its sdist), one bug: {BUGGY[0]!r} -> {BUGGY[1]!r}")
        for number in range(1, args.rounds + 1):
            order = list(checkouts.items())
            order = order if number % 2 else order[::-1]  # each goes first every other round
            for name, checkout in order:
                one = statistics.median(suite(origin, venv, scratch) for _ in range(3))
                found = {"suite": one, **child(checkout, origin, scratch, args)}
                rows[name].append(found)
                show(number, name, checkout, found)
    summary(rows, args)


def show(number: int, name: str, checkout: Path, found: Mapping[str, Any]) -> None:
    one = found["suite"]
    print(f"\nround {number}, {name} ({checkout}): suite {one:.2f} s bare")
    for kind in ("cold", "fresh", "warm"):
        if kind not in found:
            continue
        run = found[kind]
        print(
            f"  {kind} fix {run['wall']:6.2f} s, {beyond(run['wall'], one):6.2f} s beyond three "
            f"suites, {beyond(run['wall'] - run['setup'], one):6.2f} s beyond them and the "
            f"project's own install ({run['outside']:.2f} s outside the sandbox)"
        )
        for what, seconds in run["ledger"]:
            print(f"      {seconds:6.2f} s  {what}")
    if "bomb" in found:
        print(f"  fork bomb {found['bomb']:6.2f} s: {found['bomb_verdict']}")


def summary(rows: Mapping[str, list[dict[str, Any]]], args: argparse.Namespace) -> None:
    def median(name: str, kind: str, install: bool = True) -> float:
        figures = [
            beyond(r[kind]["wall"] - (0 if install else r[kind]["setup"]), r["suite"])
            for r in rows[name]
            if kind in r
        ]
        return statistics.median(figures) if figures else float("nan")

    print("\nmedians, seconds beyond three runs of the suite (after /: and beyond the project's")
    print("own install, its setup_command's time); a fork bomb: its whole cost")
    print("checkout   suite  cold fix        fresh fix       warm fix  fork bomb")
    for name, found in rows.items():
        suite_s = statistics.median(r["suite"] for r in found)
        bomb = statistics.median(r["bomb"] for r in found) if "bomb" in found[0] else 0.0
        cold = f"{median(name, 'cold'):6.2f} /{median(name, 'cold', False):6.2f}"
        fresh = f"{median(name, 'fresh'):6.2f} /{median(name, 'fresh', False):6.2f}"
        print(
            f"{name:8}  {suite_s:6.2f}  {cold}  {fresh}  {median(name, 'warm'):8.2f}  {bomb:9.2f}"
        )
    if "against" in rows:
        for kind in ("cold", "warm"):
            before, after = median("against", kind), median("this", kind)
            print(f"{kind} fix beyond three suites: {before:.1f} s before, {after:.1f} s now")
        before, after = median("against", "cold", False), median("this", "cold", False)
        print(
            f"cold fix beyond three suites and the install: {before:.1f} s before, {after:.1f} now"
        )
        if not args.no_bomb:
            before = statistics.median(r["bomb"] for r in rows["against"])
            after = statistics.median(r["bomb"] for r in rows["this"])
            print(
                f"fork bomb: {before:.1f} s before, {after:.1f} s now ({before / after:.0f}x; "
                f"sandbox.timeout_seconds {args.bomb_timeout} here, 300 by default)"
            )
    print("targets: a first-attempt fix at most 10 s beyond three suites; a fork bomb 30 s")


# --- the child: one checkout's fixbot, imported from PYTHONPATH ----------------------------


class RightAway:
    """A model that answers the right fix at once."""

    name = "right-away"

    def __init__(self) -> None:
        from fixbot.model.window import ContextWindow

        self.window = ContextWindow()

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        temperature: float | None = None,
        deadline: float | None = None,
        max_tokens: int | None = None,
    ) -> Any:
        from fixbot.model.client import Reply

        return Reply(FIX, self.name, 0, 0, True)


@dataclass
class Ledger:
    """Every sandboxed command of a run: (what, seconds), in order."""

    entries: list[tuple[str, float]] = field(default_factory=list)


class LedgerSandbox:
    """A Sandbox that runs everything through `inner` and writes each command in a ledger."""

    def __init__(self, inner: Any, ledger: Ledger) -> None:
        self.inner = inner
        self.ledger = ledger
        self.name = inner.name
        self.host_toolchain = inner.host_toolchain

    @property
    def layered(self) -> bool:
        return bool(self.inner.layered)

    @property
    def passes_fds(self) -> bool:
        return bool(self.inner.passes_fds)

    def describe(self) -> str:
        return str(self.inner.describe())

    def close(self) -> None:
        self.inner.close()

    def run(self, argv: Sequence[str], spec: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.inner.run(argv, spec)
        finally:
            self.ledger.entries.append((f"run {_short(argv)}", time.perf_counter() - start))

    def prepare(self, argv: Sequence[str], **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.inner.prepare(argv, **kwargs)
        finally:
            self.ledger.entries.append((f"prepare {_short(argv)}", time.perf_counter() - start))


def _short(argv: Sequence[str]) -> str:
    words = [Path(w).name if w.startswith("/") else w for w in argv]
    if "-c" in words:  # a script: its first line
        at = words.index("-c")
        words = [*words[:at], "-c", words[at + 1].splitlines()[0][:30] + "..."]
    return " ".join(words[:7])


def measure(origin: Path, scratch: Path, args: argparse.Namespace) -> dict[str, Any]:
    from fixbot.checks import index_settings
    from fixbot.sandbox import BwrapSandbox

    sandbox = BwrapSandbox()
    index = index_settings(os.environ)
    stamp = time.monotonic_ns()
    repo = scratch / f"clone-{stamp}"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    found: dict[str, Any] = {"cold": fix(repo, sandbox, index)}
    if hasattr(index, "cache"):  # a checkout with shared environments: a fresh machine too
        fresh = scratch / f"clone-fresh-{stamp}"
        subprocess.run(["git", "clone", "-q", str(origin), str(fresh)], check=True)
        machine = dataclasses.replace(index, cache=str(scratch / f"machine-{stamp}"))
        found["fresh"] = fix(fresh, sandbox, machine)
    found["warm"] = fix(repo, sandbox, index)
    if not args.no_bomb:
        found["bomb"], found["bomb_verdict"] = fork_bomb(repo, sandbox, index, scratch, args)
    return found


def fix(repo: Path, sandbox: Any, index: Any) -> dict[str, Any]:
    """A first-attempt fix, fresh state: its wall seconds, the sandboxed commands, the rest."""
    from langgraph.checkpoint.memory import InMemorySaver

    from fixbot.config import load_config
    from fixbot.runs import FixRequest, run_fix
    from fixbot.runs.clients import Clients
    from fixbot.snapshot import pin_commit

    config = load_config(repo, overrides={"model": "right-away"})
    request = FixRequest(
        repo=repo, commit=pin_commit(repo), config=config, model_name="right-away",
        base_url=None, salt=str(time.monotonic_ns()),
    )  # fmt: skip
    ledger = Ledger()
    clients = Clients(
        model=RightAway(),
        sandbox=LedgerSandbox(sandbox, ledger),
        checkpointer=InMemorySaver(),
        index=index,
    )
    start = time.perf_counter()
    result = run_fix(request, clients)
    wall = time.perf_counter() - start
    if result.status != "fixed" or len(result.attempts) != 1:
        raise SystemExit(f"the fix did not go as planned: {result.status}: {result.reason}")
    boxed = sum(seconds for _, seconds in ledger.entries)
    own = sum(seconds for what, seconds in ledger.entries if what == f"prepare {SETUP}")
    return {"wall": wall, "outside": wall - boxed, "setup": own, "ledger": ledger.entries}


def fork_bomb(
    repo: Path, sandbox: Any, index: Any, scratch: Path, args: argparse.Namespace
) -> tuple[float, str]:
    """(seconds, its verdict) of one attempt whose diff forks for ever, failing first."""
    from fixbot.checks import run_trial
    from fixbot.config import load_config
    from fixbot.snapshot import pin_commit, protect, take_snapshot

    config = load_config(repo, overrides={"sandbox.timeout_seconds": args.bomb_timeout})
    exported = take_snapshot(repo, (), scratch / f"s-{time.monotonic_ns()}", pin_commit(repo))
    snapshot = protect(exported, config.protected_paths)
    baseline, _ = run_trial(sandbox, snapshot, config, "", index=index)
    start = time.perf_counter()
    result, _ = run_trial(
        sandbox, snapshot, config, BOMB, baseline=baseline, mode="first", index=index
    )
    seconds = time.perf_counter() - start
    said = "; ".join(f"{r['name']}: {r['status']}: {r['summary']}" for r in result["checks"])
    return seconds, said


if __name__ == "__main__":
    main()
