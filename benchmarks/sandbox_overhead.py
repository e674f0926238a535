"""What a sandbox costs per check: the same pytest command bare, with fixbot's plugin and report
channel but no sandbox, in bubblewrap, in Docker.

A ~1 s pytest suite runs exactly as fixbot runs it (checks.command_argv: no cache, plugins not
auto-loaded, the allow-listed environment; with fixbot's plugin, its per-test timeout and its
report channel cross-checked, as harness.run_pytest runs it), round after round, the backends
interleaved so that they share the machine's moods. Medians and their ratios to the bare run
are printed side by side; the targets are bubblewrap <= 1.2x and Docker <= 2x.

    python benchmarks/sandbox_overhead.py [--rounds 7] [--tests 10] [--test-seconds 0.07]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from fixbot import proc
from fixbot.checks.gates import TEST_ENV, command_argv
from fixbot.checks.pytest.channel import Staged
from fixbot.checks.pytest.harness import SandboxLauncher, run_pytest
from fixbot.errors import SandboxUnavailable
from fixbot.proc import Completed
from fixbot.sandbox import BwrapSandbox, DockerSandbox, Limits, RunSpec, Sandbox
from fixbot.sandbox.protocol import BASE_ENV

TARGETS = {"bwrap": 1.2, "docker": 2.0}
LIMITS = Limits(timeout_seconds=120, memory_mb=2048)


def write_suite(root: Path, tests: int, seconds: float) -> None:
    body = "\n".join(
        f"def test_{n}():\n    time.sleep({seconds})\n    assert sum(range(1000)) == 499500\n"
        for n in range(tests)
    )
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_suite.py").write_text(f"import time\n\n\n{body}")


BARE_ENV = {**BASE_ENV, **TEST_ENV, "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}


def bare(workspace: Path, outputs: Path) -> float:
    """pytest as fixbot runs it, without its plugin and without a sandbox: the reference."""
    argv = [sys.executable, *command_argv("python -m pytest")[1:]]
    done = proc.run(argv, cwd=workspace, env=BARE_ENV, timeout=LIMITS.timeout_seconds)
    if done.returncode != 0 or done.timed_out:
        raise SystemExit(f"bare: the suite failed ({done.returncode}):\n{done.tail(1500)}")
    return done.seconds


class Unsandboxed:
    """The harness's Launcher with no sandbox: the plugin and the channel's own cost."""

    transport = "fd"
    command_timeout = LIMITS.timeout_seconds

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace

    def harness_path(self, staged: Staged) -> str:
        return str(staged.folder)

    def launch(
        self, argv: Sequence[str], *, env: Mapping[str, str], staged: Staged, fds: Sequence[int]
    ) -> Completed:
        argv = [sys.executable, *argv[1:]]
        return proc.run(
            argv, cwd=self.workspace, env={**BARE_ENV, **env}, timeout=LIMITS.timeout_seconds,
            pass_fds=fds,
        )  # fmt: skip


def harnessed(sandbox: Sandbox | None) -> Callable[[Path, Path], float]:
    def run(workspace: Path, outputs: Path) -> float:
        spec = RunSpec(workspace, outputs, readonly=["tests"], limits=LIMITS, env=TEST_ENV)
        launcher = Unsandboxed(workspace) if sandbox is None else SandboxLauncher(sandbox, spec)
        tested = run_pytest(launcher, command_argv("python -m pytest"))
        if tested.status != "passed":
            raise SystemExit(f"the suite did not pass ({tested.status}): {tested.problems}")
        return sum(done.seconds for done in tested.runs)

    return run


def backends() -> dict[str, Callable[[Path, Path], float]]:
    found: dict[str, Callable[[Path, Path], float]] = {"bare": bare, "harness": harnessed(None)}
    for name, make in (("bwrap", BwrapSandbox), ("docker", DockerSandbox)):
        try:
            found[name] = harnessed(make())
        except SandboxUnavailable as exc:
            print(f"{name}: skipped ({exc})", file=sys.stderr)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tests", type=int, default=10)
    parser.add_argument("--test-seconds", type=float, default=0.07)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="fixbot-bench-"))
    try:
        write_suite(root / "workspace", args.tests, args.test_seconds)
        (root / "outputs").mkdir()
        runners = backends()
        times: dict[str, list[float]] = {name: [] for name in runners}
        for run in runners.values():  # warm caches once, untimed
            run(root / "workspace", root / "outputs")
        for _ in range(args.rounds):
            for name, run in runners.items():
                times[name].append(run(root / "workspace", root / "outputs"))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report(times, args.rounds)
    base = statistics.median(times["bare"])
    missed = [
        name
        for name, target in TARGETS.items()
        if name in times and statistics.median(times[name]) / base > target
    ]
    return 1 if missed else 0


def report(times: dict[str, list[float]], rounds: int) -> None:
    base = statistics.median(times["bare"])
    print(f"per check, median of {rounds} rounds (min..max), ratio to bare:")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        target = f"target <= {TARGETS[name]}x" if name in TARGETS else ""
        verdict = ("ok" if median / base <= TARGETS[name] else "MISSED") if target else ""
        print(
            f"  {name:7} {median:6.3f} s ({min(seconds):.3f}..{max(seconds):.3f})"
            f"  +{median - base:6.3f} s  {median / base:5.2f}x  {target} {verdict}".rstrip()
        )


if __name__ == "__main__":
    raise SystemExit(main())
