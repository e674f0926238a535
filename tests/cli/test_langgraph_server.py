"""langgraph.json, served for real: LangGraph's in-memory dev server runs fixbot's graph.

A thread is created over HTTP, run against a scripted model until fixbot escalates and the
run interrupts, then resumed through the runs API with Command(resume=...) and a hint, and
finishes fixed. The server is `langgraph dev` from langgraph-cli[inmem] (the dev extras).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from tests.conftest import API_KEY, ROOT, git, make_repo
from tests.fake_openai import SCRIPTED_MODEL, ScriptedOpenAI
from tests.fakes import GOOD, wrong

SERVER_PACKAGES = ("langgraph_cli", "langgraph_api", "langgraph_runtime_inmem")
MISSING = [name for name in SERVER_PACKAGES if importlib.util.find_spec(name) is None]
IN_CI = os.environ.get("CI") == "true"
STARTUP_SECONDS = 120

pytestmark = [
    pytest.mark.slow,
    # A developer without the dev extras skips; CI installs them, so there a missing one fails.
    pytest.mark.skipif(
        bool(MISSING) and not IN_CI,
        reason=f"needs {', '.join(MISSING)}: CI installs them (pip install -e '.[dev]')",
    ),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]


@dataclass
class DevServer:
    url: str
    log: Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_up(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            tail = log.read_text()[-4000:]
            pytest.fail(f"langgraph dev exited with {server.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    pytest.fail(f"langgraph dev did not answer in {STARTUP_SECONDS}s:\n{log.read_text()[-4000:]}")


def stop(server: subprocess.Popen[bytes]) -> None:
    """The dev server and everything it started: its whole process group."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(server.pid, sig)
        except ProcessLookupError:
            return
        try:
            server.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture
def scripted() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI([wrong(1), wrong(2), GOOD]) as model:
        yield model


@pytest.fixture
def dev_server(tmp_path: Path, scripted: ScriptedOpenAI) -> Iterator[DevServer]:
    assert not MISSING, f"{', '.join(MISSING)} missing: .ci/run installs the dev extras"
    workdir = tmp_path / "server"  # the dev server keeps its .langgraph_api/ here
    workdir.mkdir()
    log = tmp_path / "server.log"
    port = free_port()
    env = {
        **os.environ,
        "OPENAI_API_KEY": API_KEY,  # the server's own; no request carries it
        "OPENAI_BASE_URL": scripted.base_url,  # and its own endpoint: no request names another
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
    }
    command = [
        sys.executable,
        "-m",
        "langgraph_cli",
        "dev",
        "--no-browser",
        "--no-reload",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--config",
        str(ROOT / "langgraph.json"),
    ]
    with log.open("wb") as sink:
        server = subprocess.Popen(
            command,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, server, log)
        yield DevServer(url=url, log=log)
    finally:
        stop(server)


def test_served_graph_escalates_then_resumes_with_a_hint(
    tmp_path: Path, dev_server: DevServer, scripted: ScriptedOpenAI
) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": "gates: {lint: false, types: false}\n"})
    model = scripted
    with get_sync_client(url=dev_server.url, timeout=300) as client:
        context = {
            "repo": str(repo),
            "model": SCRIPTED_MODEL,
            "max_iterations": 2,
            "sandbox": "bwrap",
        }
        # A run that names another endpoint is refused: the server's key would go there.
        elsewhere = client.threads.create()["thread_id"]
        refused = client.runs.wait(
            elsewhere,
            "fixbot",
            input={"hint": ""},
            context={**context, "base_url": "http://attacker.invalid/v1"},
            raise_error=False,
        )
        assert refused["__error__"]["error"] == "UsageError", refused  # the server hides the text
        assert model.requests == []
        thread = client.threads.create()["thread_id"]

        paused = client.runs.wait(thread, "fixbot", input={"hint": ""}, context=context)
        assert isinstance(paused, dict) and "__interrupt__" in paused, paused
        assert client.threads.get(thread)["status"] == "interrupted"
        interrupts = client.threads.get_state(thread)["interrupts"]
        assert len(interrupts) == 1
        question = interrupts[0]["value"]
        assert question["thread_id"] == thread
        assert question["reason"] == "iterations: 2 of 2 attempts used"
        assert [(a["number"], a["verdict"]) for a in question["attempts"]] == [
            (1, "fail"),
            (2, "fail"),
        ]
        assert len(model.requests) == 2

        answer = {"action": "continue", "hint": "the divisor is wrong", "extra_iterations": 1}
        done = client.runs.wait(thread, "fixbot", command={"resume": answer}, context=context)
        assert isinstance(done, dict)
        assert done["status"] == "fixed", done.get("reason")
        assert done["thread_id"] == thread
        assert done["commit"] == git(repo, "rev-parse", "HEAD").strip()
        assert [a["verdict"] for a in done["attempts"]] == ["fail", "fail", "pass"]
        assert done["resumes"] == 1 and done["final_diff"]
        assert len(model.requests) == 3
        assert "the divisor is wrong" in json.dumps(model.requests[2]["messages"])
        assert client.threads.get(thread)["status"] == "idle"
        assert [run["status"] for run in client.runs.list(thread)] == ["success", "success"]
        assert API_KEY not in json.dumps(client.threads.get_state(thread))
    assert API_KEY not in dev_server.log.read_text()
