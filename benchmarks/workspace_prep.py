"""Preparing one attempt's workspace: a 20-file repository against a 20,000-file one.

    python benchmarks/workspace_prep.py [--rounds 7] [--big 20000]

Measured side by side in one run, medians of `rounds`:
- prepare: the attempt's scratch folder (a capped tmpfs as root), its workspace with a one-file
  diff written in, and its removal; layered (overlay over the snapshot) against a full copy;
- prepare + run: the same, plus one sandboxed `true` over the workspace (bubblewrap), which is
  where the overlay is mounted.
The target is a ratio (big / small) of at most 2x for what fixbot does per attempt. Layers need
root (the benchmark says so and measures only the full copy otherwise).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fixbot import edits as diff
from fixbot.sandbox import BwrapSandbox, Limits, attempt_scratch
from fixbot.snapshot import Snapshot, prepare, read_inside, tree_bytes

PATCH = """\
--- a/pkg/m0/f0.py
+++ b/pkg/m0/f0.py
@@ -1 +1 @@
-VALUE = 0
+VALUE = 1
"""


def make_tree(root: Path, files: int) -> Snapshot:
    tree = root / "tree"
    for n in range(files):
        path = tree / "pkg" / f"m{n // 100}" / f"f{n % 100}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {n % 100}\n" + "# padding\n" * 20)
    return Snapshot(repo=root, commit="0" * 40, tree=tree, manifest={})


def attempt(snapshot: Snapshot, layered: bool, sandbox: BwrapSandbox | None) -> Callable[[], None]:
    patch = diff.plan_patch(PATCH, lambda rel: read_inside(snapshot.tree, rel))
    extra = 0 if layered else tree_bytes(snapshot)

    def once() -> None:
        with attempt_scratch(64, extra_bytes=extra) as scratch:
            ws = prepare(snapshot, scratch.path / "repo", layered=layered, patch=patch)
            if sandbox is not None:
                out = scratch.path / "out"
                out.mkdir()
                done = sandbox.run(
                    ["true"], workspace=ws.root, outputs=out, lower=ws.lower, limits=Limits()
                )
                assert done.returncode == 0, done.output

    return once


def median_ms(fn: Callable[[], None], rounds: int) -> float:
    fn()  # warm
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--big", type=int, default=20_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="fixbot-bench-"))
    try:
        small = make_tree(root / "small", args.small)
        big = make_tree(root / "big", args.big)
        sandbox = BwrapSandbox() if shutil.which("bwrap") else None
        layers = os.geteuid() == 0 and sandbox is not None and sandbox.layered
        if sandbox is not None and layers:
            for snap in (small, big):  # what a run does once: the snapshot, given to nobody
                attempt(snap, True, sandbox)()
        kinds = [("full copy", False)] + ([("layered", True)] if layers else [])
        print(f"workspace per attempt, {args.small} vs {args.big} files, median of {args.rounds}")
        print(f"{'kind':<12}{'step':<16}{'small ms':>10}{'big ms':>10}{'ratio':>8}")
        for label, layered in kinds:
            steps: list[tuple[str, BwrapSandbox | None]] = [("prepare", None)]
            if sandbox is not None:
                steps.append(("prepare + run", sandbox))
            for step, box in steps:
                a = median_ms(attempt(small, layered, box), args.rounds)
                b = median_ms(attempt(big, layered, box), args.rounds)
                print(f"{label:<12}{step:<16}{a:>10.1f}{b:>10.1f}{b / a:>7.2f}x")
        if not layers:
            print("layers: not measured (they need root and bubblewrap)")
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
