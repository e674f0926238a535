"""Checkpoint bytes per attempt: what a run stores in its state database, and that it stays
bounded when the tests print a lot (logs are truncated in state; the full log stays on disk).

Runs the real graph over the bundled example with a model that answers instantly with a
different wrong diff each time, and the real bwrap sandbox, for a short and a long run, with a
quiet failing test and with one that prints `--noise-kb` of output; the bytes per attempt are
the difference between the runs' SQLite checkpoint rows (checkpoints and pending writes) over
the difference in attempts. The variants are measured side by side in one run: what an attempt
adds must not grow with what the tests print (logs are capped in the state; older attempts keep
a slim result there, their full one under .fixbot/logs/).

    python benchmarks/checkpoint_bytes.py [--short 2] [--long 6] [--noise-kb 256]
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.overhead import InstantModel, make_repo
from fixbot.config import load_config
from fixbot.runs import FixRequest, run_fix
from fixbot.runs.store import sqlite_checkpointer
from fixbot.sandbox import BwrapSandbox
from fixbot.snapshot import pin_commit

NOISY_TEST = """
def test_noisy() -> None:
    print("x" * {size})
    assert False, "noisy failure"
"""


def stored_bytes(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        (checkpoints,) = conn.execute(
            "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints"
        ).fetchone()
        (writes,) = conn.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes").fetchone()
    return int(checkpoints) + int(writes)


def one_run(iterations: int, noise_kb: int, sandbox: BwrapSandbox) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp))
        if noise_kb:
            (repo / "tests" / "test_noisy.py").write_text(NOISY_TEST.format(size=noise_kb * 1024))
            commit = ["-c", "user.name=b", "-c", "user.email=b@invalid", "commit", "-qm", "n"]
            for git_args in (["add", "-A"], commit):
                subprocess.run(["git", "-C", str(repo), *git_args], check=True)
        overrides = {
            "max_iterations": iterations,
            "model": "instant",
            "stuck.similarity": 1.0,
            "stuck.stagnation_attempts": 50,
            "verification.baseline_runs": 1,
        }
        config = load_config(repo, overrides=overrides)
        request = FixRequest(
            repo=repo, commit=pin_commit(repo), config=config, model_name="instant", base_url=None
        )
        db = Path(tmp) / "state.db"
        with sqlite_checkpointer(db) as checkpointer:
            result = run_fix(
                request, model=InstantModel(), sandbox=sandbox, checkpointer=checkpointer
            )
        assert result.status == "escalated", result.reason
        return stored_bytes(db)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=2)
    parser.add_argument("--long", type=int, default=6)
    parser.add_argument("--noise-kb", type=int, default=256)
    args = parser.parse_args()
    sandbox = BwrapSandbox()
    print(f"checkpoint bytes, runs of {args.short} and {args.long} attempts (SQLite rows)")
    print(f"{'failing test output':<24}{'short run':>12}{'long run':>12}{'per attempt':>14}")
    variants = [("quiet", 0), (f"{args.noise_kb // 4} KB printed", args.noise_kb // 4)]
    variants.append((f"{args.noise_kb} KB printed", args.noise_kb))
    for label, noise in variants:
        short = one_run(args.short, noise, sandbox)
        long = one_run(args.long, noise, sandbox)
        per = (long - short) / (args.long - args.short)
        print(f"{label:<24}{short:>12,}{long:>12,}{per:>14,.0f}")


if __name__ == "__main__":
    main()
