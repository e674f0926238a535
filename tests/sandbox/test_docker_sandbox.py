"""The Docker sandbox, for real: the same promises as the bubblewrap one, plus container hygiene.

Skipped only where no Docker engine answers; CI starts one (.ci/docker-setup.sh) and runs these.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from fixbot.errors import SandboxFailed, SandboxUnavailable
from fixbot.proc import Completed
from fixbot.sandbox import OUTPUTS, WORKSPACE, Limits, RunSpec, Sandbox
from fixbot.sandbox.containers import LABEL, process_identity
from fixbot.sandbox.docker import LOCAL_IMAGE, OOM_NOTE, DockerSandbox
from fixbot.sandbox.host import SANDBOX_GID
from fixbot.sandbox.protocol import BASE_ENV
from tests.conftest import ENGINE_PROBLEM
from tests.sandbox.probes import (
    CONNECT,
    DAEMON,
    ENVIRON,
    HOST_FILES,
    WORKSPACE_WRITES,
    WRITE_ATTEMPTS,
    alive,
    host_pids_with,
    host_root_entries,
)

NOBODY = 65534
FAST = Limits(timeout_seconds=20, memory_mb=512)


pytestmark = pytest.mark.skipif(
    ENGINE_PROBLEM is not None,
    reason=f"{ENGINE_PROBLEM}; CI starts one with .ci/docker-setup.sh and runs these",
)


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    """A plain SDK client, to look at the engine from outside the sandbox."""
    import docker

    client = docker.from_env()
    yield client
    client.close()


def labelled_containers(engine: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = engine.api.containers(all=True, filters={"label": f"{LABEL}=1"})
    return found


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    with DockerSandbox() as sandbox:
        yield sandbox


class Box:
    """One workspace and outputs folder, and a way to run Python in a sandbox over them."""

    def __init__(self, sandbox: Sandbox, root: Path) -> None:
        self.sandbox = sandbox
        self.workspace = root / "workspace"
        self.outputs = root / "outputs"
        self.workspace.mkdir()
        self.outputs.mkdir()

    def run(
        self,
        argv: Sequence[str],
        *,
        readonly: Sequence[str] = (),
        limits: Limits = FAST,
        env: Mapping[str, str] | None = None,
    ) -> Completed:
        spec = RunSpec(self.workspace, self.outputs, readonly=readonly, limits=limits, env=env)
        return self.sandbox.run(argv, spec)

    def python(self, code: str, *args: str, **kwargs: Any) -> Completed:
        return self.run(["python", "-c", code, *args], **kwargs)

    def report(self, code: str, *args: str, **kwargs: Any) -> dict[str, Any]:
        """Run code that prints one JSON object as its last line; return that object."""
        result = self.python(code, *args, **kwargs)
        assert result.returncode == 0, result.output
        loaded: dict[str, Any] = json.loads(result.output.splitlines()[-1])
        return loaded


def my_containers(engine: Any) -> set[str]:
    """The labelled containers this process made: another test worker's are not this run's."""
    owner = f"{LABEL}.owner={process_identity(os.getpid())}"
    found = engine.api.containers(all=True, filters={"label": [f"{LABEL}=1", owner]})
    return {c["Id"] for c in found}


@pytest.fixture
def box(sandbox: DockerSandbox, engine: Any, tmp_path: Path) -> Iterator[Box]:
    before = my_containers(engine)
    yield Box(sandbox, tmp_path)
    # Every run's container is gone once the run returns.
    assert my_containers(engine) <= before


def test_describe_names_the_engine_and_the_image(sandbox: DockerSandbox) -> None:
    described = sandbox.describe()
    assert described.startswith("docker engine ")
    assert LOCAL_IMAGE in described
    assert "sha256:" in described


def test_runs_as_nobody_without_capabilities(box: Box) -> None:
    seen = box.report(
        "import json, os\n"
        "status = dict(line.split(':\\t', 1) for line in open('/proc/self/status').read()"
        ".splitlines() if ':\\t' in line)\n"
        "print(json.dumps({'uid': os.getuid(), 'euid': os.geteuid(), 'gid': os.getgid(),\n"
        "  'groups': os.getgroups(), 'cwd': os.getcwd(),\n"
        "  'caps': {k: status[k].strip() for k in ('CapEff', 'CapPrm', 'CapBnd', 'CapAmb')},\n"
        "  'nonewprivs': status['NoNewPrivs'].strip()}))"
    )
    if os.geteuid() == 0:  # nobody, in the group that reads the shared snapshot
        assert seen["uid"] == seen["euid"] == NOBODY and seen["gid"] == SANDBOX_GID
        assert seen["groups"] in ([], [SANDBOX_GID])
    else:
        assert seen["uid"] == os.getuid()
    assert seen["cwd"] == WORKSPACE
    assert seen["caps"] == dict.fromkeys(("CapEff", "CapPrm", "CapBnd", "CapAmb"), "0" * 16)
    assert seen["nonewprivs"] == "1"


def test_exit_status_and_missing_command_come_back(box: Box) -> None:
    assert box.python("raise SystemExit(7)").returncode == 7
    assert box.run(["no-such-command-fixbot"]).returncode == 127


def test_no_network_neither_outside_nor_to_the_hosts_loopback(box: Box) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        server.accept()[0].close()
        result = box.python(CONNECT, str(port))
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody from the sandbox knocked
    assert result.returncode == 0, result.output
    seen = json.loads(result.output.splitlines()[-1])
    assert "connected" not in seen.values()


def test_only_loopback_exists_inside(box: Box) -> None:
    result = box.python("print(open('/proc/net/dev').read())")
    interfaces = {line.split(":")[0].strip() for line in result.output.splitlines()[2:] if line}
    assert interfaces == {"lo"}


def test_the_docker_socket_is_not_inside(box: Box) -> None:
    seen = box.report(
        "import json, os, socket\nout = {}\n"
        "for path in ('/var/run/docker.sock', '/run/docker.sock',\n"
        "             '/run/containerd/containerd.sock'):\n"
        "    s = socket.socket(socket.AF_UNIX)\n"
        "    try:\n        s.connect(path); out[path] = 'connected'\n"
        "    except OSError as exc:\n        out[path] = type(exc).__name__\n"
        "print(json.dumps(out))"
    )
    assert "connected" not in seen.values(), seen


def test_host_secrets_stay_out_and_explicit_env_arrives(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    openai_canary = f"sk-fixbot-canary-{uuid.uuid4().hex}"
    github_canary = f"ghp_fixbotcanary{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", openai_canary)
    monkeypatch.setenv("GITHUB_TOKEN", github_canary)
    result = box.python(ENVIRON, env={"FIXBOT_PROBE": "arrived"})
    assert result.returncode == 0, result.output
    for canary in (openai_canary, github_canary):
        assert canary not in result.output
    seen = json.loads(result.output.splitlines()[-1])
    environ = seen["environ"]
    assert environ["FIXBOT_PROBE"] == "arrived"
    # Exactly the allow-list: not even the HOSTNAME the engine adds.
    assert set(environ) - {"PWD"} == {*BASE_ENV, "PATH", "FIXBOT_PROBE"}
    assert "FIXBOT_PROBE=arrived" in seen["proc_self"].split("\0")
    assert "OPENAI_API_KEY" not in seen["proc_self"]


def test_host_root_home_is_not_readable(box: Box) -> None:
    entries = host_root_entries()
    if not entries:
        pytest.skip("the host's /root holds no plain files to probe")
    outcome = box.report(HOST_FILES, *entries)
    assert "read" not in outcome.values(), outcome


def test_host_files_outside_the_workspace_are_not_writable(box: Box, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("original\n")
    etc_probe = Path(f"/etc/fixbot-sandbox-probe-{uuid.uuid4().hex}")
    usr_probe = Path(f"/usr/fixbot-sandbox-probe-{uuid.uuid4().hex}")
    prefix_probe = Path(sys.prefix, f"fixbot-sandbox-probe-{uuid.uuid4().hex}")
    targets = [str(outside), str(etc_probe), "/etc/passwd", str(usr_probe), str(prefix_probe)]
    outcome = box.report(WRITE_ATTEMPTS, *targets)
    for target in targets[1:]:
        assert outcome[target] != "written", outcome
    assert outside.read_text() == "original\n"
    assert not etc_probe.exists()
    assert not usr_probe.exists()
    assert not prefix_probe.exists()


def test_workspace_is_writable_and_readonly_paths_are_not(box: Box) -> None:
    ws = box.workspace
    (ws / "src.py").write_text("x = 1\n")
    (ws / "PROTECTED.txt").write_text("keep me\n")
    (ws / "tests").mkdir()
    (ws / "tests" / "test_a.py").write_text("def test_a(): pass\n")
    outcome = box.report(WORKSPACE_WRITES, readonly=["PROTECTED.txt", "tests", "not-there.txt"])
    assert outcome["new file"] == outcome["edit source"] == outcome["write outputs"] == "ok"
    refused = {k: v for k, v in outcome.items() if v != "ok"}
    assert len(refused) == 6, outcome
    assert (ws / "new.txt").read_text() == "made in the sandbox\n"
    assert (ws / "src.py").read_text() == "x = 1\n# edited\n"
    assert (ws / "PROTECTED.txt").read_text() == "keep me\n"
    assert sorted(p.name for p in (ws / "tests").iterdir()) == ["test_a.py"]
    assert (ws / "tests" / "test_a.py").read_text() == "def test_a(): pass\n"
    assert (box.outputs / "report.txt").read_text() == "report\n"


def test_a_readonly_link_out_of_the_workspace_is_not_followed(box: Box, tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    canary = f"fixbot-host-secret-{uuid.uuid4().hex}"
    secret.write_text(canary)
    (box.workspace / "conftest.py").symlink_to(secret)
    result = box.python("print(open('conftest.py').read())", readonly=["conftest.py"])
    assert canary not in result.output
    assert result.returncode != 0


@pytest.mark.parametrize(
    ("linger", "timeout", "timed_out"),
    [(60.0, 2.0, True), (0.5, 20.0, False)],
    ids=["timeout", "clean-exit"],
)
def test_a_double_forked_daemon_does_not_outlive_the_run(
    box: Box, linger: float, timeout: float, timed_out: bool
) -> None:
    marker = f"fixbot-daemon-{uuid.uuid4().hex}"
    outcome: list[Completed] = []
    argv = ["python", "-c", DAEMON, marker, "daemon.pid", str(linger)]
    limits = Limits(timeout_seconds=timeout, memory_mb=512)
    runner = threading.Thread(target=lambda: outcome.append(box.run(argv, limits=limits)))
    start = time.monotonic()
    runner.start()
    host_pids: list[int] = []
    while not host_pids and runner.is_alive():
        host_pids = host_pids_with(marker)
        time.sleep(0.02)
    runner.join(30)
    assert not runner.is_alive()
    assert time.monotonic() - start < timeout + 8
    (result,) = outcome
    assert result.timed_out is timed_out, result
    assert (box.workspace / "daemon.pid").read_text().isdigit()  # it did start, inside
    assert host_pids, "the daemon was never seen on the host"
    deadline = time.monotonic() + 3
    while any(alive(pid) for pid in host_pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in host_pids_with(marker) if alive(pid)]


def test_timeout_kills_the_container(box: Box) -> None:
    start = time.monotonic()
    result = box.python(
        "import time\nprint('started', flush=True)\ntime.sleep(600)",
        limits=Limits(timeout_seconds=2, memory_mb=512),
    )
    assert result.timed_out
    assert time.monotonic() - start < 10
    assert result.output.startswith("started")


def test_memory_limit_kills_a_big_allocation_and_says_so(box: Box) -> None:
    limits = Limits(timeout_seconds=20, memory_mb=256)
    small = box.python("b = bytearray(16 * 1024 * 1024); print('ok')", limits=limits)
    assert small.returncode == 0 and small.output.strip() == "ok", small.output
    big = box.python(
        "b = bytearray(1024 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); print('allocated')",
        limits=limits,
    )
    assert big.returncode == 137
    assert "allocated" not in big.output
    assert big.output.endswith(OOM_NOTE)


def test_output_cap_holds_for_a_flood(box: Box) -> None:
    limits = Limits(timeout_seconds=20, memory_mb=512, output_bytes=32 * 1024)
    flood = (
        "import sys\nout = sys.stdout.buffer\nout.write(b'FIRST\\n')\n"
        "for _ in range(320): out.write(b'z' * 65536)\nout.write(b'\\nLAST\\n')"
    )
    result = box.python(flood, limits=limits)
    assert result.returncode == 0
    assert result.output_bytes == 320 * 65536 + len(b"FIRST\n\nLAST\n")
    assert len(result.output) < 32 * 1024 + 200
    assert result.output.startswith("FIRST\n")
    assert result.output.endswith("\nLAST\n")
    assert result.output_truncated


def test_stdin_is_closed(box: Box) -> None:
    code = "try:\n    input()\n    print('read a line')\nexcept EOFError:\n    print('EOF')"
    assert box.python(code).output.strip() == "EOF"


def test_the_container_is_locked_down_and_removed_afterwards(box: Box, engine: Any) -> None:
    limits = Limits(timeout_seconds=20, memory_mb=300, pids=77, cpus=1.0, tmp_size_mb=17)
    outcome: list[Completed] = []
    marker = uuid.uuid4().hex
    runner = threading.Thread(
        target=lambda: outcome.append(
            box.python("import time; time.sleep(3)", marker, limits=limits, readonly=["ro"])
        )
    )
    (box.workspace / "ro").write_text("read only\n")
    runner.start()
    seen: dict[str, Any] | None = None
    while seen is None and runner.is_alive():
        for found in labelled_containers(engine):
            inspected = engine.api.inspect_container(found["Id"])
            if marker in inspected["Config"]["Cmd"]:
                seen = inspected
        time.sleep(0.05)
    runner.join(30)
    assert seen is not None, "the container was never seen"
    host = seen["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"][0] == "no-new-privileges"
    (profile,) = host["SecurityOpt"][1:]  # fixbot's own seccomp filter, as JSON
    assert json.loads(profile.removeprefix("seccomp="))["defaultAction"] == "SCMP_ACT_ALLOW"
    assert host["PidsLimit"] == 77
    assert host["Memory"] == host["MemorySwap"] == 300 * 1024 * 1024
    assert host["NanoCpus"] == 1_000_000_000
    assert host["Init"] is True
    assert host["LogConfig"]["Type"] == "none"
    assert "size=17m" in host["Tmpfs"]["/tmp"]
    assert {u["Name"] for u in host["Ulimits"]} >= {"fsize", "nofile"}
    assert not host.get("Privileged")
    mounts = {m["Destination"]: m for m in seen["Mounts"]}
    assert mounts[WORKSPACE]["RW"] is True
    assert mounts[OUTPUTS]["RW"] is True
    assert mounts[f"{WORKSPACE}/ro"]["RW"] is False
    assert all(not m["RW"] for d, m in mounts.items() if d not in (WORKSPACE, OUTPUTS))
    assert not [m for m in seen["Mounts"] if "docker.sock" in m["Source"]]
    assert seen["Config"]["OpenStdin"] is False
    if os.geteuid() == 0:
        assert seen["Config"]["User"] == f"{NOBODY}:{SANDBOX_GID}"
    (result,) = outcome
    assert result.returncode == 0, result.output
    import docker.errors

    with pytest.raises(docker.errors.NotFound):
        engine.api.inspect_container(seen["Id"])


CRASHING_OWNER = """
import sys
from pathlib import Path
from fixbot.sandbox import DockerSandbox, Limits, RunSpec
root = Path(sys.argv[1])
DockerSandbox().run(["python", "-c", "import time; time.sleep(600)", sys.argv[2] + "-inner"],
    RunSpec(root / "workspace", root / "outputs", limits=Limits(timeout_seconds=600)))
"""


def test_a_crashed_owners_container_is_reaped_by_the_next_sandbox(
    tmp_path: Path, engine: Any
) -> None:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "outputs").mkdir()
    base = f"fixbot-crash-{uuid.uuid4().hex}"
    marker = f"{base}-inner"  # what the sandboxed command, and only it, has in its argv
    owner = subprocess.Popen([sys.executable, "-c", CRASHING_OWNER, str(tmp_path), base])
    try:
        deadline = time.monotonic() + 30
        while not host_pids_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert host_pids_with(marker), "the sandboxed command never started"
    finally:
        owner.send_signal(signal.SIGKILL)  # a crash: no finally blocks run
        owner.wait()
    (left,) = [c for c in labelled_containers(engine) if marker in c["Command"]]
    # The engine may still report "created" for a moment after the command started.
    assert left["State"] in ("created", "running")
    with DockerSandbox() as fresh:
        assert left["Id"] in fresh.reaped
    assert not [c for c in labelled_containers(engine) if marker in c["Command"]]
    deadline = time.monotonic() + 5
    while host_pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in host_pids_with(marker) if alive(pid)]


def test_reaping_spares_live_owners_and_unknown_ones_until_their_deadline(
    engine: Any, sandbox: DockerSandbox
) -> None:
    future = f"{time.time() + 600:.0f}"
    past = f"{time.time() - 1:.0f}"
    machine = sandbox._owner.rsplit("/", 2)[0]  # this boot, this pid namespace
    foreign = "another-boot/pid:[1]/1/1"
    with subprocess.Popen(["sleep", "60"]) as live:
        live_owner = process_identity(live.pid)
        assert live_owner is not None
        cases = {
            "dead owner": (f"{machine}/999999999/1", future),
            "live owner": (live_owner, future),
            "live owner, overdue": (live_owner, past),
            "foreign, in time": (foreign, future),
            "foreign, overdue": (foreign, past),
        }
        made: dict[str, str] = {}
        try:
            for name, (owner, deadline) in cases.items():
                labels = {LABEL: "1", f"{LABEL}.owner": owner, f"{LABEL}.deadline": deadline}
                made[name] = engine.api.create_container(
                    LOCAL_IMAGE, command=["true"], labels=labels
                )["Id"]
            with DockerSandbox() as fresh:
                reaped = set(fresh.reaped)
            assert {name for name, container in made.items() if container in reaped} == {
                "dead owner",
                "live owner, overdue",
                "foreign, overdue",
            }
        finally:
            live.kill()
            for container in made.values():
                with contextlib.suppress(Exception):
                    engine.api.remove_container(container, force=True)


# The SDK leaks the socket of a connection attempt that fails (docker/transport/unixconn.py):
# exactly what these tests cause, on purpose.
SDK_LEAKS_FAILED_CONNECTIONS = pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnraisableExceptionWarning", "ignore::ResourceWarning"
)


def test_a_user_named_image_gets_nothing_from_the_host(
    box: Box, engine: Any, tmp_path: Path
) -> None:
    alias = f"fixbot-sandbox:user-named-{uuid.uuid4().hex[:8]}"
    engine.images.get(LOCAL_IMAGE).tag(alias)
    try:
        with DockerSandbox(alias) as user_named:
            assert not user_named.host_toolchain
            assert "host toolchain" not in user_named.describe()
            # The local image holds no programs of its own: with no host toolchain mounted,
            # even `env` is missing.
            (tmp_path / "user-named").mkdir()
            result = Box(user_named, tmp_path / "user-named").run(["true"])
            assert result.returncode == 127, result.output
    finally:
        engine.images.remove(alias)


@SDK_LEAKS_FAILED_CONNECTIONS
def test_an_engine_that_does_not_answer_is_unavailable(tmp_path: Path) -> None:
    nowhere = f"unix://{tmp_path}/no-docker.sock"
    with pytest.raises(SandboxUnavailable, match="does not answer"):
        DockerSandbox(environment={"DOCKER_HOST": nowhere})
    gc.collect()  # the leaked socket warns here, under this test's filter


def test_a_missing_image_is_unavailable_and_says_what_to_do() -> None:
    with pytest.raises(SandboxUnavailable, match="docker pull fixbot-no-such-image"):
        DockerSandbox("fixbot-no-such-image:none")


class EngineProxy:
    """A Unix socket relaying to the real engine, which can drop everything and come back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.open: list[socket.socket] = []
        self.alive = True
        self.server = self._listen()

    def _listen(self) -> socket.socket:
        self.path.unlink(missing_ok=True)
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(self.path))
        server.listen()
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()
        return server

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX)
            engine.connect("/var/run/docker.sock")
            self.open += [client, engine]
            for a, b in ((client, engine), (engine, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def die(self) -> None:
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)  # wakes the accept(); close() alone would not
        self.server.close()
        for sock in self.open:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self.open.clear()

    def revive(self) -> None:
        self.server = self._listen()


@SDK_LEAKS_FAILED_CONNECTIONS
def test_an_engine_that_dies_during_a_run_is_a_sandbox_failure(tmp_path: Path, engine: Any) -> None:
    if not Path("/var/run/docker.sock").exists():
        pytest.skip("the engine is not on the default Unix socket")
    proxy = EngineProxy(tmp_path / "engine.sock")
    try:
        with DockerSandbox(environment={"DOCKER_HOST": f"unix://{proxy.path}"}) as sandbox:
            box = Box(sandbox, tmp_path)
            marker = f"fixbot-engine-death-{uuid.uuid4().hex}"
            threading.Timer(1.5, proxy.die).start()
            start = time.monotonic()
            with pytest.raises(SandboxFailed, match="Docker engine failed"):
                box.python(
                    "import time; time.sleep(600)", marker, limits=Limits(timeout_seconds=60)
                )
            assert time.monotonic() - start < 30
            # Its container could not be removed through the dead engine...
            assert [c for c in labelled_containers(engine) if marker in c["Command"]]
            proxy.revive()
            # ...and is, by the next run, once the engine answers again.
            assert box.python("print('back')").output == "back\n"
            assert not [c for c in labelled_containers(engine) if marker in c["Command"]]
    finally:
        proxy.die()
        gc.collect()  # the leaked sockets warn here, under this test's filter


def test_choosing_auto_takes_docker_when_it_answers_and_bubblewrap_when_not(
    tmp_path: Path,
) -> None:
    from fixbot.sandbox import choose

    chosen = choose("auto")
    assert isinstance(chosen, DockerSandbox)
    chosen.close()
    if shutil.which("bwrap"):
        nowhere = {"DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)  # the SDK's failed connection
            fallback = choose("auto", environment=nowhere)
            gc.collect()
        assert fallback.name == "bwrap"
    with pytest.raises(SandboxUnavailable, match="not on this Docker engine"):
        choose("docker", image="fixbot-no-such-image:none")


def test_doctor_reports_the_sandboxes_and_the_tools_in_them() -> None:
    from fixbot.cli import doctor

    checks = doctor.diagnose()
    by_name = {check.name: check for check in checks}
    assert list(by_name) == [
        "bubblewrap",
        "docker",
        "workspaces",
        "containment",
        "git",
        "python",
        "environment",
        "pytest",
        "ruff",
        "mypy",
    ]
    containment = by_name["containment"].detail
    assert "bwrap: " in containment and "docker: " in containment
    assert containment.count("seccomp (") == 2  # the same filter on both backends
    assert "capped per sandbox (docker --memory, --pids-limit)" in containment
    assert by_name["python"].ok, by_name["python"]
    assert by_name["docker"].ok, by_name["docker"]
    if os.geteuid() == 0:  # CI: both backends lay workspaces, and the scratch is capped
        assert "overlay per attempt (bwrap, docker)" in by_name["workspaces"].detail
        assert "disk capped" in by_name["workspaces"].detail
    assert "engine" in by_name["docker"].version
    assert by_name["pytest"].ok and by_name["pytest"].version
    assert "docker sandbox" in by_name["pytest"].detail
    rendered = doctor.render(checks)
    assert "fixbot can run here" in rendered
    assert len(rendered.splitlines()) == len(checks) + 2


def test_importing_the_selection_and_the_doctor_does_not_import_the_sdk() -> None:
    code = (
        "import sys, fixbot.sandbox, fixbot.cli.doctor, fixbot.loop; "
        "raise SystemExit('docker' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
