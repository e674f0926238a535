"""Failing first, and what a first-attempt fix costs, against bare runs of the same suite.

A generated repository: N tests (default 500) in files of 20, each doing some real work (about
15 ms here: the suite takes some 8 s bare, a small real one), two of them failing on one bug.
Each round measures, side by side on this machine:

    bare        `python -m pytest -q` on a fresh copy, outside any sandbox: one bare full run
                (with the sandbox's plugin and bytecode settings: the same pytest work)
    attempt     one wrong attempt, failing first (checks.run_trial mode "first"): the time the
                sandbox spent on it, against one full sandboxed run of the same wrong attempt
    fix         `fixbot fix`'s code path (runs.run_fix, the real graph and bubblewrap), with a
                model that answers the right fix at once: baseline, attempt and verification
                together, wall clock and sandbox seconds, with the defaults and with
                `verification.full_reruns: true`

and prints each round's ratios and their medians.

    python benchmarks/failing_first.py [--tests 500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from fixbot.checks import Mode, run_trial
from fixbot.cli.bench import SandboxTimer
from fixbot.config import load_config
from fixbot.model.client import Reply
from fixbot.runs import FixRequest, run_fix
from fixbot.runs.clients import Clients
from fixbot.sandbox import BwrapSandbox, Sandbox
from fixbot.snapshot import pin_commit, protect, take_snapshot

PER_FILE = 20
LIB = (
    "def work(seed: int) -> int:\n"
    "    return sum(i * i for i in range(WORK + seed))\n\n\n"
    "def add(a: int, b: int) -> int:\n"
    "    return a - b\n"
)
FIX = (
    "```diff\n--- a/lib.py\n+++ b/lib.py\n@@ -5,2 +5,2 @@\n def add(a: int, b: int) -> int:\n"
    "-    return a - b\n+    return a + b\n```\n"
)
WRONG = FIX.replace("a + b", "a * b")
CONFIG = "checks:\n  - {name: tests, run: python -m pytest -q}\nmax_iterations: 2\n"


def make_repo(root: Path, tests: int, work: int = 150_000) -> Path:
    repo = root / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "lib.py").write_text(LIB.replace("WORK", str(work)))
    (repo / ".fixbot.yml").write_text(CONFIG)
    for number in range(tests // PER_FILE):
        lines = ["from lib import add, work\n"]
        for index in range(PER_FILE):
            seed = number * PER_FILE + index
            if seed < 2:  # the two failing tests
                test = f"test_add_{seed}() -> None:\n    assert add({seed}, 2) == {seed + 2}\n"
            else:
                test = f"test_work_{seed}() -> None:\n    assert work({seed}) > 0\n"
            lines.append(f"\n\ndef {test}")
        (repo / "tests" / f"test_{number:03d}.py").write_text("".join(lines))
    git = ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "two failing tests"], check=True)
    return repo


class RightAway:
    """A model that answers the right fix at once."""

    name = "right-away"

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        temperature: float | None = None,
        deadline: float | None = None,
        max_tokens: int | None = None,
    ) -> Reply:
        return Reply(FIX, self.name, 0, 0, True)


# The bare run loads the plugins and writes the files the sandboxed runs do: none of those
# installed here (PYTEST_DISABLE_PLUGIN_AUTOLOAD, as in the sandbox), no compiled files.
BARE_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def bare(repo: Path, scratch: Path) -> float:
    """One bare run of the whole suite, on a fresh copy, outside any sandbox."""
    copy = scratch / f"bare-{time.monotonic_ns()}"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git", ".fixbot"))
    start = time.perf_counter()
    env = {**os.environ, **BARE_ENV}
    subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=copy, capture_output=True, env=env)
    seconds = time.perf_counter() - start
    shutil.rmtree(copy)
    return seconds


def fix(repo: Path, sandbox: Sandbox, full_reruns: bool) -> tuple[float, float]:
    """(wall seconds, sandbox seconds) of a first-attempt fix, fresh state each time."""
    overrides: dict[str, object] = {"model": "right-away", "verification.full_reruns": full_reruns}
    config = load_config(repo, overrides=overrides)
    request = FixRequest(
        repo=repo, commit=pin_commit(repo), config=config, model_name="right-away",
        base_url=None, salt=str(time.monotonic_ns()),
    )  # fmt: skip
    timer = SandboxTimer()
    clients = Clients(model=RightAway(), sandbox=timer.wrap(sandbox), checkpointer=InMemorySaver())
    start = time.perf_counter()
    result = run_fix(request, clients)
    wall = time.perf_counter() - start
    if result.status != "fixed" or len(result.attempts) != 1:
        raise SystemExit(f"the fix did not go as planned: {result.status}: {result.reason}")
    return wall, timer.seconds


def attempt(repo: Path, sandbox: Sandbox, scratch: Path) -> tuple[float, float]:
    """(seconds of a wrong attempt failing first, seconds of the same attempt in full)."""
    config = load_config(repo)
    exported = take_snapshot(repo, (), scratch / f"s-{time.monotonic_ns()}", pin_commit(repo))
    snapshot = protect(exported, config.protected_paths)
    baseline, _ = run_trial(sandbox, snapshot, config, "")
    diff = WRONG.split("```diff\n", 1)[1].rsplit("```", 1)[0]
    timings = []
    modes: tuple[Mode, ...] = ("first", "full")
    for mode in modes:
        start = time.perf_counter()
        result, _ = run_trial(sandbox, snapshot, config, diff, baseline=baseline, mode=mode)
        timings.append(time.perf_counter() - start)
        assert result["status"] == "tests_failed", result["status"]
    return timings[0], timings[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tests", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=int, default=150_000, help="loop steps per test")
    args = parser.parse_args()
    sandbox = BwrapSandbox()
    rows = []
    with tempfile.TemporaryDirectory(prefix="fixbot-ff-") as tmp:
        scratch = Path(tmp)
        repo = make_repo(scratch, args.tests, args.work)
        print(f"sandbox: {sandbox.describe()}; {args.tests} tests, 2 failing")
        print("round  bare s  attempt/full  fix wall/bare  fix sandbox/bare  full-reruns wall/bare")
        for number in range(1, args.rounds + 1):
            one = bare(repo, scratch)
            first, full = attempt(repo, sandbox, scratch)
            wall, boxed = fix(repo, sandbox, full_reruns=False)
            wall_full, _ = fix(repo, sandbox, full_reruns=True)
            two = bare(repo, scratch)
            base = (one + two) / 2  # bare runs on either side of the round
            row = (base, first / full, wall / base, boxed / base, wall_full / base)
            rows.append(row)
            print(f"{number:>5}  {row[0]:6.2f}  {row[1]:12.3f}  {row[2]:13.2f}  {row[3]:16.2f}"
                  f"  {row[4]:21.2f}")  # fmt: skip
    medians = [statistics.median(column) for column in zip(*rows, strict=True)]
    print(f"median {medians[0]:6.2f}  {medians[1]:12.3f}  {medians[2]:13.2f}  {medians[3]:16.2f}"
          f"  {medians[4]:21.2f}")  # fmt: skip
    print(
        f"failing first: a wrong attempt costs {medians[1]:.1%} of a full run (target 20%); "
        f"a first-attempt fix costs {medians[2]:.2f}x one bare run of the suite (target 3x), "
        f"{medians[4]:.2f}x with full_reruns"
    )


if __name__ == "__main__":
    main()
