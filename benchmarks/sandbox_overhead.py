"""What a sandbox costs per check: the same pytest command bare, in bubblewrap, in Docker.

A ~1 s pytest suite runs exactly as fixbot runs it (checks.command_argv: JUnit report, no cache,
plugins not auto-loaded, the allow-listed environment), round after round, the backends
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
from collections.abc import Callable
from pathlib import Path

from fixbot import proc
from fixbot.checks import TEST_ENV, command_argv
from fixbot.errors import SandboxUnavailable
from fixbot.proc import Completed
from fixbot.sandbox import BASE_ENV, OUTPUTS, BwrapSandbox, DockerSandbox, Limits, Sandbox

TARGETS = {"bwrap": 1.2, "docker": 2.0}
LIMITS = Limits(timeout_seconds=120, memory_mb=2048)


def write_suite(root: Path, tests: int, seconds: float) -> None:
    body = "\n".join(
        f"def test_{n}():\n    time.sleep({seconds})\n    assert sum(range(1000)) == 499500\n"
        for n in range(tests)
    )
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_suite.py").write_text(f"import time\n\n\n{body}")


def bare(workspace: Path, outputs: Path) -> Completed:
    argv = [a.replace(OUTPUTS, str(outputs)) for a in command_argv("python -m pytest")]
    argv[0] = sys.executable
    env = {**BASE_ENV, **TEST_ENV, "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
    return proc.run(argv, cwd=workspace, env=env, timeout=LIMITS.timeout_seconds)


def sandboxed(sandbox: Sandbox) -> Callable[[Path, Path], Completed]:
    def run(workspace: Path, outputs: Path) -> Completed:
        return sandbox.run(
            command_argv("python -m pytest"),
            workspace=workspace,
            outputs=outputs,
            readonly=["tests"],
            limits=LIMITS,
            env=TEST_ENV,
        )

    return run


def backends() -> dict[str, Callable[[Path, Path], Completed]]:
    found: dict[str, Callable[[Path, Path], Completed]] = {"bare": bare}
    for name, make in (("bwrap", BwrapSandbox), ("docker", DockerSandbox)):
        try:
            found[name] = sandboxed(make())
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
        for name, run in runners.items():  # warm caches once, untimed
            check(name, run(root / "workspace", root / "outputs"))
        for _ in range(args.rounds):
            for name, run in runners.items():
                times[name].append(check(name, run(root / "workspace", root / "outputs")))
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


def check(name: str, result: Completed) -> float:
    if result.returncode != 0 or result.timed_out:
        raise SystemExit(f"{name}: the suite failed ({result.returncode}):\n{result.tail(1500)}")
    return result.seconds


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
