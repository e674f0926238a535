"""Red-team attacks on Hierarchy.reap() (fixbot/sandbox/cgroups.py), with real cgroups and
real processes. Needs root and a usable cgroup hierarchy (v1 on this Debian host: memory and
pids, v2 elsewhere); every cgroup lives under a private `redteam-PID` parent, never in the
hierarchy fixbot (and the CI run beside it) really uses, so no other reap can see them.

Each test passes only when the promise holds ("reaps only the cgroups a run named whose owner is
no longer alive, never a live run's"); each failed on the reap before this file (a helper given the
source and the brief "break it", 2026-12-04).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixbot.sandbox.cgroup_detect import detect
from fixbot.sandbox.cgroups import Cgroup, V1Hierarchy, V2Hierarchy

ROOT = Path(__file__).resolve().parents[2]

# A fixbot run: make a cgroup the way every run does, start a sandboxed `sleep` in it, say
# which, then stay alive (the run goes on) until stdin closes. argv: kind, parent folders.
RUN = r"""
import subprocess, sys, time
from pathlib import Path
from fixbot.sandbox.cgroups import V1Hierarchy, V2Hierarchy
kind, *parents = sys.argv[1:]
parents = [Path(p) for p in parents]
hierarchy = V1Hierarchy(*parents) if kind == "v1" else V2Hierarchy(parents[0], "test")
group = hierarchy.create(64 << 20, 16)
quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL}
sandboxed = subprocess.Popen([*group.launcher(), "sleep", "60"], **quiet)
while not group.pids():
    time.sleep(0.01)
print(" ".join(str(f) for f in group.folders), flush=True)
sys.stdin.read()
"""
# Another fixbot starting up: it reaps what it takes for dead runs' cgroups.
REAP = r"""
import sys
from pathlib import Path
from fixbot.sandbox.cgroups import V1Hierarchy, V2Hierarchy
kind, *parents = sys.argv[1:]
parents = [Path(p) for p in parents]
hierarchy = V1Hierarchy(*parents) if kind == "v1" else V2Hierarchy(parents[0], "test")
print([str(p) for p in hierarchy.reap()], flush=True)
"""
IN_PID_NAMESPACE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
# Inside the namespace fixbot is not its init (a container's pid 1 is its entrypoint): this
# stand-in init runs the script as pid 2 (in the process group it shares with unshare)
# and says how it ended.
AS_PID_2 = r"""
import subprocess, sys
done = subprocess.run(sys.argv[1:])
print("exit", done.returncode, flush=True)
"""


@pytest.fixture
def private() -> Iterator[tuple[str, list[Path]]]:
    """(kind, parents): a private parent cgroup beside the real ones, removed afterwards."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare")
    real = detect(root_fallback=False)
    if not isinstance(real, V1Hierarchy | V2Hierarchy):
        pytest.skip(f"no usable cgroup here: {real.reason}")
    parents = [p / f"redteam-{os.getpid()}" for p in real.parents()]
    for folder in parents:
        folder.mkdir()
    if real.kind == "v2":
        (parents[0] / "cgroup.subtree_control").write_text("+memory +pids")
    try:
        yield real.kind, parents
    finally:
        for parent in parents:
            for child in sorted(parent.iterdir(), key=lambda p: -len(p.parts)):
                if child.is_dir():
                    Cgroup((child,), v2=real.kind == "v2").kill()
                    with contextlib.suppress(FileNotFoundError):
                        child.rmdir()
            parent.rmdir()


def _python(
    prefix: list[str], script: str, kind: str, parents: list[Path]
) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return [*prefix, sys.executable, "-c", script, kind, *map(str, parents)], env


def _start_run(
    kind: str, parents: list[Path], prefix: list[str]
) -> tuple[subprocess.Popen, Cgroup]:
    argv, env = _python(prefix, RUN, kind, parents)
    run = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert run.stdout is not None
    folders = [Path(f) for f in run.stdout.readline().split()]
    assert folders and run.poll() is None, "the run did not start"
    return run, Cgroup(tuple(folders), v2=kind == "v2")


def test_a_containerised_live_run_is_never_reaped_by_a_host_run(
    private: tuple[str, list[Path]],
) -> None:
    """Two fixbot runs sharing one cgroup parent (a container with the host's cgroup namespace,
    e.g. `docker run --privileged --cgroupns=host`, or any fixbot under `unshare --pid`, beside
    a run on the host): the containerised run names its cgroup with the pid it sees (1, or
    another small one), which the host's reaper resolves to a different process of its own pid
    namespace: "dead", so the live run's sandbox is SIGKILLed and its cgroup removed."""
    kind, parents = private
    run, group = _start_run(kind, parents, IN_PID_NAMESPACE)
    try:
        sandboxed = group.pids()
        assert sandboxed
        argv, env = _python([], REAP, kind, parents)
        reaper = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
        assert reaper.returncode == 0, reaper.stderr
        assert all(f.is_dir() for f in group.folders), (
            f"a live run's cgroup reaped: {reaper.stdout}"
        )
        assert group.pids() == sandboxed, "a live run's sandboxed process was killed"
    finally:
        run.communicate(input="", timeout=10)


def test_a_containerised_reaper_does_not_stall_on_a_live_host_runs_cgroup(
    private: tuple[str, list[Path]],
) -> None:
    """The other way round on cgroup v1: the host run's pid is invisible in the container, so
    its live cgroup looks dead; cgroup.procs read from the container lists none of its
    processes, nothing is killed, and rmdir answers EBUSY: the reaper waits _SETTLE_SECONDS
    (10 s) per folder (two in v1) for every live foreign run before its own run may start."""
    kind, parents = private
    if kind != "v1":
        pytest.skip("v2 is test_a_containerised_reaper_never_kills_itself")
    run, _group = _start_run(kind, parents, [])
    try:
        argv, env = _python(IN_PID_NAMESPACE, REAP, kind, parents)
        start = time.monotonic()
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(argv, env=env, capture_output=True, text=True, timeout=6)
        assert time.monotonic() - start < 5, "reap stalled on a live run's busy cgroup"
    finally:
        run.communicate(input="", timeout=10)


@pytest.fixture
def v2_plain() -> Iterator[Path]:
    """A private cgroup v2 parent (no controllers needed: reap only reads cgroup.procs)."""
    from fixbot.sandbox.cgroup_detect import inside, parse_mounts, parse_own

    mount = next(
        (
            m
            for m in parse_mounts(Path("/proc/self/mountinfo").read_text())
            if m.fstype == "cgroup2"
        ),
        None,
    )
    own = parse_own(Path("/proc/self/cgroup").read_text()).get("")
    if os.geteuid() != 0 or mount is None or own is None or shutil.which("unshare") is None:
        pytest.skip("needs root, unshare and a cgroup2 hierarchy")
    base = inside(mount, own)
    assert base is not None
    parent = base / f"redteam-v2-{os.getpid()}"
    try:
        parent.mkdir()
    except OSError as exc:
        pytest.skip(f"cannot make a v2 cgroup: {exc}")
    try:
        yield parent
    finally:
        for child in parent.iterdir():
            if child.is_dir():
                Cgroup((child,), v2=True).kill()
                with contextlib.suppress(FileNotFoundError):
                    child.rmdir()
        parent.rmdir()


def test_a_containerised_reaper_never_kills_itself(v2_plain: Path) -> None:
    """On cgroup v2, cgroup.procs read from another pid namespace lists a process it cannot
    see as `0`. A containerised fixbot reaping a live host run's cgroup (its owner invisible,
    so "dead") reads {0} and calls os.kill(0, SIGKILL): it SIGKILLs its own process group,
    i.e. itself (and whatever shares its group: the CI step's shell), at startup."""
    from fixbot.sandbox.host import owner_tag

    live = v2_plain / f"fixbot-{owner_tag(os.getpid())}-1"  # this (live) process's run
    live.mkdir()
    sandboxed = subprocess.Popen(["sleep", "60"])
    (live / "cgroup.procs").write_text(str(sandboxed.pid))
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        argv = [*IN_PID_NAMESPACE, sys.executable, "-c", AS_PID_2]
        argv += [sys.executable, "-c", REAP, "v2", str(v2_plain)]
        # its own session: the SIGKILL to "process group 0" must not reach pytest
        reaper = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=30, start_new_session=True
        )
        assert sandboxed.poll() is None
        assert "exit 0" in reaper.stdout, (
            f"the reaper died: {reaper.stdout.strip()!r} (unshare, outside the namespace but in "
            f"its process group: rc={reaper.returncode})"
        )
    finally:
        sandboxed.kill()
        sandboxed.wait()
