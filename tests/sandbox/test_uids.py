"""A uid of its own per concurrent sandbox as root: leases, what they skip, the identity the
sandbox sees, and the trees every sandbox shares (the snapshot under the overlays, the prepared
environment), read and changed by different uids at once without touching the original."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fixbot.errors import SandboxFailed
from fixbot.sandbox import BwrapSandbox, RunSpec
from fixbot.sandbox.host import SANDBOX_GID
from fixbot.sandbox.uids import UidPool, subid_ranges, uids_with_processes

BASE = 0x70020000  # a range of the tests' own, never the one fixbot uses


def test_concurrent_leases_get_distinct_uids_and_a_returned_one_comes_back(tmp_path: Path) -> None:
    pool = UidPool(base=BASE, count=8, lock_dir=tmp_path / "locks", taken=lambda uid: False)
    held: list[int] = []
    release = threading.Event()
    ready = threading.Barrier(5)

    def hold() -> None:
        with pool.lease() as lease:
            held.append(lease.uid)
            ready.wait()
            release.wait()

    threads = [threading.Thread(target=hold, daemon=True) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        ready.wait(timeout=30)
        assert len(set(held)) == 4 and all(BASE < uid <= BASE + 8 for uid in held), held
    finally:
        release.set()
        for thread in threads:
            thread.join()
    with pool.lease() as again:
        assert again.uid == BASE + 1 and again.gid == SANDBOX_GID


HOLDER = """
import sys, time
from pathlib import Path
from fixbot.sandbox.uids import UidPool
pool = UidPool(base=int(sys.argv[1]), count=2, lock_dir=Path(sys.argv[2]), taken=lambda uid: False)
with pool.lease() as lease:
    print(lease.uid, flush=True)
    time.sleep(300)
"""


def test_a_killed_holder_gives_its_uid_back(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(BASE), str(tmp_path / "locks")],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert holder.stdout is not None
    assert int(holder.stdout.readline()) == BASE + 1
    pool = UidPool(base=BASE, count=2, lock_dir=tmp_path / "locks", taken=lambda uid: False)
    with pool.lease() as lease:
        assert lease.uid == BASE + 2  # the first is held by another process
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    holder.stdout.close()
    with pool.lease() as lease:
        assert lease.uid == BASE + 1  # the kernel dropped the lock with its holder
    single = UidPool(base=BASE, count=1, lock_dir=tmp_path / "locks", taken=lambda uid: False)
    with single.lease(), pytest.raises(SandboxFailed, match="in use"), single.lease():
        pass


def test_uids_with_an_entry_a_subuid_range_or_a_process_are_skipped(tmp_path: Path) -> None:
    pool = UidPool(base=BASE, count=4, lock_dir=tmp_path / "l", taken=lambda uid: uid == BASE + 1)
    assert pool.uids == [BASE + 2, BASE + 3, BASE + 4]
    subuid = tmp_path / "subuid"
    subuid.write_text("runner:100000:65536\nbad line\n")
    assert subid_ranges(subuid) == [range(100000, 165536)]
    if os.geteuid() != 0:
        pytest.skip("making a process of another uid needs root")
    drop = ["setpriv", f"--reuid={BASE + 2}", f"--regid={BASE + 2}", "--clear-groups"]
    leftover = subprocess.Popen([*drop, "sleep", "30"])
    try:
        deadline = time.monotonic() + 10
        while not uids_with_processes([BASE + 2]) and time.monotonic() < deadline:
            time.sleep(0.02)
        with pool.lease() as lease:
            assert lease.uid == BASE + 3  # a crashed run's process still holds BASE + 2
    finally:
        leftover.kill()
        leftover.wait()


def test_the_lock_folder_must_be_a_real_folder_of_fixbots(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "locks").symlink_to(tmp_path / "elsewhere")
    pool = UidPool(base=BASE, count=2, lock_dir=tmp_path / "locks", taken=lambda uid: False)
    with pytest.raises(SandboxFailed, match="not a folder"), pool.lease():
        pass


IDENTITY = (
    "import getpass, json, os, pwd, grp; "
    "print(json.dumps([os.getuid(), getpass.getuser(), pwd.getpwuid(os.getuid()).pw_dir, "
    "grp.getgrgid(os.getgid()).gr_name]))"
)

needs_root_bwrap = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("bwrap") is None, reason="needs root and bubblewrap"
)


@pytest.fixture(scope="module")
def sandbox() -> BwrapSandbox:
    return BwrapSandbox()


@needs_root_bwrap
def test_the_sandbox_knows_its_uid_by_name(sandbox: BwrapSandbox, tmp_path: Path) -> None:
    for name in ("ws", "out"):
        (tmp_path / name).mkdir()
    done = sandbox.run(["python3", "-c", IDENTITY], RunSpec(tmp_path / "ws", tmp_path / "out"))
    uid, user, home, group = json.loads(done.output.strip().splitlines()[-1])
    assert uid > SANDBOX_GID and (user, home, group) == ("sandbox", "/tmp", "sandbox")


WRITE_SHARED = (
    "import os; p = '/workspace/shared.txt'; old = open(p).read(); "
    "open(p, 'a').write(str(os.getuid())); os.remove('/workspace/gone.txt'); "
    "open('/workspace/new.txt', 'w').write('x'); print(old.strip(), os.getuid())"
)


@needs_root_bwrap
def test_two_uids_change_one_shared_snapshot_each_through_its_own_layer(
    sandbox: BwrapSandbox, tmp_path: Path
) -> None:
    if not sandbox.layered:
        pytest.skip("overlay workspaces are not available here")
    lower = tmp_path / "lower"
    (lower / "pkg").mkdir(parents=True)
    (lower / "shared.txt").write_text("original\n")
    (lower / "gone.txt").write_text("")
    lower.chmod(0o700)  # git's checkout may leave a folder only its owner reads
    seen: dict[str, str] = {}

    def attempt(name: str) -> None:
        (tmp_path / name / "upper").mkdir(parents=True)
        (tmp_path / name / "out").mkdir()
        spec = RunSpec(tmp_path / name / "upper", tmp_path / name / "out", lower=lower)
        seen[name] = sandbox.run(["python3", "-c", WRITE_SHARED], spec).output

    with sandbox.uids.lease() if sandbox.uids else open(os.devnull):  # one uid held elsewhere
        runs = [threading.Thread(target=attempt, args=(name,)) for name in ("a", "b")]
        for run in runs:
            run.start()
        for run in runs:
            run.join()
    uids = set()
    for name in ("a", "b"):
        old, uid = seen[name].split()
        assert old == "original", seen
        uids.add(uid)
        assert (tmp_path / name / "upper" / "new.txt").read_text() == "x"
    assert len(uids) == 2, seen
    assert (lower / "shared.txt").read_text() == "original\n" and (lower / "gone.txt").exists()


@needs_root_bwrap
def test_the_prepared_environment_is_read_by_later_runs_of_other_uids(
    sandbox: BwrapSandbox, tmp_path: Path
) -> None:
    env_dir, workspace = tmp_path / "env", tmp_path / "repo"
    env_dir.mkdir()
    workspace.mkdir()
    made = sandbox.prepare(
        ["sh", "-c", "umask 077; mkdir /fixbot-env/lib && echo ready > /fixbot-env/lib/mark"],
        workspace=workspace,
        env_dir=env_dir,
    )
    assert made.returncode == 0, made.output
    for name in ("ws", "out"):
        (tmp_path / name).mkdir()
    spec = RunSpec(tmp_path / "ws", tmp_path / "out", prepared=env_dir)
    with sandbox.uids.lease() if sandbox.uids else open(os.devnull):  # another uid this time
        done = sandbox.run(["sh", "-c", "cat /fixbot-env/lib/mark; id -u"], spec)
    assert done.output.splitlines()[0] == "ready", done.output
