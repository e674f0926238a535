"""workflows.py: a workflow file's jobs and steps, named as GitHub shows them."""

from __future__ import annotations

import pytest

from fixbot.forge.github.workflows import (
    WorkflowError,
    may_have_failed,
    parse_workflow,
    steps_named,
)

MATRIX = """\
name: tests
on: [push, pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: ruff check .
      - name: Type check
        run: mypy src
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        python: ["3.11", "3.12"]
        os: [ubuntu-latest, macos-latest]
    defaults:
      run:
        working-directory: .
    steps:
      - name: Install
        run: |
          python -m pip install --upgrade pip
          pip install -e .[test]
      - run: |

          pytest -q
        shell: bash
  docs:
    name: Docs on ${{ matrix.python }}
    strategy:
      matrix:
        python: ["3.12"]
    steps:
      - run: mkdocs build
  call:
    uses: ./.github/workflows/reusable.yml
"""


def test_steps_are_named_as_github_shows_them() -> None:
    workflow = parse_workflow(MATRIX, ".github/workflows/tests.yml")
    assert workflow.name == "tests"
    assert [job.id for job in workflow.jobs] == ["lint", "test", "docs", "call"]
    assert [step.shown for step in workflow.steps] == [
        "Run actions/checkout@v4",
        "Run ruff check .",
        "Type check",
        "Install",
        "Run pytest -q",  # the command's first line that is not blank
        "Run mkdocs build",
    ]
    install = workflow.jobs[1].steps[0]
    assert (install.job, install.number, install.working_directory) == ("test", 1, ".")
    assert workflow.jobs[1].steps[1].shell == "bash"
    assert workflow.jobs[3].uses == "./.github/workflows/reusable.yml"


@pytest.mark.parametrize(
    ("job", "api_name", "shown"),
    [
        (0, "lint", True),
        (0, "lint (3.11)", False),  # not a matrix job
        (1, "test", True),
        (1, "test (3.11, ubuntu-latest)", True),
        (1, "tests (3.11)", False),
        (2, "Docs on 3.12", True),
        (2, "Docs on  3.12", True),  # whitespace as GitHub collapses it
        (2, "docs", False),
        (3, "call / build", True),
    ],
)
def test_a_job_is_known_by_the_name_the_jobs_api_gives(
    job: int, api_name: str, shown: bool
) -> None:
    workflow = parse_workflow(MATRIX, "tests.yml")
    assert workflow.jobs[job].shown_as(api_name) is shown


def test_the_failed_steps_are_found_in_their_job() -> None:
    workflow = parse_workflow(MATRIX, "tests.yml")
    found = steps_named(workflow, "test (3.12, macos-latest)", ["Run pytest -q", "Post Run x"])
    assert [step if isinstance(step, str) else [s.run for s in step] for step in found] == [
        ["\npytest -q\n"],
        "Post Run x",
    ]
    [named] = steps_named(workflow, "lint", ["Type check"])
    assert not isinstance(named, str) and [s.run for s in named] == ["mypy src"]
    # A job the file does not show by that name: its steps are looked for in every job.
    [anywhere] = steps_named(workflow, "renamed", ["Run mkdocs build"])
    assert not isinstance(anywhere, str) and [s.job for s in anywhere] == ["docs"]


def test_the_steps_that_may_have_failed_are_every_step_a_failed_name_could_be() -> None:
    workflow = parse_workflow(MATRIX, "tests.yml")
    lint, test = workflow.jobs[0], workflow.jobs[1]
    [types] = [step for step in lint.steps if step.run == "mypy src"]
    assert may_have_failed(workflow, [("lint", ["Type check"])]) == {types}
    # A failed step the file shows by no name (renamed since): any step of its job may be it.
    assert may_have_failed(workflow, [("lint", ["Typecheck"])]) == set(lint.steps)
    assert may_have_failed(workflow, [("test (3.11, ubuntu-latest)", ["Post Run x"])]) == set(
        test.steps
    )
    assert may_have_failed(workflow, []) == set()
    # A failed job with no step named failed (cut short by a timeout): any of its steps.
    assert may_have_failed(workflow, [("lint", [])]) == set(lint.steps)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("jobs: [1", "not valid YAML at line 1"),
        ("name: x\n", "no `jobs:` mapping"),
        ("jobs:\n  a: 1\n", "job 'a' is not a mapping"),
        ("jobs:\n  a:\n    steps: {run: x}\n", "`steps` is not a list"),
        ("jobs:\n  a:\n    steps: [1]\n", "step 1 is not a mapping"),
    ],
)
def test_a_file_that_is_no_workflow_is_a_usage_error(text: str, says: str) -> None:
    with pytest.raises(WorkflowError, match=r"^ci\.yml: ") as caught:
        parse_workflow(text, "ci.yml")
    assert says in str(caught.value)
