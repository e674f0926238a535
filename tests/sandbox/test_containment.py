"""The containment suite: hostile code, run the way fixbot runs a candidate, on every backend.

Each case puts a small repository in a workspace whose code under test (tests/containment/*.py,
imported by a test file) does one hostile thing, runs `suite.run_checks` over it with small
limits, and asserts that the hostile action failed: from what the code recorded it managed to
do (probe.json in the workspace) and from the host afterwards, never from the test's verdict.
After every case: the process the code leaves lingering (and anything else with the case's
marker in its argv or as its name) is gone, no container is left, and no file with the marker
in its name exists on the host outside the workspace.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fixbot.checks import suite
from fixbot.errors import SandboxFailed
from fixbot.proc import Completed
from fixbot.records import LOG_CAP, CheckResult
from fixbot.sandbox import (
    BwrapSandbox,
    Limits,
    RunSpec,
    Sandbox,
    attempt_scratch,
    hit_process_cap,
)
from fixbot.sandbox.containers import process_identity
from fixbot.sandbox.docker import LABEL, DockerSandbox
from fixbot.sandbox.protocol import OOM_NOTE
from fixbot.snapshot.workspace import Workspace
from tests.conftest import ENGINE_PROBLEM
from tests.fakes import DelegatingSandbox
from tests.sandbox.confined import AS_NOBODY, as_nobody_ran

CASES = Path(__file__).resolve().parent / "containment"
HOME = Path.home()
LIMITS = Limits(
    timeout_seconds=10,
    memory_mb=512,
    cpus=1.0,
    pids=128,
    file_size_mb=16,
    tmp_size_mb=32,
    output_bytes=64 * 1024,
    disk_mb=48,
)
READONLY = ["tests", "probe.py", "case.json"]


@pytest.fixture(scope="module", params=["bwrap", "docker"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    if request.param == "bwrap":
        if shutil.which("bwrap") is None:
            pytest.skip("bubblewrap (bwrap) is not installed here; CI installs it")
        yield BwrapSandbox()
        return
    if ENGINE_PROBLEM is not None:
        pytest.skip(f"{ENGINE_PROBLEM}; CI starts one with .ci/docker-setup.sh")
    with DockerSandbox() as docker_sandbox:
        yield docker_sandbox


class Recorder(DelegatingSandbox):
    """The sandbox as fixbot uses it, keeping each run's Completed for the assertions."""

    def __init__(self, inner: Sandbox) -> None:
        super().__init__(inner)
        self.runs: list[Completed] = []

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        completed = self.inner.run(argv, spec)
        self.runs.append(completed)
        return completed


def marked_pids(marker: str) -> list[int]:
    """Host processes with the marker as an argv element or as their name (zombies too)."""
    wanted = marker.encode()
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                comm = Path(entry.path, "comm").read_bytes().strip()
                argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if comm == wanted or wanted in argv:
                pids.append(int(entry.name))
    return pids


def is_linger(pid: int) -> bool:
    """The detached process `probe.linger` leaves (its last argv element says so)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    except OSError:
        return False
    return argv[-1] == b"fixbot-test-linger"


class Watcher:
    """Polls the host's /proc while a run goes on: the marked processes were really there.

    It tells the lingering process, at every poll, that it was seen (SIGWINCH, which a process
    ignores until it asks for it, so one sent before the linger's handler is set does no harm;
    the linger then leaves a file in the workspace, which `probe.linger` waits for): a busy host
    that polls late cannot miss it, as the hostile test goes on only once the host has seen it.
    """

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.seen: set[int] = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.stop.wait(0.05):
            found = marked_pids(self.marker)
            for pid in found:
                if is_linger(pid):
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGWINCH)
            self.seen.update(found)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def host_places() -> list[Path]:
    """Folders a write outside the workspace would land in."""
    places = [Path(p) for p in ("/", "/tmp", "/var/tmp", "/dev/shm", "/etc", "/usr/local/lib")]
    places += [HOME, HOME / ".ssh", Path(sys.prefix), Path(sysconfig.get_paths()["purelib"])]
    return places


def files_with(marker: str, tmp_path: Path, workspace: Path) -> list[Path]:
    found = [
        entry
        for place in host_places()
        if place.is_dir()
        for entry in place.iterdir()
        if marker in entry.name
    ]
    found += [
        p
        for p in tmp_path.rglob("*")
        if marker in p.name and workspace not in p.parents and p != workspace
    ]
    return found


def labelled_containers() -> set[str]:
    """fixbot's containers made by this process: another test worker's are not this run's."""
    import docker

    mine = [f"{LABEL}=1", f"{LABEL}.owner={process_identity(os.getpid())}"]
    client = docker.from_env()
    try:
        found = client.api.containers(all=True, filters={"label": mine})
    finally:
        client.close()
    return {c["Id"] for c in found}


def digest(path: Path) -> str | None:
    """The content of a file or a whole folder, or None when it is not there."""
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    if path.is_dir():
        parts = [
            f"{p.relative_to(path)}:{digest(p)}" for p in sorted(path.rglob("*")) if p.is_file()
        ]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return None


@dataclass
class Outcome:
    result: CheckResult | None
    probe: dict[str, Any]
    runs: list[Completed]
    seconds: float
    error: SandboxFailed | None = None
    watched: set[int] = field(default_factory=set)

    @property
    def completed(self) -> Completed:
        assert self.runs, f"the sandbox never ran: {self.error}"
        return self.runs[0]

    def refused(self, step: str) -> bool:
        """The probe recorded an exception for this step (or never got to it)."""
        return self.probe.get(step, "not reached") != "ok"


class Hostile:
    """One case: a workspace with the hostile module, run through run_checks, checked after.

    As fixbot runs an attempt: in a scratch folder capped at LIMITS.disk_mb (as root), and,
    where the backend can, as a layer (`workspace`) over the case's tree (`tree`); `seen`
    reads a path back as the command left it.
    """

    def __init__(self, sandbox: Sandbox, tmp_path: Path, scratch: Path) -> None:
        self.sandbox = sandbox
        self.tmp_path = tmp_path
        self.workspace = scratch / "workspace"
        self.tree = tmp_path / "tree" if sandbox.layered else self.workspace
        self.marker = "fbx" + uuid.uuid4().hex[:12]  # 15 characters, a whole process name
        self.workspace.mkdir()
        self.tree.mkdir(exist_ok=True)
        self.view = Workspace(self.workspace, self.tree if sandbox.layered else None)
        self.capped = False

    def seen(self, rel: str) -> Path | None:
        return self.view.locate(rel)

    def run(
        self,
        case: str,
        *,
        limits: Limits = LIMITS,
        readonly: Sequence[str] = (),
        lingers: bool = True,
        may_fail: bool = False,
        **facts: Any,
    ) -> Outcome:
        ws = self.tree
        shutil.copy(CASES / f"{case}.py", ws / "hostile.py")
        shutil.copy(CASES / "probe.py", ws / "probe.py")
        (ws / "tests").mkdir(exist_ok=True)
        shutil.copy(CASES / "check_hostile.py", ws / "tests" / "test_hostile.py")
        (ws / "case.json").write_text(json.dumps({"marker": self.marker, **facts}))
        containers = labelled_containers() if self.sandbox.name == "docker" else set()
        recorder = Recorder(self.sandbox)
        watcher = Watcher(self.marker)
        start = time.monotonic()
        result: CheckResult | None = None
        error: SandboxFailed | None = None
        try:
            result = suite.run_checks(
                recorder,
                self.workspace,
                lower=self.view.lower,
                test_command="python -m pytest",
                lint=False,
                types=False,
                readonly=[*READONLY, *readonly],
                limits=limits,
            )
        except SandboxFailed as exc:
            if not may_fail:
                raise
            error = exc
        finally:
            seconds = time.monotonic() - start
            watcher.close()
        probe_file = self.seen("probe.json")
        probe = json.loads(probe_file.read_text()) if probe_file and probe_file.is_file() else {}
        outcome = Outcome(result, probe, recorder.runs, seconds, error, watcher.seen)
        self._check_no_trace(outcome, containers, lingers)
        return outcome

    def _check_no_trace(self, outcome: Outcome, containers: set[str], lingers: bool) -> None:
        if lingers and outcome.error is None:
            assert outcome.probe.get("started"), f"the hostile test never ran: {outcome.runs}"
            assert outcome.watched, "the lingering process was never seen on the host"
        deadline = time.monotonic() + 5
        while marked_pids(self.marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not marked_pids(self.marker), "processes outlived the run"
        if self.sandbox.name == "docker":
            assert labelled_containers() <= containers, "a container outlived the run"
        assert not files_with(self.marker, self.tmp_path, self.workspace)


@pytest.fixture
def hostile(sandbox: Sandbox, tmp_path: Path) -> Iterator[Hostile]:
    with attempt_scratch(LIMITS.disk_mb) as scratch:
        hostile = Hostile(sandbox, tmp_path, scratch.path)
        hostile.capped = scratch.capped
        yield hostile


def test_no_connection_out_by_address_or_by_name(hostile: Hostile) -> None:
    outcome = hostile.run("net_out")
    steps = [k for k in outcome.probe if k.startswith(("tcp", "udp", "resolve", "https", "ipv6"))]
    assert len(steps) == 8, outcome.probe
    assert all(outcome.refused(step) for step in steps), outcome.probe


def _host_addresses() -> list[str]:
    addresses = ["127.0.0.1"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: this only picks a route
            addresses.append(probe.getsockname()[0])
        except OSError:
            pass
    return addresses


def test_the_host_is_not_reachable_from_inside(hostile: Hostile) -> None:
    abstract = f"fixbot-{hostile.marker}"
    with (
        socket.create_server(("0.0.0.0", 0)) as server,
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix_server,
    ):
        unix_server.bind("\0" + abstract)
        unix_server.listen()
        port = server.getsockname()[1]
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        server.accept()[0].close()  # the server is really there for the host itself
        outcome = hostile.run(
            "net_host",
            host_addresses=_host_addresses(),
            port=port,
            abstract=abstract,
            engine_sockets=[
                "/var/run/docker.sock",
                "/run/docker.sock",
                "/run/containerd/containerd.sock",
                "/var/run/docker/containerd/containerd.sock",
            ],
        )
        for listener in (server, unix_server):
            listener.setblocking(False)
            with pytest.raises(BlockingIOError):
                listener.accept()  # nobody from the sandbox knocked
    steps = [k for k in outcome.probe if k.startswith(("tcp", "unix", "abstract"))]
    assert len(steps) >= 6, outcome.probe
    assert all(outcome.refused(step) for step in steps), outcome.probe


def test_no_host_secret_is_in_any_environment_in_reach(
    hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    canaries = [f"sk-fixbot-canary-{uuid.uuid4().hex}", f"ghp_fixbotcanary{uuid.uuid4().hex}"]
    monkeypatch.setenv("OPENAI_API_KEY", canaries[0])
    monkeypatch.setenv("GITHUB_TOKEN", canaries[1])
    outcome = hostile.run("secrets", fixbot_pid=os.getpid())
    assert "environ" in outcome.probe and "all_processes" in outcome.probe, outcome.probe
    seen = json.dumps(outcome.probe) + outcome.completed.output
    for canary in canaries:
        assert canary not in seen
    assert "OPENAI_API_KEY" not in outcome.probe["environ"]
    assert "GITHUB_TOKEN" not in outcome.probe["environ"]


@pytest.fixture
def ssh_dir() -> Iterator[Path]:
    """~/.ssh as the host has it, made for the test (and removed) when it is not there."""
    path = HOME / ".ssh"
    made = not path.exists()
    path.mkdir(mode=0o700, exist_ok=True)
    yield path
    if made:
        shutil.rmtree(path, ignore_errors=True)


def test_the_hosts_private_files_are_not_readable(
    hostile: Hostile, tmp_path: Path, ssh_dir: Path
) -> None:
    canary = f"fixbot-private-{uuid.uuid4().hex}"
    key = ssh_dir / f"id_fixbot_{uuid.uuid4().hex[:8]}"
    dotfile = HOME / f".fixbot-canary-{uuid.uuid4().hex[:8]}"
    state_dir = tmp_path / "host-repo" / ".fixbot"
    state_dir.mkdir(parents=True)
    database = state_dir / "state.db"
    try:
        key.write_text(canary)
        key.chmod(0o600)
        dotfile.write_text(canary)
        with sqlite3.connect(database) as db:
            db.execute("create table checkpoints (blob text)")
            db.execute("insert into checkpoints values (?)", (canary,))
        db.close()
        (tmp_path / "host-repo" / "secret.txt").write_text(canary)
        targets = {
            "ssh key": str(key),
            "root dotfile": str(dotfile),
            "checkpoint db": str(database),
            "host repository": str(tmp_path / "host-repo" / "secret.txt"),
        }
        outcome = hostile.run(
            "read_host", targets=targets, folders=[str(HOME), str(ssh_dir), str(state_dir)]
        )
    finally:
        key.unlink(missing_ok=True)
        dotfile.unlink(missing_ok=True)
    assert all(outcome.refused(f"read {name}") for name in targets), outcome.probe
    assert canary not in json.dumps(outcome.probe)
    listings = json.dumps({k: v for k, v in outcome.probe.items() if k.startswith("list")})
    for name in (key.name, dotfile.name, "state.db"):
        assert name not in listings


def test_nothing_outside_the_workspace_is_writable(hostile: Hostile, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("original\n")
    outside_dir = tmp_path / "outside-dir"
    outside_dir.mkdir()
    bashrc = HOME / ".bashrc"
    watched = [outside, bashrc, Path("/etc/passwd"), outside_dir]
    before = {path: digest(path) for path in watched}
    marker = hostile.marker
    targets = [
        str(outside),
        str(bashrc),
        "/etc/passwd",
        f"/etc/{marker}",
        f"/tmp/{marker}",
        f"/var/tmp/{marker}",
        f"/dev/shm/{marker}",
        f"{HOME}/{marker}",
        f"{sysconfig.get_paths()['purelib']}/{marker}.pth",
        f"/usr/local/lib/{marker}",
    ]
    links = {
        "link-outside": str(outside),
        "link-bashrc": str(bashrc),
        "linked-folder": str(outside_dir),
        "linked-etc": "/etc",
    }
    outcome = hostile.run("write_host", targets=targets, links=links)
    assert {path: digest(path) for path in watched} == before
    assert not list(outside_dir.iterdir())
    for target in ("/etc/passwd", f"/etc/{marker}", f"{HOME}/{marker}", "linked-etc"):
        step = f"write {target}" if target.startswith("/") else "write into linked /etc"
        assert outcome.refused(step), outcome.probe
    assert len([k for k in outcome.probe if k.startswith("write")]) == len(targets) + 6


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_git_hooks_and_config_stay_in_the_throwaway_copy(hostile: Hostile, tmp_path: Path) -> None:
    host_repo = tmp_path / "host-repo"
    host_repo.mkdir()
    (host_repo / "README").write_text("the user's repository\n")
    _git(host_repo, "init", "-q", "-b", "main")
    _git(host_repo, "add", "-A")
    _git(host_repo, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "init")
    before = digest(host_repo / ".git")
    shutil.copytree(host_repo, hostile.tree, symlinks=True, dirs_exist_ok=True)
    outcome = hostile.run("git_dir", host_git=str(host_repo / ".git"))
    assert digest(host_repo / ".git") == before
    assert not (host_repo / ".git" / "hooks" / "post-checkout").exists()
    assert outcome.refused("host hooks/pre-commit") and outcome.refused("host config")
    # Whatever landed, landed in the copy: write failed or the copy holds it.
    copy_hook = hostile.seen(".git/hooks/post-checkout")
    assert outcome.refused("hook") or (copy_hook and copy_hook.is_file())
    _git(host_repo, "status")  # the host's repository still works, and ran nothing


def test_the_tests_cannot_be_modified_at_run_time(hostile: Hostile) -> None:
    outcome = hostile.run("tamper_tests")
    tests = hostile.seen("tests")
    assert tests is not None
    assert hostile.seen("tests-gone") is None and hostile.seen("tests/conftest.py") is None
    tested = hostile.seen("tests/test_hostile.py")
    assert tested and digest(tested) == digest(CASES / "check_hostile.py")
    probe = hostile.seen("probe.py")
    assert probe and digest(probe) == digest(CASES / "probe.py")
    steps = ["append", "truncate", "remove", "rename folder", "new conftest", "chmod"]
    assert all(outcome.refused(step) for step in [*steps, "replace probe"]), outcome.probe


def test_a_fork_bomb_is_stopped_by_the_process_limit(hostile: Hostile) -> None:
    limits = Limits(timeout_seconds=10, memory_mb=512, cpus=1.0, pids=64)
    outcome = hostile.run("fork_bomb", limits=limits)
    assert outcome.seconds < limits.timeout_seconds + 10
    if hit_process_cap(outcome.completed.output):
        # A whole-sandbox cap (a cgroup) that keeps refusing ends the run at once (its own
        # tests: test_cgroups.py): the bomb's parent never gets to say what it made.
        assert outcome.result is not None and outcome.result["status"] == "process_limit"
        return
    assert outcome.probe.get("refused"), outcome.probe  # the limit said no
    assert outcome.probe["made"] < limits.pids


def test_a_memory_bomb_is_stopped_by_the_memory_limit(hostile: Hostile) -> None:
    limits = Limits(timeout_seconds=20, memory_mb=256, cpus=1.0)
    outcome = hostile.run("memory_bomb", limits=limits, up_to_mb=2048)
    assert outcome.refused("grab"), outcome.probe
    assert outcome.probe.get("allocated_mb", 0) <= limits.memory_mb
    if hostile.sandbox.name == "docker":
        assert outcome.completed.output.endswith(OOM_NOTE) or "MemoryError" in json.dumps(
            outcome.probe
        )


def test_disk_filling_is_capped_per_file_in_all_and_in_tmp(hostile: Hostile) -> None:
    limits = LIMITS
    outcome = hostile.run(
        "disk_fill", big_mb=64, ws_files=4, ws_file_mb=15, tmp_files=4, tmp_file_mb=15
    )
    assert outcome.refused("big file"), outcome.probe
    assert outcome.probe.get("big_mb", 0) <= limits.file_size_mb
    if os.geteuid() == 0:  # as an ordinary user, fixbot cannot mount the capped scratch
        assert hostile.capped
        in_ws = outcome.probe.get("big_mb", 0)
        in_ws += sum(
            v for k, v in outcome.probe.items() if k.startswith("ws_") and k.endswith("_mb")
        )
        assert in_ws <= limits.disk_mb, outcome.probe
        assert any(outcome.refused(f"ws {n}") for n in range(4)), outcome.probe
    big = hostile.seen(f"big-{hostile.marker}.bin")
    assert big is not None and big.stat().st_size <= limits.file_size_mb * 1024 * 1024
    in_tmp = sum(v for k, v in outcome.probe.items() if k.startswith("tmp_") and k.endswith("_mb"))
    assert in_tmp <= limits.tmp_size_mb
    assert any(outcome.refused(f"tmp {n}") for n in range(4)), outcome.probe


def whole_sandbox_caps(sandbox: Sandbox) -> bool:
    """Whether memory and processes are capped per sandbox here: always on Docker; on bubblewrap
    where a cgroup is writable (root, or a delegated one), else the documented per-process
    fallback applies. In CI, as root, it must be there: never skipped into a false pass."""
    capped = not isinstance(sandbox, BwrapSandbox) or sandbox.cgroups.capped
    if not capped and os.environ.get("CI") and os.geteuid() == 0:
        pytest.fail(f"no whole-sandbox caps in CI as root: {sandbox.describe()}")
    return capped


def test_three_children_together_over_the_memory_cap_are_stopped(hostile: Hostile) -> None:
    if not whole_sandbox_caps(hostile.sandbox):
        pytest.skip(f"memory is capped per process here: {hostile.sandbox.describe()}")
    limits = Limits(timeout_seconds=30, memory_mb=384, cpus=1.0, pids=128, tmp_size_mb=32)
    outcome = hostile.run("memory_children", limits=limits, child_mb=160)  # 480 MB in all
    assert outcome.probe.get("started"), outcome.probe
    assert not outcome.probe.get("all_held"), outcome.probe
    assert outcome.completed.output.endswith(OOM_NOTE), outcome.completed.output[-500:]
    assert outcome.result is not None and outcome.result["status"] == "memory_exceeded"


# Address space enough for 50 threads' stacks where RLIMIT_AS applies: only processes count.
BOMB_LIMITS = Limits(timeout_seconds=40, memory_mb=2048, cpus=1.0, pids=96)


def bomb_beside_neighbour(
    bomb_sandbox: Sandbox, neighbour_sandbox: Sandbox, tmp_path: Path
) -> tuple[Outcome, Outcome]:
    """One run's fork bomb, and another run starting 50 threads while the bomb holds all it
    got: (the bomb's outcome, the neighbour's)."""
    found: dict[str, Outcome | BaseException] = {}
    with attempt_scratch(LIMITS.disk_mb) as first, attempt_scratch(LIMITS.disk_mb) as second:
        for name in ("bomb", "neighbour"):
            (tmp_path / name).mkdir()
        bomb = Hostile(bomb_sandbox, tmp_path / "bomb", first.path)
        neighbour = Hostile(neighbour_sandbox, tmp_path / "neighbour", second.path)

        def run_bomb() -> None:
            try:
                found["bomb"] = bomb.run("fork_bomb_hold", limits=BOMB_LIMITS, hold=8)
            except BaseException as exc:
                found["bomb"] = exc

        runner = threading.Thread(target=run_bomb)
        runner.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and runner.is_alive():
            full = bomb.seen("full")
            if full is not None and full.is_file():
                break
            time.sleep(0.05)
        outcome = neighbour.run("threads", limits=BOMB_LIMITS, count=50, lingers=False)
        runner.join()
    bombed = found["bomb"]
    assert isinstance(bombed, Outcome), bombed
    assert bombed.probe.get("refused") and bombed.probe["made"] < BOMB_LIMITS.pids, bombed.probe
    return bombed, outcome


def test_a_fork_bomb_leaves_a_neighbouring_sandbox_its_processes(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """The bomb stops at its own limit; the neighbour starts all its threads (a cgroup per run
    or, without one, a uid per run as root, a user namespace per run otherwise)."""
    _, neighbour = bomb_beside_neighbour(sandbox, sandbox, tmp_path)
    assert neighbour.probe.get("threads") == 50, (neighbour.probe, neighbour.runs)


def test_no_new_user_namespace_nor_any_other(hostile: Hostile) -> None:
    outcome = hostile.run("namespaces")
    steps = [k for k in outcome.probe if k.startswith(("unshare", "clone"))]
    assert len(steps) == 10, outcome.probe
    assert all(outcome.refused(step) for step in steps), outcome.probe
    for raw in ("unshare(NEWUSER)", "unshare(NEWNS)", "unshare(NEWNET)", "clone(NEWUSER)"):
        assert outcome.probe[raw] == "OSError: EPERM", outcome.probe  # the filter's answer


# Without the filter, the kernel answers each of these otherwise (tests/sandbox/test_seccomp.py).
REFUSED_CALLS = (
    "ptrace(TRACEME)",
    "ptrace(bad request, parent)",
    "process_vm_readv(parent)",
    "pidfd_getfd(bad fd)",
    "keyctl(bad op)",
    "add_key(NULL)",
    "request_key(NULL)",
    "bpf(bad cmd)",
    "mount(bad type)",
    "umount2(bad flags)",
    "open_tree(bad flags)",
    "setns(-1)",
    "perf_event_open(NULL)",
    "userfaultfd(USER_MODE_ONLY)",
    "io_uring_setup(0, NULL)",
    "personality(ADDR_NO_RANDOMIZE)",
)


def test_ptrace_keyrings_bpf_mount_and_other_abis_are_refused(hostile: Hostile) -> None:
    outcome = hostile.run("kernel_calls")
    seen = outcome.probe
    assert {name: seen.get(name) for name in REFUSED_CALLS} == dict.fromkeys(REFUSED_CALLS, "EPERM")
    assert seen["clone3(NULL, 0)"] == "ENOSYS"  # so that libc falls back to clone
    assert seen["getpid"] == seen["personality(query)"] == "ok"
    if "x32 getpid" in seen:
        assert seen["x32 getpid"] == seen["int 0x80 getpid"] == "signal:31"  # SIGSYS


def _peak_rss_reset() -> int:
    Path("/proc/self/clear_refs").write_text("5")  # resets the high-water mark
    return _status_kb("VmRSS")


def _status_kb(field_name: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field_name}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field_name} in /proc/self/status")


def test_an_output_flood_is_capped_and_fixbots_memory_stays_bounded(hostile: Hostile) -> None:
    rss_before = _peak_rss_reset()
    outcome = hostile.run("output_flood", flood_mb=128)
    peak_growth_mb = (_status_kb("VmHWM") - rss_before) / 1024
    completed = outcome.completed
    assert completed.output_bytes >= 128 * 1024 * 1024, outcome.probe
    assert len(completed.output) <= LIMITS.output_bytes + 200
    assert completed.output_truncated
    assert peak_growth_mb < 64, f"fixbot grew by {peak_growth_mb:.0f} MB"
    assert outcome.result is not None
    assert len(outcome.result["log_tail"]) <= LOG_CAP


@pytest.mark.parametrize("how", ["loop", "sleep"])
def test_code_that_never_finishes_is_killed_at_the_timeout(hostile: Hostile, how: str) -> None:
    limits = Limits(timeout_seconds=4, memory_mb=512, cpus=1.0)
    outcome = hostile.run("spin", limits=limits, how=how)
    assert outcome.probe.get("spinning") == how
    # Killed at the timeout; what ran is the result: the test it caught running failed.
    result = outcome.result
    assert result is not None and result["status"] == "tests_failed", result
    assert "tests/test_hostile.py::test_hostile ran" in result["cut_short"]
    assert outcome.completed.timed_out
    assert outcome.seconds < limits.timeout_seconds + 8


def test_stdin_is_closed(hostile: Hostile) -> None:
    outcome = hostile.run("stdin_read")
    assert not outcome.completed.timed_out
    assert outcome.probe["read fd 0"] == "b''"
    assert outcome.probe["sys.__stdin__"] == "''"
    assert outcome.refused("tty")


def test_a_double_forked_daemon_does_not_outlive_the_run(hostile: Hostile) -> None:
    outcome = hostile.run("daemon")
    assert outcome.probe.get("daemonised"), outcome.probe
    assert not outcome.completed.timed_out
    # The after-checks in run() found no process with the marker (the daemon's argv has it).


def test_a_thousand_zombies_are_reaped_with_the_sandbox(hostile: Hostile) -> None:
    limits = Limits(timeout_seconds=20, memory_mb=512, cpus=1.0, pids=1500)
    outcome = hostile.run("zombies", limits=limits, zombies=1000)
    assert outcome.probe.get("zombies") == 1000, outcome.probe
    assert len(outcome.watched) > 100  # they were there, named, while it ran


def test_setuid_and_setuid_programs_do_not_give_root(hostile: Hostile) -> None:
    outcome = hostile.run("setuid")
    for step in ("setuid", "seteuid", "setresuid", "setgid", "setgroups"):
        assert outcome.probe[step].startswith("PermissionError"), outcome.probe
    for step in ("su", "sudo", "mount"):
        assert not str(outcome.probe.get(step, "")).startswith("exit 0"), outcome.probe
    assert outcome.probe["euid"] != 0 and outcome.probe["uid"] != 0
    assert hostile.seen(f"{hostile.marker}-root") is None


def test_a_committed_link_at_a_readonly_path_does_not_expose_the_host(
    hostile: Hostile, tmp_path: Path
) -> None:
    canary = f"fixbot-linked-secret-{uuid.uuid4().hex}"
    in_tmp = Path(f"/tmp/fixbot-secret-{uuid.uuid4().hex}")
    deep = tmp_path / "host-secret.txt"
    try:
        for secret in (in_tmp, deep):
            secret.write_text(canary)
        (hostile.tree / "conftest.py").symlink_to(in_tmp)
        (hostile.tree / "setup.cfg").symlink_to(deep)
        outcome = hostile.run(
            "readonly_link", readonly=["conftest.py", "setup.cfg"], may_fail=True, lingers=False
        )
    finally:
        in_tmp.unlink(missing_ok=True)
    # Either the sandbox refuses to start (bubblewrap cannot place the mount), or it starts
    # without the host's file.
    seen = json.dumps(outcome.probe) + "".join(run.output for run in outcome.runs)
    assert canary not in seen


def test_forged_lines_on_the_report_channel_are_caught(hostile: Hostile) -> None:
    outcome = hostile.run("channel_forge")
    forged = outcome.probe.get("forged", [])
    assert ("pipe" if hostile.sandbox.passes_fds else "socket") in forged, outcome.probe
    result = outcome.result
    assert result is not None and result["status"] == "tampered", result
    assert any("not written by fixbot's plugin" in p for p in result["tampering"])
    assert result["tests"] == {}  # nothing of a tampered run is believed


def test_a_flood_of_the_report_channel_is_bounded_and_named(hostile: Hostile) -> None:
    rss_before = _peak_rss_reset()
    outcome = hostile.run("channel_flood", flood_mb=96)
    peak_growth_mb = (_status_kb("VmHWM") - rss_before) / 1024
    assert outcome.probe.get("flooded", 0) >= 96 * 1024 * 1024, outcome.probe
    assert not outcome.completed.timed_out  # the writer never blocked on a full channel
    assert peak_growth_mb < 64, f"fixbot grew by {peak_growth_mb:.0f} MB"
    result = outcome.result
    assert result is not None and result["status"] == "tampered", result
    assert any(p.startswith("the report channel overflowed") for p in result["tampering"])


def test_a_line_cut_short_is_not_read_and_the_timeout_names_the_test(hostile: Hostile) -> None:
    limits = Limits(timeout_seconds=4, memory_mb=512, cpus=1.0)
    outcome = hostile.run("channel_cut", limits=limits)
    assert outcome.probe.get("cut"), outcome.probe
    assert outcome.completed.timed_out
    result = outcome.result
    assert result is not None and result["status"] == "tests_failed", result  # what ran
    assert "tampering" not in result  # half a line is the kill's doing, not a forgery
    assert result["running"] == "tests/test_hostile.py::test_hostile"


NOBODY_PROBE = """
import sys
from pathlib import Path
from fixbot.sandbox import BwrapSandbox, RunSpec
root = Path(sys.argv[1])
show = "for f in /proc/[0-9]*/environ; do tr '\\\\0' '\\\\n' < $f; done"
result = BwrapSandbox().run(["sh", "-c", show], RunSpec(root / "ws", root / "out"))
print(result.output)
"""


def test_bwrap_as_an_ordinary_user_keeps_fixbots_environment_out() -> None:
    if os.geteuid() != 0 or shutil.which("bwrap") is None or shutil.which("setpriv") is None:
        pytest.skip("needs root (to become an ordinary user) and bubblewrap")
    canary = f"sk-fixbot-canary-{uuid.uuid4().hex}"
    root = Path(tempfile.mkdtemp(prefix="fixbot-nobody-"))
    try:
        root.chmod(0o755)
        for name in ("ws", "out"):
            (root / name).mkdir(mode=0o777)
            (root / name).chmod(0o777)
        done = subprocess.run(
            [*AS_NOBODY, sys.executable, "-c", NOBODY_PROBE, str(root)],
            capture_output=True,
            text=True,
            timeout=60,
            env={
                "PATH": os.environ["PATH"],
                "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
                "OPENAI_API_KEY": canary,
            },
            cwd=root,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    as_nobody_ran(done)
    assert "HOME=/tmp" in done.stdout, done.stdout  # the probe ran inside the sandbox
    assert canary not in done.stdout
