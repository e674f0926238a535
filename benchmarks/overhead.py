"""Orchestration overhead per iteration, as a share of a trivial sandboxed check.

Runs the real graph (SQLite checkpoints, diff work, policy screening, judging, reflection) over
the bundled example with a model that answers instantly with a different wrong diff each time,
and the real bwrap sandbox. Every sandboxed check (its workspace copy included) is timed; what
is neither the model nor a check is orchestration. The per-iteration figure is the difference
between a long and a short run, so per-run costs (snapshot export, graph compile) are reported
apart. Both sides of the ratio come from the same runs.

    python benchmarks/overhead.py [--short 2] [--long 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fixbot.config import load_config
from fixbot.loop import attempts
from fixbot.model.client import Reply
from fixbot.model.window import ContextWindow
from fixbot.runs import FixRequest, run_fix
from fixbot.runs.store import sqlite_checkpointer
from fixbot.sandbox import BwrapSandbox
from fixbot.snapshot import pin_commit

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "calc"


class InstantModel:
    name = "instant"

    def __init__(self) -> None:
        self.calls = 0
        self.seconds = 0.0
        self.window = ContextWindow()

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        temperature: float | None = None,
        deadline: float | None = None,
        max_tokens: int | None = None,
    ) -> Reply:
        start = time.perf_counter()
        self.calls += 1
        text = (
            "Wrong on purpose.\n```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -12 +12 @@\n"
            "-    return sum(values) / (len(values) + 1)\n"
            f"+    return sum(values) / (len(values) + {self.calls + 1})\n```\n"
        )
        self.seconds += time.perf_counter() - start
        return Reply(
            text=text, model=self.name, prompt_tokens=0, completion_tokens=0, estimated=True
        )


class TrialTimer:
    """Wraps fixbot.loop.attempts.run_trial: one sandboxed check, workspace copy included."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.runs = 0
        self.inner = attempts.run_trial

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start
            self.runs += 1


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    shutil.copytree(EXAMPLE, repo)
    (repo / ".fixbot.yml").write_text("gates: {lint: false, types: false}\n")
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=b", "-c", "user.email=b@invalid", "commit", "-qm", "x"],
    ):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    return repo


def one_run(iterations: int, sandbox: BwrapSandbox) -> tuple[float, float]:
    """(seconds outside the model and the sandboxed checks, seconds per sandboxed check)"""
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp))
        # Stuck detection off: the instant model's wrong diffs are deliberately alike.
        overrides = {
            "max_iterations": iterations,
            "model": "instant",
            "stuck.similarity": 1.0,
            "stuck.stagnation_attempts": 50,
        }
        config = load_config(repo, overrides=overrides)
        request = FixRequest(
            repo=repo, commit=pin_commit(repo), config=config, model_name="instant", base_url=None
        )
        model, timer = InstantModel(), TrialTimer()
        attempts.run_trial = timer
        try:
            with sqlite_checkpointer(Path(tmp) / "state.db") as checkpointer:
                start = time.perf_counter()
                result = run_fix(request, model=model, sandbox=sandbox, checkpointer=checkpointer)
                total = time.perf_counter() - start
        finally:
            attempts.run_trial = timer.inner
        assert result.status == "escalated" and model.calls == iterations, result.reason
        return total - timer.seconds - model.seconds, timer.seconds / timer.runs


def one_round(short: int, long: int, sandbox: BwrapSandbox) -> tuple[float, float, float]:
    """(marginal overhead per iteration, fixed overhead per run, seconds per check)"""
    short_overhead, check_a = one_run(short, sandbox)
    long_overhead, check_b = one_run(long, sandbox)
    per_iteration = (long_overhead - short_overhead) / (long - short)
    return per_iteration, short_overhead - short * per_iteration, (check_a + check_b) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--short", type=int, default=2, help="iterations of the short run")
    parser.add_argument("--long", type=int, default=8, help="iterations of the long run")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sandbox = BwrapSandbox()
    rows = [one_round(args.short, args.long, sandbox) for _ in range(args.rounds)]
    per_iteration = statistics.median(r[0] for r in rows)
    fixed = statistics.median(r[1] for r in rows)
    check = statistics.median(r[2] for r in rows)
    print(f"sandbox: {sandbox.describe()}")
    print(f"runs of {args.short} and {args.long} iterations, {args.rounds} rounds (medians)")
    print(f"orchestration overhead per iteration: {per_iteration * 1000:8.1f} ms")
    print(f"  (fixed per run, snapshot and graph:  {fixed * 1000:8.1f} ms)")
    print(f"trivial sandboxed check (pytest):     {check * 1000:8.1f} ms")
    print(f"overhead / check:                     {per_iteration / check:8.1%}  (target <= 5%)")


if __name__ == "__main__":
    main()
