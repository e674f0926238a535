"""The prepare step: setup_command with the network, once per dependency set; checks without.

A local TCP server stands in for the package index: the setup script connects to it (the
prepare step has a network) and installs a module into the prepared virtualenv; the tests then
import that module (the checks see the prepared environment) and try the same server (the checks
have no network). The server counts connections, so a reused cache is visible as none.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixbot.checks import IndexSettings, run_trial
from fixbot.checks.prepare import prepared_environment
from fixbot.checks.prepare.environment import cache_key
from fixbot.checks.trial import setup_limits
from fixbot.config import Config, Gates
from fixbot.errors import SetupFailed
from fixbot.paths import StateDir
from fixbot.sandbox import BwrapSandbox, Limits, Sandbox
from fixbot.snapshot import take_snapshot
from tests.conftest import ENGINE_PROBLEM, RunFixbot, git, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD
from tests.listening import stop_listening

SETUP = """\
import socket, sys, sysconfig
from pathlib import Path

socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10).close()
site = Path(sysconfig.get_paths()["purelib"])
assert str(site).startswith("/fixbot-env/"), site
(site / "depmod.py").write_text("PREPARED = True\\n")
print("installed into", site)
"""
TEST_DEP = """\
import os
import socket

import depmod


def test_the_dependency_is_there() -> None:
    assert depmod.PREPARED
    assert os.environ["VIRTUAL_ENV"] == "/fixbot-env"


def test_no_network_in_the_checks() -> None:
    port = int(open("port.txt").read())
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
    except OSError:
        return
    raise AssertionError("the check reached the host")
"""


class Counter:
    """A TCP listener on the host's loopback that counts who connected."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.count = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.count += 1
            conn.close()

    def close(self) -> None:
        stop_listening(self.server, self.thread)


@pytest.fixture
def counter() -> Iterator[Counter]:
    c = Counter()
    yield c
    c.close()


def _repo(path: Path, port: int, setup: str | None = None) -> Path:
    setup = setup or f"python tools/setup_env.py {port}"
    config = f"test_command: python -m pytest\nsetup_command: {setup}\ngates:\n  lint: false\n"
    config += "  types: false\n"
    return make_repo(
        path,
        {
            "tools/setup_env.py": SETUP,
            "tests/test_dep.py": TEST_DEP,
            "port.txt": str(port),
            "requirements.txt": "depmod==1.0\n",
            ".fixbot.yml": config,
        },
    )


@pytest.fixture(params=["bwrap", "docker"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    if request.param == "bwrap":
        if shutil.which("bwrap") is None:
            pytest.skip("bubblewrap (bwrap) is not installed here; CI installs it")
        yield BwrapSandbox()
        return
    if ENGINE_PROBLEM is not None:
        pytest.skip(f"{ENGINE_PROBLEM}; CI starts one with .ci/docker-setup.sh")
    from fixbot.sandbox import DockerSandbox

    with DockerSandbox() as docker_sandbox:
        yield docker_sandbox


def _config(port: int, setup: str | None = None) -> Config:
    return Config(
        setup_command=setup or f"python tools/setup_env.py {port}",
        gates=Gates(lint=False, types=False),
    )


def test_prepared_once_then_reused_and_checks_stay_offline(
    sandbox: Sandbox, counter: Counter, tmp_path: Path
) -> None:
    repo = _repo(tmp_path / "repo", counter.port)
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, ["tests/**"], tmp_path / "work", "HEAD")
    config = _config(counter.port)
    result, _ = run_trial(sandbox, snapshot, config, "")
    assert counter.count == 1  # the prepare step reached the host; the tests did not
    outcomes = {k.rsplit("::", 1)[-1]: v["outcome"] for k, v in result["tests"].items()}
    assert outcomes["test_the_dependency_is_there"] == "passed", result["log_tail"]
    assert outcomes["test_no_network_in_the_checks"] == "passed", result["log_tail"]
    # Another attempt, and another run's snapshot of the same dependencies: the cache.
    run_trial(sandbox, snapshot, config, "")
    (tmp_path / "work2").mkdir()
    again = take_snapshot(repo, ["tests/**"], tmp_path / "work2", "HEAD")
    run_trial(sandbox, again, config, "")
    assert counter.count == 1
    assert len([p for p in StateDir(repo).envs.iterdir() if p.is_dir()]) == 1
    # New dependencies: a new environment.
    (repo / "requirements.txt").write_text("depmod==2.0\n")
    git(repo, "commit", "-qam", "bump")
    (tmp_path / "work3").mkdir()
    bumped = take_snapshot(repo, ["tests/**"], tmp_path / "work3", "HEAD")
    assert cache_key(bumped, config.setup_command or "", sandbox) != cache_key(
        snapshot, config.setup_command or "", sandbox
    )
    run_trial(sandbox, bumped, config, "")
    assert counter.count == 2


def test_every_file_of_the_snapshot_is_in_the_key(counter: Counter, tmp_path: Path) -> None:
    # The install can run any file (a setup.py that execs _version.py): an environment is
    # reused only for the very tree that built it.
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed here; CI installs it")
    sandbox = BwrapSandbox()
    repo = _repo(tmp_path / "repo", counter.port)
    (tmp_path / "a").mkdir()
    first = take_snapshot(repo, [], tmp_path / "a", "HEAD")
    (tmp_path / "a2").mkdir()
    same = take_snapshot(repo, [], tmp_path / "a2", "HEAD")
    assert cache_key(first, "x", sandbox) == cache_key(same, "x", sandbox)
    (repo / "calc.py").write_text((repo / "calc.py").read_text() + "\n# touched\n")
    git(repo, "commit", "-qam", "source only")
    (tmp_path / "b").mkdir()
    second = take_snapshot(repo, [], tmp_path / "b", "HEAD")
    assert cache_key(first, "x", sandbox) != cache_key(second, "x", sandbox)
    assert cache_key(first, "x", sandbox) != cache_key(first, "y", sandbox)
    assert cache_key(first, "x", sandbox) == cache_key(first, ["x"], sandbox)
    assert cache_key(first, ["x", "y"], sandbox) != cache_key(first, ["x y"], sandbox)
    settings = IndexSettings(env={"PIP_INDEX_URL": "https://mirror.invalid/simple"})
    assert cache_key(first, "x", sandbox, settings) != cache_key(first, "x", sandbox)


def test_a_failing_setup_leaves_nothing_cached(
    sandbox: Sandbox, counter: Counter, tmp_path: Path
) -> None:
    repo = _repo(tmp_path / "repo", counter.port)
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, [], tmp_path / "work", "HEAD")
    setup = "python -c 'import sys; print(\"no such package: depmod\"); sys.exit(4)'"
    with pytest.raises(SetupFailed, match="exit code 4") as failed:
        prepared_environment(sandbox, snapshot, setup, Limits(timeout_seconds=120))
    assert "no such package: depmod" in str(failed.value)
    assert [p.name for p in StateDir(repo).envs.iterdir() if not p.name.endswith(".lock")] == []
    assert prepared_environment(sandbox, snapshot, None, setup_limits(Config())) is None


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_fix_with_setup_command_end_to_end(
    counter: Counter, tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = _repo(tmp_path / "repo", counter.port)
    with ScriptedOpenAI([GOOD, GOOD]) as server:
        first = run_fixbot(repo, base_url=server.base_url)
        assert first.code == 0, first.stderr
        second = run_fixbot(repo, base_url=server.base_url)
        assert second.code == 0, second.stderr
    assert counter.count == 1  # prepared once for both runs
    assert first.evidence["status"] == "fixed"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_failing_setup_exits_3_without_a_model_call(
    counter: Counter, tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = _repo(tmp_path / "repo", counter.port, setup="python tools/missing.py")
    with ScriptedOpenAI([GOOD]) as server:
        run = run_fixbot(repo, "--json", base_url=server.base_url)
    assert run.code == 3, run.stderr
    assert server.requests == []
    assert "prepare step failed" in run.stderr
    assert "tools/missing.py" in run.stderr
    assert not os.listdir(StateDir(repo).envs) or all(
        p.endswith(".lock") for p in os.listdir(StateDir(repo).envs)
    )


def test_the_repository_cannot_stand_in_for_venv_or_pip(counter: Counter, tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed here; CI installs it")
    poison = "from pathlib import Path\nPath('/fixbot-env/POISONED').write_text('x')\n"
    repo = make_repo(tmp_path / "repo", {"venv.py": poison, "pip/__init__.py": poison})
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, [], tmp_path / "work", "HEAD")
    env = prepared_environment(
        BwrapSandbox(), snapshot, "python -m pip --version", Limits(timeout_seconds=300)
    )
    assert env is not None
    assert not (env / "POISONED").exists()
    assert (env / "bin" / "python").exists()  # the real venv module made it


def test_a_marker_without_its_key_is_not_a_cached_environment(
    counter: Counter, tmp_path: Path
) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed here; CI installs it")
    sandbox = BwrapSandbox()
    repo = _repo(tmp_path / "repo", counter.port)
    (tmp_path / "work").mkdir()
    snapshot = take_snapshot(repo, [], tmp_path / "work", "HEAD")
    setup = f"python tools/setup_env.py {counter.port}"
    planted = StateDir(repo).envs / cache_key(snapshot, setup, sandbox)
    planted.mkdir(parents=True)
    (planted / ".fixbot-prepared").write_text("{}")  # a bare marker: someone else's folder
    env = prepared_environment(sandbox, snapshot, setup, Limits(timeout_seconds=300))
    assert env == planted and counter.count == 1  # rebuilt, not trusted
