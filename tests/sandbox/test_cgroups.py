"""Caps for the whole sandbox. Finding the hierarchy runs anywhere (cgroupfs files stood in by
plain ones); the rest needs root and uses what this host has (cgroup v1 here, v2 on GitHub's
runners and in CI after `evacuate_root`), and the v2 mechanics also run on a v2 hierarchy
without memory or pids (hugetlb stands in). Each protection is shown beside a control without
it: the bubblewrap backend with NoCgroups, a shared uid, or both."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixbot.proc import Completed
from fixbot.sandbox import BwrapSandbox, Limits, RunSpec, hit_process_cap
from fixbot.sandbox.cgroup_detect import detect, inside, parse_mounts, parse_own
from fixbot.sandbox.cgroups import (
    ENTER,
    SUPERVISOR,
    Cgroup,
    Hierarchy,
    NoCgroups,
    V1Hierarchy,
    V2Hierarchy,
)
from fixbot.sandbox.host import pid_namespace
from fixbot.sandbox.protocol import OOM_NOTE
from tests.sandbox.confined import AS_NOBODY, ROOT, as_nobody_ran, attack, case_folder
from tests.sandbox.test_containment import bomb_beside_neighbour

MiB = 1 << 20
HYBRID_MOUNTINFO = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
38 31 0:35 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
HYBRID_CGROUP = "8:pids:/\n4:memory:/job/42\n3:cpu,cpuacct:/\n0::/\n"
UBUNTU_MOUNTINFO = (
    "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n"
)


def test_mounts_and_membership_are_read_as_the_kernel_writes_them() -> None:
    mounts = parse_mounts(HYBRID_MOUNTINFO)
    assert [m.fstype for m in mounts] == ["cgroup", "cgroup", "cgroup", "cgroup2"]
    assert mounts[1].options == {"rw", "cpu", "cpuacct"}
    assert parse_own(HYBRID_CGROUP) == {
        "pids": "/",
        "memory": "/job/42",
        "cpu": "/",
        "cpuacct": "/",
        "": "/",
    }
    (unified,) = parse_mounts(UBUNTU_MOUNTINFO)
    assert unified.fstype == "cgroup2" and "nsdelegate" in unified.options
    (rooted,) = parse_mounts(
        "7 6 0:3 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory"
    )
    assert inside(rooted, "/docker/abc/x") == Path("/sys/fs/cgroup/memory/x")
    assert inside(rooted, "/other") is None


def _fake_v2(root: Path, own: str, controllers: str = "memory pids", procs: str = "") -> Path:
    """Plain files standing in for a v2 hierarchy with fixbot in `own`."""
    for folder in (root, root / own):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cgroup.controllers").write_text(controllers)
        (folder / "cgroup.subtree_control").write_text("")
        (folder / "cgroup.procs").write_text("")
    (root / own / "cgroup.procs").write_text(procs)
    return root / own


def test_a_delegated_v2_cgroup_fixbot_is_alone_in_becomes_the_parent(tmp_path: Path) -> None:
    own = _fake_v2(tmp_path, "user.slice/fixbot.scope", procs=f"{os.getpid()}\n")
    mountinfo = f"1 0 0:1 / {tmp_path} rw - cgroup2 cgroup2 rw\n"
    found = detect(mountinfo=mountinfo, proc_cgroup="0::/user.slice/fixbot.scope\n")
    assert isinstance(found, V2Hierarchy) and found.parent == own
    assert (own / SUPERVISOR / "cgroup.procs").read_text() == str(os.getpid())  # moved itself
    assert found.summary() == "memory and processes capped per sandbox (cgroup v2)"


def test_a_v2_cgroup_shared_with_others_is_left_alone(tmp_path: Path) -> None:
    own = _fake_v2(tmp_path, "session.scope", procs=f"{os.getpid()}\n1\n")
    mountinfo = f"1 0 0:1 / {tmp_path} rw - cgroup2 cgroup2 rw\n"
    found = detect(mountinfo=mountinfo, proc_cgroup="0::/session.scope\n", root_fallback=False)
    assert isinstance(found, NoCgroups) and not found.capped
    assert "holds 1 other processes" in found.reason
    assert not (own / SUPERVISOR).exists()
    assert "per process (no writable cgroup)" in found.summary()


def test_v1_is_used_when_writable_and_the_reasons_are_kept_when_nothing_is(tmp_path: Path) -> None:
    for name in ("memory/job", "pids"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "cgroup.procs").write_text("")
    mountinfo = (
        f"1 0 0:1 / {tmp_path}/memory rw - cgroup cgroup rw,memory\n"
        f"2 0 0:2 / {tmp_path}/pids rw - cgroup cgroup rw,pids\n"
    )
    found = detect(mountinfo=mountinfo, proc_cgroup="2:pids:/\n1:memory:/job\n")
    assert isinstance(found, V1Hierarchy)
    assert (found.memory, found.pids) == (tmp_path / "memory/job", tmp_path / "pids")
    none = detect(mountinfo="", proc_cgroup="0::/\n")
    assert isinstance(none, NoCgroups) and "v1: no memory hierarchy" in none.reason


# -- the real thing, as root --------------------------------------------------------------


@pytest.fixture(scope="module")
def host() -> Hierarchy:
    if os.geteuid() != 0:
        pytest.skip("needs root (or a delegated cgroup) to make cgroups")
    found = detect()
    if not found.capped:
        if os.environ.get("CI"):
            pytest.fail(f"CI as root must have a usable cgroup: {found.reason}")
        pytest.skip(f"no usable cgroup here: {found.reason}")
    return found


def test_the_launcher_enters_before_anything_runs_and_all_goes_after(host: Hierarchy) -> None:
    with host.sandbox(256 * MiB, 64) as group:
        assert group is not None
        script = "cat /proc/self/cgroup; setsid sleep 300 & sleep 300 & echo started; wait"
        running = subprocess.Popen(
            [*group.launcher(), "sh", "-c", script], stdout=subprocess.PIPE, text=True
        )
        assert running.stdout is not None
        seen = []
        while not seen or seen[-1] not in ("started\n", ""):
            seen.append(running.stdout.readline())
        assert any(group.folders[0].name in line for line in seen), seen  # in from the start
        deadline = time.monotonic() + 10
        while len(group.pids()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(group.pids()) >= 3
    running.wait(timeout=10)
    running.stdout.close()
    assert not any(folder.exists() for folder in group.folders)  # killed, then removed


def test_a_failed_enter_runs_nothing(tmp_path: Path) -> None:
    gone = Cgroup((tmp_path / "gone",), v2=True)
    done = subprocess.run([*gone.launcher(), "echo", "ran"], capture_output=True, text=True)
    assert done.returncode == 125 and "ran" not in done.stdout


def test_a_dead_fixbots_cgroups_are_reaped(host: Hierarchy) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    leftover = host.create(64 * MiB, 16)
    assert leftover is not None
    stale = [
        folder.rename(folder.with_name(f"fixbot-{pid_namespace()}-{dead.pid}-1-1"))
        for folder in leftover.folders
    ]
    live = host.create(64 * MiB, 16)
    assert live is not None
    try:
        reaped = host.reap()
        assert not any(folder.exists() for folder in stale)
        assert set(stale) <= set(reaped)
        assert all(folder.exists() for folder in live.folders)  # this process's own stays
    finally:
        live.remove()


def test_reaping_takes_only_what_a_run_named_never_a_lookalike(host: Hierarchy) -> None:
    """A cgroup whose name starts like fixbot's but is no run's (another tool's, a test's own
    delegated folder, an older fixbot's PID-START-SERIAL) keeps its processes: reaping is for
    a dead run's NS-PID-START-SERIAL."""
    parent = host.parents()[0]
    dead = subprocess.Popen(["true"])
    dead.wait()
    lookalikes = [
        parent / f"fixbot-test-delegated-{os.getpid()}",
        parent / "fixbot-ci",
        parent / f"fixbot-{dead.pid}-1-1",
    ]
    for folder in lookalikes:
        folder.mkdir()
    try:
        host.reap()
        assert all(folder.is_dir() for folder in lookalikes)
    finally:
        for folder in lookalikes:
            folder.rmdir()


def test_three_children_hold_three_caps_without_a_cgroup_and_one_with() -> None:
    """The gap: per-process limits let three children under the cap hold three times it."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    limits = Limits(timeout_seconds=60, memory_mb=384, tmp_size_mb=32)
    with case_folder("memory_children", child_mb=160) as root:
        control, _ = attack(BwrapSandbox(cgroups=NoCgroups("off")), root, limits)
    assert control == {**control, "all_held": True, "codes": [0, 0, 0]}
    capped_here = BwrapSandbox()
    if not capped_here.cgroups.capped:
        pytest.skip(f"no usable cgroup here: {capped_here.cgroups.reason}")
    with case_folder("memory_children", child_mb=160) as root:
        capped, output = attack(capped_here, root, limits)
    assert not capped.get("all_held"), capped
    assert output.endswith(OOM_NOTE)
    # What the evidence's sandbox line says of each.
    kind = capped_here.cgroups.kind
    assert f"memory and processes capped per sandbox (cgroup {kind})" in capped_here.describe()
    uncapped = BwrapSandbox(cgroups=NoCgroups("off")).describe()
    assert (
        "memory and processes capped per process (no writable cgroup): see docs/security.md"
        in uncapped
    )


def test_a_full_tmpfs_ends_in_no_space_not_in_the_oom_killer(host: Hierarchy) -> None:
    """tmpfs pages count against the cap: with /tmp and /dev/shm full (48 MiB each), the
    processes still get the rest of memory_mb (256 MiB: 100 MiB held)."""
    script = (
        "for d in /tmp /dev/shm; do dd if=/dev/zero of=$d/fill bs=1M count=64 2>&1 | "
        "grep -o 'No space left on device'; done; "
        'python3 -c \'import time; b = bytearray(100 << 20); b[::4096] = b"x" * len(b[::4096]);'
        ' print("held")\''
    )
    limits = Limits(timeout_seconds=60, memory_mb=256, tmp_size_mb=48)
    with case_folder("threads", count=1) as root:
        spec = RunSpec(root / "ws", root / "out", limits=limits)
        done = BwrapSandbox(cgroups=host).run(["sh", "-c", script], spec)
    assert done.output.count("No space left on device") == 2, done.output
    assert "held" in done.output and not done.output.endswith(OOM_NOTE), done.output


# -- the process cap: one sandbox's fork bomb beside another's threads --------------------


@pytest.mark.parametrize(
    ("cgroups", "uids", "spared"),
    [
        (False, False, False),  # the gap: RLIMIT_NPROC per uid, every sandbox nobody
        (True, False, True),  # pids.max per sandbox, the uid shared
        (False, True, True),  # the fallback as root: a uid of its own per sandbox
    ],
    ids=["neither (control)", "a cgroup per run", "a uid per run"],
)
def test_a_fork_bomb_and_its_neighbour_as_root(
    cgroups: bool, uids: bool, spared: bool, tmp_path: Path
) -> None:
    if os.geteuid() != 0 or shutil.which("bwrap") is None:
        pytest.skip("needs root and bubblewrap")
    sandbox = BwrapSandbox(cgroups=None if cgroups else NoCgroups("off"), uid_per_sandbox=uids)
    if cgroups and not sandbox.cgroups.capped:
        pytest.skip(f"no usable cgroup here: {sandbox.cgroups.reason}")
    _, neighbour = bomb_beside_neighbour(sandbox, sandbox, tmp_path)
    assert (neighbour.probe.get("threads") == 50) is spared, neighbour.probe


FORK_FOR_EVER = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""
BURST = """
import threading, time
started = []
for _ in range(100):
    try:
        thread = threading.Thread(target=time.sleep, args=(0.5,))
        thread.start()
        started.append(thread)
    except RuntimeError:
        break
for thread in started:
    thread.join()
time.sleep(2)
print("survived", len(started))
"""


def _in_sandbox(sandbox: BwrapSandbox, code: str, limits: Limits, tmp_path: Path) -> Completed:
    for name in ("ws", "out"):
        (tmp_path / name).mkdir(exist_ok=True)
    spec = RunSpec(tmp_path / "ws", tmp_path / "out", limits=limits)
    return sandbox.run([sys.executable, "-c", code], spec)


def test_a_process_cap_held_by_a_fork_bomb_ends_the_run_at_once(tmp_path: Path) -> None:
    """pids.max holds a fork bomb but never stops it: the run ends when the cap has refused
    new processes for a second on end, not at its timeout (the control, without a cgroup,
    runs to a short one)."""
    if os.geteuid() != 0 or shutil.which("bwrap") is None:
        pytest.skip("needs root and bubblewrap")
    sandbox = BwrapSandbox()
    if not sandbox.cgroups.capped:
        pytest.skip(f"no usable cgroup here: {sandbox.cgroups.reason}")
    done = _in_sandbox(sandbox, FORK_FOR_EVER, Limits(timeout_seconds=120, pids=64), tmp_path)
    assert hit_process_cap(done.output) and not done.timed_out, done.output[-500:]
    assert done.seconds < 30, done.seconds
    assert done.output.rstrip().endswith("(64 processes): the run was ended]")
    control = BwrapSandbox(cgroups=NoCgroups("off"))
    spun = _in_sandbox(control, FORK_FOR_EVER, Limits(timeout_seconds=5, pids=64), tmp_path)
    assert spun.timed_out and not hit_process_cap(spun.output)


def test_a_burst_at_the_process_cap_that_subsides_does_not_end_the_run(tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("bwrap") is None:
        pytest.skip("needs root and bubblewrap")
    sandbox = BwrapSandbox()
    if not sandbox.cgroups.capped:
        pytest.skip(f"no usable cgroup here: {sandbox.cgroups.reason}")
    done = _in_sandbox(sandbox, BURST, Limits(timeout_seconds=60, pids=32), tmp_path)
    assert done.returncode == 0 and "survived" in done.output, done.output[-500:]
    assert not hit_process_cap(done.output)
    started = int(done.output.split("survived")[1].split()[0])
    assert started < 100  # the cap refused the burst's last threads


PAIR_AS_USER = """
import json, sys, threading, time
from pathlib import Path
from fixbot.sandbox import BwrapSandbox, Limits, RunSpec
limits = Limits(timeout_seconds=40, pids=96)
sandbox, (bomb, neighbour) = BwrapSandbox(), [Path(p) for p in sys.argv[1:3]]
argv = ["python3", "-c", "import hostile; hostile.attack()"]
spec = RunSpec(bomb / "ws", bomb / "out", limits=limits)
runner = threading.Thread(target=sandbox.run, args=(argv, spec))
runner.start()
deadline = time.monotonic() + 30
while not (bomb / "ws" / "full").exists() and time.monotonic() < deadline:
    time.sleep(0.05)
done = sandbox.run(argv, RunSpec(neighbour / "ws", neighbour / "out", limits=limits))
runner.join()
probes = [json.loads((p / "ws" / "probe.json").read_text()) for p in (bomb, neighbour)]
print(json.dumps({"bomb": probes[0], "neighbour": probes[1], "describe": sandbox.describe()}))
"""


def test_as_an_ordinary_user_each_sandbox_counts_its_own_processes() -> None:
    """No cgroup, the same uid for both, RLIMIT_NPROC per process: the kernel (5.14+) counts
    it per user namespace, and each sandbox has its own."""
    if os.geteuid() != 0 or shutil.which("bwrap") is None:
        pytest.skip("needs root (to become an ordinary user) and bubblewrap")
    with (
        case_folder("fork_bomb_hold", hold=8) as bomb,
        case_folder("threads", count=50) as neighbour,
    ):
        done = subprocess.run(
            [*AS_NOBODY, sys.executable, "-c", PAIR_AS_USER, str(bomb), str(neighbour)],
            capture_output=True,
            text=True,
            timeout=180,
            env={"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)},
            cwd=bomb,
        )
    as_nobody_ran(done)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert "per process" in found["describe"]  # no cgroup: the documented fallback
    assert found["bomb"]["refused"] and found["bomb"]["made"] < 96, found
    assert found["neighbour"].get("threads") == 50, found


# -- v2 mechanics on this host's v2 hierarchy, whatever controllers it has ------------------


@pytest.fixture
def v2_scratch() -> Iterator[Path]:
    """A fresh cgroup of this test's own in the v2 hierarchy (removed afterwards), with
    hugetlb available in it: enabled for the test in the parent if it was not, disabled after."""
    mount = next(
        (
            m.path
            for m in parse_mounts(Path("/proc/self/mountinfo").read_text())
            if m.fstype == "cgroup2"
        ),
        None,
    )
    own = parse_own(Path("/proc/self/cgroup").read_text()).get("")
    if mount is None or own is None or os.geteuid() != 0:
        pytest.skip("needs root and a cgroup2 hierarchy")
    base = mount / own.lstrip("/")
    path = base / f"cgroups-test-{os.getpid()}"  # not "fixbot-...": reaped as a dead run's
    try:
        path.mkdir()
    except OSError as exc:
        pytest.skip(f"cannot make a v2 cgroup here: {exc}")
    control = base / "cgroup.subtree_control"
    enabled_here = False
    available = "hugetlb" in (base / "cgroup.controllers").read_text().split()
    if available and "hugetlb" not in control.read_text().split():
        try:
            control.write_text("+hugetlb")
            enabled_here = True
        except OSError:
            pass
    try:
        yield path
    finally:
        for group in sorted(
            (p for p in path.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)
        ):
            Cgroup((group,), v2=True).kill()
            group.rmdir()
        Cgroup((path,), v2=True).kill()
        path.rmdir()
        if enabled_here:
            control.write_text("-hugetlb")


def test_v2_create_enter_kill_remove(v2_scratch: Path) -> None:
    group = Cgroup((v2_scratch / "fixbot-run",), v2=True)
    group.folders[0].mkdir()
    running = subprocess.Popen([*group.launcher(), "sh", "-c", "sleep 300 & sleep 300"])
    deadline = time.monotonic() + 5
    while len(group.pids()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running.pid in group.pids()
    group.kill()  # cgroup.kill where the kernel has it
    assert not group.pids()
    running.wait(timeout=5)
    group.remove()
    assert not group.folders[0].exists()


TAKE_OVER = """
import json
from pathlib import Path
from fixbot.sandbox.cgroup_detect import detect
found = detect(required=frozenset({"hugetlb"}), root_fallback=False)
mine = Path("/proc/self/cgroup").read_text().strip().splitlines()[-1]
print(json.dumps({"kind": found.kind, "parent": str(getattr(found, "parent", "")),
                  "reason": found.reason, "mine": mine}))
"""


def _detect_in(group: Path, *, user: int | None = None, others: bool = False) -> dict[str, str]:
    """detect() run as the only process (or not) of `group`, optionally as `user`."""
    enter = ["sh", "-c", ENTER, "enter", str(group / "cgroup.procs"), "--"]
    drop = (
        [] if user is None else ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"]
    )
    companion = subprocess.Popen([*enter, "sleep", "30"]) if others else None
    try:
        while companion is not None and companion.pid not in Cgroup((group,), v2=True).pids():
            time.sleep(0.02)
        done = subprocess.run(
            [*enter, *drop, sys.executable, "-c", TAKE_OVER],
            capture_output=True,
            text=True,
            env={"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)},
            timeout=60,
        )
    finally:
        if companion is not None:
            companion.kill()
            companion.wait()
    assert done.returncode == 0, done.stderr
    found: dict[str, str] = json.loads(done.stdout)
    return found


def _hugetlb(path: Path) -> None:
    if "hugetlb" not in (path / "cgroup.controllers").read_text().split():
        pytest.skip("no hugetlb controller in the v2 hierarchy to stand in for memory and pids")


def test_v2_fixbot_alone_in_its_cgroup_takes_it_over(v2_scratch: Path) -> None:
    _hugetlb(v2_scratch)
    found = _detect_in(v2_scratch)
    assert found["kind"] == "v2" and found["parent"] == str(v2_scratch), found
    assert found["mine"].endswith(f"{v2_scratch.name}/{SUPERVISOR}")
    assert "hugetlb" in (v2_scratch / "cgroup.subtree_control").read_text()


def test_v2_fixbot_sharing_its_cgroup_leaves_it_alone(v2_scratch: Path) -> None:
    _hugetlb(v2_scratch)
    found = _detect_in(v2_scratch, user=65534, others=True)
    assert found["kind"] == "none" and "not delegated" in found["reason"], found
    found = _detect_in(v2_scratch, others=True)  # as root: v1 where the host has it, else none
    assert found["kind"] != "v2" and found["mine"].endswith(v2_scratch.name), found
    assert not (v2_scratch / SUPERVISOR).exists()


def test_v2_delegated_to_an_ordinary_user(v2_scratch: Path) -> None:
    """As systemd's Delegate=yes does: the user owns the cgroup and its procs and subtree files."""
    _hugetlb(v2_scratch)
    for name in ("", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"):
        os.chown(v2_scratch / name, 65534, 65534)
    found = _detect_in(v2_scratch, user=65534)
    assert found["kind"] == "v2" and found["parent"] == str(v2_scratch), found


DELEGATED_V1 = """
import json, sys
from pathlib import Path
from fixbot.sandbox import BwrapSandbox, Limits, RunSpec
sandbox, root = BwrapSandbox(), Path(sys.argv[1])
limits = Limits(timeout_seconds=60, memory_mb=384, tmp_size_mb=32)
done = sandbox.run(["python3", "-c", "import hostile; hostile.attack()"],
                   RunSpec(root / "ws", root / "out", limits=limits))
probe = json.loads((root / "ws" / "probe.json").read_text())
print(json.dumps({"kind": sandbox.cgroups.kind, "probe": probe, "output": done.output}))
"""


def test_v1_delegated_to_an_ordinary_user_caps_its_sandboxes(host: Hierarchy) -> None:
    """fixbot as an ordinary user, given (chowned) v1 cgroups: it finds them and caps each
    user-namespace sandbox as a whole."""
    if not isinstance(host, V1Hierarchy):
        pytest.skip("this host's cgroups are not v1")
    # Not "fixbot-...": another test worker's sandbox would reap it as a dead fixbot's cgroup.
    name = f"delegated-test-{os.getpid()}"
    folders = [host.memory / name, host.pids / name]
    for folder in folders:
        folder.mkdir()
        for item in (folder, folder / "tasks", folder / "cgroup.procs"):
            os.chown(item, 65534, 65534)
    enter = ["sh", "-c", ENTER, "enter", *(str(f / "cgroup.procs") for f in folders), "--"]
    try:
        with case_folder("memory_children", child_mb=160) as root:
            done = subprocess.run(
                [*enter, *AS_NOBODY, sys.executable, "-c", DELEGATED_V1, str(root)],
                capture_output=True,
                text=True,
                env={"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT)},
                timeout=180,
            )
    finally:
        for folder in folders:
            for child in folder.iterdir():
                if child.is_dir():
                    Cgroup((child,), v2=False).kill()
                    child.rmdir()
            folder.rmdir()
    as_nobody_ran(done)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["kind"] == "v1", found
    assert not found["probe"].get("all_held") and found["output"].endswith(OOM_NOTE), found
