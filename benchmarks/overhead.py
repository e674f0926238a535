"""Orchestration overhead per iteration, as a share of a trivial sandboxed check.

Runs the real graph (SQLite checkpoints, diff work, fresh copies, judging, reflection) over the
bundled example with a model that answers instantly with a different wrong diff each time, and
the real bwrap sandbox with its time recorded. Everything that is neither the model nor the
sandbox is orchestration overhead. Both figures come from the same run, side by side.

    python benchmarks/overhead.py [--iterations 8] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from fixbot.config import load_config
from fixbot.llm import Reply
from fixbot.proc import Completed
from fixbot.sandbox import DEFAULT_LIMITS, Limits
from fixbot.sandbox.bwrap import BwrapSandbox
from fixbot.session import FixRequest, run_fix
from fixbot.snapshot import pin_commit

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "calc"


class InstantModel:
    name = "instant"

    def __init__(self) -> None:
        self.calls = 0
        self.seconds = 0.0

    def complete(
        self, messages: Sequence[Mapping[str, str]], *, temperature: float | None = None
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


class TimedSandbox:
    def __init__(self, inner: BwrapSandbox) -> None:
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0
        self.runs = 0

    def describe(self) -> str:
        return self.inner.describe()

    def run(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        outputs: Path,
        readonly: Sequence[str] = (),
        limits: Limits = DEFAULT_LIMITS,
        env: Mapping[str, str] | None = None,
    ) -> Completed:
        start = time.perf_counter()
        try:
            return self.inner.run(
                argv,
                workspace=workspace,
                outputs=outputs,
                readonly=readonly,
                limits=limits,
                env=env,
            )
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


def one_round(iterations: int, sandbox: BwrapSandbox) -> tuple[float, float]:
    """(orchestration seconds per iteration, sandbox seconds per check)"""
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp))
        config = load_config(repo, overrides={"max_iterations": iterations, "model": "instant"})
        request = FixRequest(
            repo=repo, commit=pin_commit(repo), config=config, model_name="instant", base_url=None
        )
        model, timed = InstantModel(), TimedSandbox(sandbox)
        with closing(sqlite3.connect(Path(tmp) / "state.db", check_same_thread=False)) as db:
            start = time.perf_counter()
            result = run_fix(request, model=model, sandbox=timed, checkpointer=SqliteSaver(db))
            total = time.perf_counter() - start
        assert result.status == "escalated" and model.calls == iterations, result.reason
        overhead = total - timed.seconds - model.seconds
        return overhead / iterations, timed.seconds / timed.runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sandbox = BwrapSandbox()
    rows = [one_round(args.iterations, sandbox) for _ in range(args.rounds)]
    overhead = statistics.median(r[0] for r in rows)
    check = statistics.median(r[1] for r in rows)
    print(f"sandbox: {sandbox.describe()}")
    print(f"iterations per run: {args.iterations}, rounds: {args.rounds} (medians below)")
    print(f"orchestration overhead per iteration: {overhead * 1000:8.1f} ms")
    print(f"trivial sandboxed check (pytest):     {check * 1000:8.1f} ms")
    print(f"overhead / check:                     {overhead / check:8.1%}  (target <= 5%)")


if __name__ == "__main__":
    main()
