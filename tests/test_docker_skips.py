"""`python -m pytest` on a machine without a running Docker engine passes, with the Docker tests
skipped and saying why (in CI, which starts an engine, they run: ENGINE_PROBLEM is None there).

"No engine" is simulated with DOCKER_HOST pointing at a socket that does not exist, in a pytest
subprocess without the CI variable, as on a newcomer's machine.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

TESTS = Path(__file__).resolve().parent
# What starts a Docker engine's container (or asks for the backend) in a test file.
_USES_DOCKER = re.compile(
    r'DockerSandbox\(|docker\.from_env|choose\("docker"|"--sandbox",\s*"docker"'
    r'|\["bwrap", "docker"\]|backend == "docker"'
)
_GUARDS = ("ENGINE_PROBLEM", "docker_or_skip(")


def test_every_test_file_that_uses_docker_skips_without_an_engine() -> None:
    unguarded = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name in ("conftest.py", Path(__file__).name):
            continue
        text = path.read_text(encoding="utf-8")
        if _USES_DOCKER.search(text) and not any(guard in text for guard in _GUARDS):
            unguarded.append(path.relative_to(ROOT).as_posix())
    assert unguarded == [], "use tests.conftest.ENGINE_PROBLEM or docker_or_skip() in these"


def test_without_a_docker_engine_the_docker_tests_skip_saying_why() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    env["DOCKER_HOST"] = "unix:///nonexistent/docker.sock"
    selected = [
        "tests/sandbox/test_docker_sandbox.py",
        "tests/checks/prepare/test_prepare.py::test_a_failing_setup_leaves_nothing_cached",
        "tests/cli/test_fix.py::test_fixed_end_to_end_in_the_docker_sandbox",
        "-k",
        "docker",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *selected],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    skipped = re.search(r"(\d+) skipped", output)
    assert skipped and int(skipped.group(1)) >= 3, output[-3000:]
    assert "passed" not in output.splitlines()[-1], output[-1000:]  # nothing ran against Docker
    assert "no Docker engine" in output
    assert "error" not in output.splitlines()[-1]
