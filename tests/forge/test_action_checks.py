"""`fixbot action` and what the CI runs: a failed run's failed steps become the run's checks
(from the trusted checkout's workflow file; its other ruff and mypy steps are gates), the
default branch gets a PR against it, and the never-fix globs come from the input and the
config, one list. The World harness: real git, a real event file, PyGithub over HTTP to the
fake GitHub, a canned fix runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fixbot.checks.trial import reader
from fixbot.cli.action import run_config
from fixbot.config import checks_of
from tests.fake_github import FakeJob
from tests.forge.conftest import BROKEN, FIXED, Runner, World, canned, git

WORKFLOW = """\
name: test
on: [push, pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: ruff check .
      - name: Types
        run: mypy src
  test:
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - name: Install
        run: pip install -e .[test]
      - run: pytest -q
      - name: Report
        run: pytest --cov | tee coverage.txt
      - uses: codecov/codecov-action@v4
"""
# The PR head's copy, which must never be read: what it runs is the head's business.
HOSTILE = WORKFLOW.replace("run: pytest -q", "run: python -c 'import os; os.system(\"id\")'")


def commit(world: World, files: dict[str, str], *, branch: str = "main") -> str:
    """Commit `files` on `branch` of the runner's checkout, push it, and come back to main."""
    work = world.workspace
    git(work, "checkout", "-q", branch)
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    git(work, "add", "-A")
    git(work, "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "change")
    git(work, "push", "-q", "origin", branch)
    sha = git(work, "rev-parse", "HEAD").strip()
    git(work, "checkout", "-q", "main")
    return sha


def jobs(*failing: tuple[str, list[tuple[str, str]]]) -> list[FakeJob]:
    return [FakeJob(name, "failure", steps) for name, steps in failing]


def register(world: World, payload: Any, failing: list[FakeJob]) -> None:
    run = payload["workflow_run"]
    world.fake.add_run(run["id"], run["head_sha"], run["head_branch"], failing)


def evidence(world: World, run: Any) -> dict[str, Any]:
    folder = Path(run.outputs["diff-path"]).parent if run.outputs["diff-path"] else None
    assert folder is not None
    data: dict[str, Any] = json.loads((folder / "evidence.json").read_text())
    return data


# --- failed steps -> checks -----------------------------------------------------------------


def test_the_failed_steps_become_the_runs_checks(world: World) -> None:
    commit(world, {".github/workflows/test.yml": WORKFLOW})
    commit(world, {".github/workflows/test.yml": HOSTILE}, branch="feature")
    payload = world.failed_run()
    payload["workflow_run"]["head_sha"] = world.fake.branch_sha("feature")
    world.failing_sha = payload["workflow_run"]["head_sha"]
    register(
        world,
        payload,
        jobs(
            ("lint", [("Run actions/checkout@v4", "success"), ("Run ruff check .", "failure"),
                      ("Types", "skipped")]),
            ("test (3.11)", [("Install", "success"), ("Run pytest -q", "failure"),
                             ("Report", "failure"), ("Run codecov/codecov-action@v4", "failure")]),
            ("test (3.12)", [("Install", "success"), ("Run pytest -q", "failure")]),
        ),
    )  # fmt: skip
    runner = Runner()
    run = world.run("workflow_run", payload, fix=runner)
    assert run.code == 0, run.logs
    [job] = runner.jobs
    # From main's workflow file (the trusted checkout), each failed command once, as argv; then
    # the file's ruff and mypy steps that did not fail (mypy was skipped after ruff failed), as
    # "no new findings" gates: the PR's CI runs them too.
    assert [(c.name, c.run, c.kind, c.gate) for c in job.checks] == [
        ("lint", "ruff check .", "ruff", False),
        ("tests", "pytest -q", "pytest", False),
        ("types", "mypy src", "mypy", True),
    ]
    assert "os.system" not in json.dumps([c.run for c in job.checks])
    # The fix runs them as the config's checks for this run.
    config = run_config(world.workspace, job)
    assert checks_of(config, reader(world.workspace)) == job.checks
    # What failed and was not run is named, in the evidence, the PR and the summary.
    not_run = [(e["job"], e["step"], e["command"]) for e in evidence(world, run)["steps_not_run"]]
    assert not_run == [
        ("test (3.11)", "Report", "pytest --cov | tee coverage.txt"),
        ("test (3.11)", "Run codecov/codecov-action@v4", "codecov/codecov-action@v4"),
    ]
    [pr] = world.fake.fixbot_pulls()
    for text in (pr.body, run.summary):
        assert "### CI steps fixbot did not run" in text
        assert "| `test (3.11)` | `Report` | `pytest --cov \\| tee coverage.txt` |" in text
        assert "needs a shell (a pipe)" in text
    assert '"ci_checks"' in run.logs


def checks_for(
    world: World, workflow: str, *failing: tuple[str, list[tuple[str, str]]]
) -> list[tuple[str, str, str, bool]]:
    commit(world, {".github/workflows/test.yml": workflow})
    payload = world.failed_run()
    register(world, payload, jobs(*failing))
    runner = Runner()
    run = world.run("workflow_run", payload, fix=runner)
    assert run.code == 0, run.logs
    [job] = runner.jobs
    return [(c.name, c.run, c.kind, c.gate) for c in job.checks]


def test_a_failed_step_the_file_names_otherwise_makes_no_gate_of_its_job(world: World) -> None:
    """Found by the red team: the run's step "Typecheck" is "Types" in the trusted file now;
    it may be any step of its job, so none of them is a mere gate."""
    checks = checks_for(
        world,
        WORKFLOW,
        ("lint", [("Run ruff check .", "success"), ("Typecheck", "failure")]),
        ("test (3.11)", [("Install", "success"), ("Run pytest -q", "failure")]),
    )
    assert checks == [("tests", "pytest -q", "pytest", False)]


def test_the_step_a_job_timeout_stopped_is_a_failed_step(world: World) -> None:
    """Found by the second red team: a job that timed out names no step "failure" (the step
    its timeout stopped is "cancelled"): that step is a failed one (a check that must pass),
    never a mere gate; the step that passed before it stays a gate."""
    checks = checks_for(
        world,
        WORKFLOW,
        ("lint", [("Run ruff check .", "success"), ("Types", "cancelled")]),
        ("test (3.11)", [("Install", "success"), ("Run pytest -q", "failure")]),
    )
    assert checks == [
        ("types", "mypy src", "mypy", False),
        ("tests", "pytest -q", "pytest", False),
        ("lint", "ruff check .", "ruff", True),
    ]


SHARED_NAMES = """\
name: test
on: [push, pull_request]
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Check
        run: pytest -q
      - name: Check
        run: mypy src
"""


def test_steps_that_share_a_failed_name_are_all_checks_that_must_pass(world: World) -> None:
    """Found by the red team: two steps named "Check" failed; each may be either, so both
    commands are checks that must pass, neither a gate."""
    both = ("check", [("Check", "failure"), ("Check", "failure")])
    checks = checks_for(world, SHARED_NAMES, both)
    assert checks == [("tests", "pytest -q", "pytest", False), ("types", "mypy src", "mypy", False)]


def test_a_config_that_names_its_checks_keeps_them(world: World) -> None:
    commit(world, {".github/workflows/test.yml": WORKFLOW, ".fixbot.yml": "test_command: pytest\n"})
    payload = world.failed_run()
    register(world, payload, jobs(("lint", [("Run ruff check .", "failure")])))
    runner = Runner()
    run = world.run("workflow_run", payload, fix=runner)
    assert run.code == 0, run.logs
    [job] = runner.jobs
    assert job.checks == ()
    assert [c.run for c in checks_of(run_config(world.workspace, job), reader(world.workspace))][
        -1
    ] == "pytest"
    assert evidence(world, run)["steps_not_run"] == []


def test_failed_steps_the_workflow_file_does_not_show_are_named(world: World) -> None:
    commit(world, {".github/workflows/test.yml": WORKFLOW})
    payload = world.failed_run()
    register(world, payload, jobs(("lint", [("Run something renamed", "failure")])))
    runner = Runner()
    run = world.run("workflow_run", payload, fix=runner)
    assert runner.jobs[0].checks == ()  # the config's own (legacy) checks apply
    [entry] = evidence(world, run)["steps_not_run"]
    assert entry["step"] == "Run something renamed"
    assert entry["why"] == "no step of .github/workflows/test.yml is shown by this name"


def test_without_the_workflow_file_in_the_checkout_the_steps_are_named(world: World) -> None:
    payload = world.failed_run()
    register(world, payload, jobs(("lint", [("Run ruff check .", "failure")])))
    runner = Runner()
    run = world.run("workflow_run", payload, fix=runner)
    assert run.code == 0 and runner.jobs[0].checks == ()
    [entry] = evidence(world, run)["steps_not_run"]
    assert "(.github/workflows/test.yml) is not in the checkout" in entry["why"]


# --- the default branch ---------------------------------------------------------------------


def test_a_default_branch_failure_opens_one_pr_against_it(world: World) -> None:
    failing = commit(world, {"calc.py": BROKEN})
    world.failing_sha = failing
    payload = world.failed_run(branch="main")
    payload["workflow_run"]["pull_requests"] = []  # a push to main: no pull request
    runner = Runner()
    first = world.run("workflow_run", payload, fix=runner)
    assert first.code == 0, first.logs
    assert [job.commit for job in runner.jobs] == [failing]
    [pr] = world.fake.fixbot_pulls()
    assert (pr.base_ref, pr.state) == ("main", "open")
    assert pr.head_ref.startswith("fixbot/fix-") and pr.head_ref != "main"
    assert world.branch_file(pr.head_ref, "calc.py") == FIXED
    # fixbot never pushes to the default branch itself.
    assert world.fake.branch_sha("main") == failing
    assert not any("main" in argv[-1:] for argv in world.argv_seen if "push" in argv)
    # The same failure again: still the one PR.
    second = world.run("workflow_run", payload, fix=runner)
    assert second.code == 0 and len(world.fake.fixbot_pulls()) == 1
    assert second.outputs["pr-number"] == first.outputs["pr-number"]


# --- never-fix: the input and the config, one rule ------------------------------------------


def test_the_configs_never_fix_branches_join_the_input(world: World) -> None:
    commit(world, {".fixbot.yml": "never_fix_branches: ['feat*']\n"})
    runner = Runner()
    run = world.run("workflow_run", world.failed_run(), fix=runner)
    assert (run.outputs["status"], runner.jobs) == ("skipped", [])
    assert "matches the never-fix pattern 'feat*'" in run.logs
    assert world.fake.requests == []
    # The input's globs still count beside the config's.
    other = world.run("workflow_run", world.failed_run(branch="release/1"), FIXBOT_NEVER_FIX="rel*")
    assert other.outputs["status"] == "skipped" and runner.jobs == []


def test_the_configs_never_fix_branches_apply_to_a_fix_comment(world: World) -> None:
    commit(world, {".fixbot.yml": "never_fix_branches: [feature]\n"})
    runner = Runner()
    run = world.run("issue_comment", world.comment("/fix"), fix=runner)
    assert (run.outputs["status"], runner.jobs) == ("skipped", [])
    assert "never-fix pattern 'feature'" in run.logs


def test_a_refused_config_is_the_fixs_error_to_report(world: World) -> None:
    """As before never_fix_branches: the config's error is the run's result, published."""
    commit(world, {".fixbot.yml": "never_fix_branches: feature\n"})
    runner = Runner(lambda job: canned(job, config=dict(vars(run_config(world.workspace, job)))))
    run = world.run("workflow_run", world.failed_run(), fix=runner)
    assert '"config_refused"' in run.logs
    assert (run.code, run.outputs["status"]) == (2, "error")
    [comment] = world.fake.comments_on(world.source_pr)
    # The reason is untrusted text, shown inert: Markdown's own characters escaped.
    assert "never\\_fix\\_branches" in comment.body
    assert "expected a list of strings" in comment.body
