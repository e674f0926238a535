"""The bubblewrap sandbox, for real: identity, network, environment, files, time, memory, output."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from fixbot.errors import SandboxFailed, SandboxUnavailable
from fixbot.proc import Completed
from fixbot.sandbox import WORKSPACE, BwrapSandbox, Limits, RunSpec
from fixbot.sandbox.host import NOBODY, SANDBOX_GID
from fixbot.sandbox.protocol import BASE_ENV, OOM_NOTE
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

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="bubblewrap (bwrap) is not installed here; CI installs it and runs these",
)

FAST = Limits(timeout_seconds=20, memory_mb=1024)


@pytest.fixture(scope="module")
def sandbox() -> BwrapSandbox:
    return BwrapSandbox()


class Box:
    """One workspace and outputs folder, and a way to run Python in the sandbox over them."""

    def __init__(self, sandbox: BwrapSandbox, root: Path) -> None:
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

    def python(self, code: str, **kwargs: object) -> Completed:
        return self.run(["python", "-c", code], **kwargs)  # type: ignore[arg-type]

    def report(self, code: str, **kwargs: object) -> dict[str, object]:
        """Run code that prints one JSON object as its last line; return that object."""
        result = self.python(code, **kwargs)
        assert result.returncode == 0, result.output
        loaded: dict[str, object] = json.loads(result.output.splitlines()[-1])
        return loaded


@pytest.fixture
def box(sandbox: BwrapSandbox, tmp_path: Path) -> Box:
    return Box(sandbox, tmp_path)


def test_describe_names_bubblewrap(sandbox: BwrapSandbox) -> None:
    assert sandbox.describe().startswith("bubblewrap ")


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
    if os.geteuid() == 0:  # a uid of its own, in the group every sandbox shares
        assert seen["uid"] == seen["euid"] and SANDBOX_GID < seen["uid"] < SANDBOX_GID + 1000
        assert seen["gid"] == SANDBOX_GID and seen["groups"] in ([], [SANDBOX_GID])
    else:
        assert seen["uid"] == seen["euid"] == seen["gid"] == NOBODY
        assert seen["groups"] in ([], [NOBODY])
    assert seen["cwd"] == WORKSPACE
    assert seen["caps"] == dict.fromkeys(("CapEff", "CapPrm", "CapBnd", "CapAmb"), "0" * 16)
    assert seen["nonewprivs"] == "1"


def test_exit_status_and_missing_command_come_back(box: Box) -> None:
    assert box.python("raise SystemExit(7)").returncode == 7
    assert box.run(["no-such-command-fixbot"]).returncode == 127


def test_no_network_neither_outside_nor_to_the_hosts_loopback(box: Box) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        # The server is really there: the host itself can reach it.
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        server.accept()[0].close()
        result = box.run(["python", "-c", CONNECT, str(port)])
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody from the sandbox knocked
    assert result.returncode == 0, result.output
    seen = json.loads(result.output.splitlines()[-1])
    assert seen == {"1.1.1.1": seen["1.1.1.1"], "127.0.0.1": seen["127.0.0.1"]}
    assert "connected" not in seen.values()


def test_only_loopback_exists_inside(box: Box) -> None:
    result = box.python("print(open('/proc/net/dev').read())")
    interfaces = {line.split(":")[0].strip() for line in result.output.splitlines()[2:] if line}
    assert interfaces == {"lo"}


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
    assert "OPENAI_API_KEY" not in environ
    assert "GITHUB_TOKEN" not in environ
    assert set(environ) - {"PWD"} == {*BASE_ENV, "PATH", "FIXBOT_PROBE"}
    assert "FIXBOT_PROBE=arrived" in seen["proc_self"].split("\0")
    assert "OPENAI_API_KEY" not in seen["proc_self"]


def test_host_root_home_is_not_readable(box: Box) -> None:
    entries = host_root_entries()
    if not entries:
        pytest.skip("the host's /root holds no plain files to probe")
    result = box.run(["python", "-c", HOST_FILES, *entries])
    assert result.returncode == 0, result.output
    outcome = json.loads(result.output.splitlines()[-1])
    assert "read" not in outcome.values(), outcome


def test_host_files_outside_the_workspace_are_not_writable(box: Box, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("original\n")
    etc_probe = Path(f"/etc/fixbot-sandbox-probe-{uuid.uuid4().hex}")
    usr_probe = Path(f"/usr/fixbot-sandbox-probe-{uuid.uuid4().hex}")
    targets = [str(outside), str(etc_probe), "/etc/passwd", str(usr_probe)]
    passwd_before = Path("/etc/passwd").read_bytes()
    result = box.run(["python", "-c", WRITE_ATTEMPTS, *targets])
    assert result.returncode == 0, result.output
    outcome = json.loads(result.output.splitlines()[-1])
    # Where the sandbox has its own scratch /tmp a write may land there, but never on the host.
    assert outcome["/etc/passwd"] != "written"
    assert outcome[str(etc_probe)] != "written"
    assert outcome[str(usr_probe)] != "written"
    assert outside.read_text() == "original\n"
    assert not etc_probe.exists()
    assert not usr_probe.exists()
    assert Path("/etc/passwd").read_bytes() == passwd_before


def test_workspace_is_writable_and_readonly_paths_are_not(box: Box) -> None:
    ws = box.workspace
    (ws / "src.py").write_text("x = 1\n")
    (ws / "PROTECTED.txt").write_text("keep me\n")
    (ws / "tests").mkdir()
    (ws / "tests" / "test_a.py").write_text("def test_a(): pass\n")
    outcome = box.report(WORKSPACE_WRITES, readonly=["PROTECTED.txt", "tests", "not-there.txt"])
    assert outcome == {
        "new file": "ok",
        "edit source": "ok",
        "edit readonly file": outcome["edit readonly file"],
        "remove readonly file": outcome["remove readonly file"],
        "replace readonly file": outcome["replace readonly file"],
        "edit file in readonly dir": outcome["edit file in readonly dir"],
        "add file to readonly dir": outcome["add file to readonly dir"],
        "remove readonly dir": outcome["remove readonly dir"],
        "write outputs": "ok",
    }
    refused = {k: v for k, v in outcome.items() if v != "ok"}
    assert len(refused) == 6, outcome
    assert (ws / "new.txt").read_text() == "made in the sandbox\n"
    assert (ws / "src.py").read_text() == "x = 1\n# edited\n"
    assert (ws / "PROTECTED.txt").read_text() == "keep me\n"
    assert sorted(p.name for p in (ws / "tests").iterdir()) == ["test_a.py"]
    assert (ws / "tests" / "test_a.py").read_text() == "def test_a(): pass\n"
    assert (box.outputs / "report.txt").read_text() == "report\n"


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
    limits = Limits(timeout_seconds=timeout, memory_mb=1024)
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
    assert not [pid for pid in host_pids if alive(pid)]
    assert not [pid for pid in host_pids_with(marker) if alive(pid)]


def test_memory_limit_stops_a_big_allocation(box: Box) -> None:
    limits = Limits(timeout_seconds=20, memory_mb=256)
    small = box.python("b = bytearray(16 * 1024 * 1024); print('ok')", limits=limits)
    assert small.returncode == 0 and small.output.strip() == "ok", small.output
    big = box.python("b = bytearray(512 * 1024 * 1024); print('allocated')", limits=limits)
    assert big.returncode != 0
    assert "allocated" not in big.output
    if box.sandbox.cgroups.capped:  # the sandbox's cgroup killed it, and fixbot says so
        assert big.output.endswith(OOM_NOTE)
    else:  # the per-process address-space limit refused it
        assert "MemoryError" in big.output


def test_output_cap_holds_for_a_flood(box: Box) -> None:
    limits = Limits(timeout_seconds=20, memory_mb=1024, output_bytes=32 * 1024)
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
    result = box.python(code)
    assert result.output.strip() == "EOF"


def test_a_bwrap_that_cannot_sandbox_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable, match="cannot create a sandbox"):
        BwrapSandbox(executable=shutil.which("false"))


def test_the_command_cannot_impersonate_a_sandbox_failure(box: Box) -> None:
    try:
        result = box.python("print('bwrap: not really'); raise SystemExit(1)")
    except SandboxFailed as exc:
        pytest.fail(f"the command's own output was taken for a sandbox failure: {exc}")
    assert result.returncode == 1
