"""A red default branch through the real `fixbot action`: the CLI, git with a bare `origin`, the
bubblewrap sandbox, PyGithub over HTTP to the fake GitHub, the scripted model. One fix PR
against the default branch, never a push to it; the failed run's failed step is the run's
check (the trusted workflow file's `run:` line, as argv), and the piped one is named; a ruff
step that passed is a "no new findings" gate."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_checks import SLOPPY
from tests.conftest import EXAMPLE
from tests.fake_github import FakeGitHub, FakeJob, make_origin
from tests.fake_openai import ScriptedOpenAI
from tests.fakes import GOOD
from tests.forge.conftest import REPO, TOKEN, World
from tests.forge.test_action_resume import act

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

WORKFLOW = """\
name: test
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: python -m pytest -q
      - name: Coverage
        run: python -m pytest -q | tee coverage.txt
"""


@contextmanager
def red_main(tmp_path: Path, workflow: str) -> Iterator[World]:
    """The example, broken on main itself (a push to the default branch turned it red), with
    this workflow file."""
    files = {str(p.relative_to(EXAMPLE)): p.read_text() for p in EXAMPLE.rglob("*") if p.is_file()}
    made = make_origin(tmp_path, {**files, ".github/workflows/test.yml": workflow})
    with FakeGitHub(made.bare, repository=REPO, token=TOKEN) as fake:
        yield World(tmp_path, fake, made.bare, made.workspace, made.commits["main"], 0)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with red_main(tmp_path, WORKFLOW) as made:
        yield made


def failed_on_main(world: World, *jobs: FakeJob) -> Any:
    """A push's failed run on main (no pull request), its jobs as the API shows them."""
    payload = world.failed_run(branch="main")
    payload["workflow_run"]["pull_requests"] = []
    run = payload["workflow_run"]
    world.fake.add_run(run["id"], run["head_sha"], "main", list(jobs))
    return payload


def test_a_red_default_branch_gets_one_pr_against_it(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    payload = world.failed_run(branch="main")
    payload["workflow_run"]["pull_requests"] = []  # a push: no pull request to comment on
    run = payload["workflow_run"]
    steps = [("Run python -m pytest -q", "failure"), ("Coverage", "failure")]
    world.fake.add_run(run["id"], run["head_sha"], "main", [FakeJob("test", "failure", steps)])
    with ScriptedOpenAI([GOOD]) as server:
        done = act(world, capsys, server, "workflow_run", payload)
    assert done.code == 0, done.logs
    assert done.evidence["status"] == "fixed"
    [pr] = world.fake.fixbot_pulls()
    assert (pr.base_ref, pr.state) == ("main", "open") and pr.head_ref.startswith("fixbot/fix-")
    assert world.fake.branch_sha("main") == world.failing_sha  # never pushed to
    # The failed step is the run's check, from the trusted workflow file; the piped one is named.
    assert [(c["name"], c["run"], c["kind"]) for c in done.evidence["config"]["checks"]] == [
        ("tests", "python -m pytest -q", "pytest")
    ]
    [not_run] = done.evidence["steps_not_run"]
    assert (not_run["step"], not_run["command"]) == (
        "Coverage",
        "python -m pytest -q | tee coverage.txt",
    )
    assert "### CI steps fixbot did not run" in pr.body


# The CI also runs ruff, in a job of its own that passed: the PR's CI runs it again, so a fix
# that adds a ruff finding would turn it red. It is the run's "no new findings" gate, though the
# repository configures no ruff (ruff's defaults, as the CI runs it).
FAILED_TESTS = [("Run python -m pytest -q", "failure")]
LINTED = WORKFLOW.replace(
    "jobs:\n",
    "jobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - run: ruff check .\n",
)


def test_the_ci_s_passing_ruff_step_is_a_gate_a_fix_must_not_break(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with red_main(tmp_path, LINTED) as world, ScriptedOpenAI([SLOPPY, GOOD]) as server:
        passed = FakeJob("lint", "success", [("Run ruff check .", "success")])
        payload = failed_on_main(world, passed, FakeJob("test", "failure", FAILED_TESTS))
        done = act(world, capsys, server, "workflow_run", payload)
    assert done.code == 0, done.logs
    checks = done.evidence["config"]["checks"]
    assert [(c["name"], c["run"], c["kind"], c["gate"]) for c in checks] == [
        ("tests", "python -m pytest -q", "pytest", False),
        ("lint", "ruff check .", "ruff", True),
    ]
    first, second = done.evidence["attempts"]
    assert first["verdict"] == "fail"
    assert any(p.startswith("new ruff error calc.py:") for p in first["problems"]), first
    assert second["verdict"] == "pass" and done.evidence["status"] == "fixed"
    assert "import sys" not in done.evidence["diff"]


# The CI runs a bare `mypy` (its targets in a configuration this checkout lacks): fixbot's mypy
# cannot run it on the failing commit ("Missing target module"). A gate that cannot run guards
# nothing and is no reason to stop before the model is asked: it is set aside, and said so.
TYPED = WORKFLOW.replace(
    "jobs:\n", "jobs:\n  types:\n    runs-on: ubuntu-latest\n    steps:\n      - run: mypy\n"
)


def test_a_ci_gate_that_cannot_run_at_baseline_is_set_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with red_main(tmp_path, TYPED) as world, ScriptedOpenAI([GOOD]) as server:
        passed = FakeJob("types", "success", [("Run mypy", "success")])
        payload = failed_on_main(world, passed, FakeJob("test", "failure", FAILED_TESTS))
        done = act(world, capsys, server, "workflow_run", payload)
        [pr] = world.fake.fixbot_pulls()
    assert done.code == 0, done.logs
    [aside] = done.evidence["baseline"]["set_aside"]
    assert (aside["name"], aside["status"], aside["gate"]) == ("types", "error", True)
    assert [c["name"] for c in done.evidence["baseline"]["checks"]] == ["tests"]
    assert [a["verdict"] for a in done.evidence["attempts"]] == ["pass"]
    assert [c["name"] for c in done.evidence["verification"]["checks"]] == ["tests"]
    assert "set aside: it could not run on the failing commit" in pr.body
