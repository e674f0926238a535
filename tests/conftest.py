"""Shared helpers: real git repositories in temp dirs, the bundled example, the CLI in-process."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import structlog

from fixbot import cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "calc"
API_KEY = "sk-test-SECRET-7f3a9c1d"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def make_repo(
    path: Path, files: Mapping[str, str] | None = None, *, source: Path = EXAMPLE
) -> Path:
    """A committed git repository: a copy of `source` with `files` laid over it."""
    path.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, path, dirs_exist_ok=True)
    for rel, text in (files or {}).items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "broken")
    return path


def docker_engine_problem() -> str | None:
    """Why no Docker engine answers here, or None when one does (the client is closed either
    way: an unclosed socket would be an error under `filterwarnings = error`)."""
    try:
        import docker
    except ImportError:
        return "the docker Python SDK is not installed"
    from fixbot.sandbox.docker import unreachable_socket

    unreachable = unreachable_socket(os.environ)  # the SDK would leave its socket open
    if unreachable:
        return f"no Docker engine answers here ({unreachable})"
    try:
        client = docker.from_env(timeout=5)
    except Exception as exc:
        return f"no Docker engine answers here ({type(exc).__name__})"
    try:
        client.ping()
    except Exception as exc:
        return f"no Docker engine answers here ({type(exc).__name__})"
    finally:
        client.close()
    return None


# Checked once per test session. In CI (which starts an engine) a missing one is a failure of
# the Docker tests, never a skip: they run and fail.
ENGINE_PROBLEM = None if os.environ.get("CI") else docker_engine_problem()


def database_url() -> str:
    """A PostgreSQL database for tests: .ci/run starts one and sets the variable; on a
    developer's machine without one the tests skip (never in CI)."""
    url = os.environ.get("FIXBOT_TEST_DATABASE_URL", "")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("CI must provide FIXBOT_TEST_DATABASE_URL (see .ci/run)")
        pytest.skip("no PostgreSQL: set FIXBOT_TEST_DATABASE_URL to run these tests")
    return url


def docker_or_skip() -> None:
    """A test that needs the Docker engine runs in CI (which starts one) and fails there without
    it; on a developer's machine without an engine it is skipped, saying so."""
    from fixbot.errors import SandboxUnavailable
    from fixbot.sandbox import choose

    try:
        choose("docker")
    except SandboxUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"no Docker engine here: {exc}")


def read_example(name: str) -> str:
    return (EXAMPLE / name).read_text()


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    out: Path

    @property
    def evidence(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.out / "evidence.json").read_text())
        return data

    @property
    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stderr.splitlines() if line.startswith("{")]


RunFixbot = Callable[..., Run]


E2E_FOLDER = Path(__file__).resolve().parent / "cli"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The end-to-end tests (the real CLI over real git, sandboxes and sockets: everything in
    tests/cli/, and any test that drives `run_fixbot`) carry the `e2e` marker, so that
    `-m "not e2e"` is the fast layer."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if item.path.is_relative_to(E2E_FOLDER) or "run_fixbot" in fixtures:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session", autouse=True)
def _shared_environments() -> None:
    """The shared environment the checks run in (a virtualenv with fixbot's pinned pytest),
    built once per machine with this host's package-index settings: a test that passes none
    would build it without them, which fails behind a TLS-intercepting proxy. Cached in
    ~/.cache/fixbot, so this costs a sandbox's start once it is built."""
    if shutil.which("bwrap") is None:
        return
    from fixbot.checks.prepare import index_settings
    from fixbot.checks.prepare.base import shared_environment
    from fixbot.checks.prepare.pins import PINNED
    from fixbot.errors import FixbotError
    from fixbot.sandbox import BwrapSandbox, Limits

    with contextlib.suppress(FixbotError):  # no index here: the tests that need it say so
        index = index_settings(os.environ)
        shared_environment(BwrapSandbox(), Limits(timeout_seconds=900), index, PINNED)


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    yield
    structlog.reset_defaults()


@pytest.fixture
def run_fixbot(capsys: pytest.CaptureFixture[str]) -> RunFixbot:
    def run(
        repo: Path,
        *args: str,
        base_url: str,
        env: Mapping[str, str] | None = None,
        command: str = "fix",
        thread: str = "",
        extra: Sequence[str] = (),
    ) -> Run:
        environ = {
            "OPENAI_API_KEY": API_KEY,
            "OPENAI_BASE_URL": base_url,
            "FIXBOT_MODEL": "scripted-model",
            **(env or {}),
        }
        capsys.readouterr()
        head = [command, thread] if command == "resume" else [command]
        if "--sandbox" not in args and "--sandbox" not in extra:
            args = (*args, "--sandbox", "bwrap")  # the end-to-end suite runs on bubblewrap
        code = cli.main([*head, str(repo), "--log-format", "json", *args, *extra], environ)
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err, repo / ".fixbot" / "out")

    return run
