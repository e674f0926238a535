"""A run killed mid-way and rerun resumes from its checkpoint and repeats no finished attempt."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import API_KEY, make_repo
from tests.fake_openai import ScriptedOpenAI
from tests.test_fix import GOOD, wrong

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="needs bubblewrap (apt-get install bubblewrap)"
)


def fixbot(repo: Path, base_url: str) -> subprocess.Popen[str]:
    env = {
        "PATH": os.environ["PATH"],
        "OPENAI_API_KEY": API_KEY,
        "OPENAI_BASE_URL": base_url,
        "FIXBOT_MODEL": "scripted-model",
    }
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fixbot",
            "fix",
            str(repo),
            "--log-format",
            "json",
            "--sandbox",
            "bwrap",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def nodes_run(stderr: str) -> list[str]:
    events = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return [e["node"] for e in events if e.get("event") == "node"]


def test_killed_during_the_second_model_call_resumes_without_redoing_work(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    in_flight = threading.Event()
    release = threading.Event()

    def hang(body: dict[str, Any]) -> str:
        in_flight.set()
        release.wait(60)
        return "too late"

    with ScriptedOpenAI([wrong(1), hang, GOOD]) as server:
        first = fixbot(repo, server.base_url)
        try:
            assert in_flight.wait(120), "the second model call never came"
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            _, first_err = first.communicate(timeout=30)
        assert first.returncode == -signal.SIGKILL
        assert nodes_run(first_err) == [
            "baseline",
            "autofix",
            "generate",
            "apply",
            "check",
            "judge",
            "reflect",
        ]

        second = fixbot(repo, server.base_url)
        _, err = second.communicate(timeout=300)
        release.set()
    assert second.returncode == 0, err
    # Baseline and attempt 1 were not redone: the rerun starts at the interrupted model call.
    assert nodes_run(err) == [
        "generate",
        "apply",
        "check",
        "judge",
        "verify",
        "minimize",
        "finalize",
    ]
    assert len(server.requests) == 3
    evidence = json.loads((repo / ".fixbot" / "out" / "evidence.json").read_text())
    assert [a["verdict"] for a in evidence["attempts"]] == ["fail", "pass"]
    assert evidence["attempts"][0]["reply"] == wrong(1)

    # A third run of the same command reports the finished result and calls nobody.
    with ScriptedOpenAI([]) as idle:
        third = fixbot(repo, idle.base_url)
        third.communicate(timeout=120)
    assert third.returncode == 0
    assert idle.requests == []


BOUNDARIES = [
    "baseline",
    "autofix",
    "generate",
    "apply",
    "check",
    "judge",
    "reflect",
    "verify",
    "minimize",
]


def _driver(repo: Path, base_url: str, crash_after: str | None) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "OPENAI_API_KEY": API_KEY,
        "OPENAI_BASE_URL": base_url,
        "FIXBOT_MODEL": "scripted-model",
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }
    module = "fixbot"
    if crash_after:
        env["FIXBOT_CRASH_AFTER"] = crash_after
        module = "tests.crash_driver"
    argv = [
        sys.executable,
        "-m",
        module,
        "fix",
        str(repo),
        "--log-format",
        "json",
        "--json",
        "--sandbox",
        "bwrap",
    ]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_a_crash_at_each_node_boundary_then_rerun_gives_the_same_result(
    tmp_path: Path, boundary: str
) -> None:
    quick = {".fixbot.yml": "gates: {lint: false, types: false}\n"}
    repo = make_repo(tmp_path / "repo", quick)
    with ScriptedOpenAI([wrong(1), GOOD]) as server:
        crashed = _driver(repo, server.base_url, boundary)
        assert crashed.returncode == 9, crashed.stderr
        rerun = _driver(repo, server.base_url, None)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["status"] == "fixed"
    assert len(server.requests) == 2  # no recorded model reply was asked for again
    evidence = json.loads((repo / ".fixbot" / "out" / "evidence.json").read_text())
    assert [a["verdict"] for a in evidence["attempts"]] == ["fail", "pass"]
    assert "return sum(values) / len(values)" in evidence["diff"]
    before = nodes_run(crashed.stderr)
    after = nodes_run(rerun.stderr)
    assert before[-1] == boundary and boundary not in after[:1]  # the finished node is not redone
