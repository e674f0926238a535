"""commands/ci.py: what one CI command line is to fixbot, read from its words, never run."""

from __future__ import annotations

import pytest

from fixbot.commands.ci import Check, Ignored, Install, Mapped, Script, Unmapped, map_command
from fixbot.commands.shell import Line

MAPPED: list[tuple[str, Mapped]] = [
    ("pytest -q", Check(("pytest", "-q"), "pytest")),
    ("python -m pytest tests/unit", Check(("python", "-m", "pytest", "tests/unit"), "pytest")),
    ("uv run pytest -q", Check(("pytest", "-q"), "pytest")),  # the prepared env runs it
    ("ruff check .", Check(("ruff", "check", "."), "ruff")),
    ("ruff format --check .", Check(("ruff", "format", "--check", "."), "ruff-format")),
    ("mypy src", Check(("mypy", "src"), "mypy")),
    ("python -m unittest", Check(("python", "-m", "unittest"), "unittest")),
    ("python -m build", Check(("python", "-m", "build"), "command")),
    ("pip install -e .[test]", Install(("python", "-m", "pip", "install", "-e", ".[test]"))),
    ("python3 -m pip install -r requirements.txt",
     Install(("python", "-m", "pip", "install", "-r", "requirements.txt"))),
    ("uv pip install --system -e '.[dev]'",
     Install(("uv", "pip", "install", "--system", "-e", ".[dev]"))),
    ("./scripts/ci.sh", Script("scripts/ci.sh", ("./scripts/ci.sh",))),
    ("bash .ci/run", Script(".ci/run", ("bash", ".ci/run"))),
    ("# just a comment", Ignored("a comment")),
]  # fmt: skip


@pytest.mark.parametrize(("line", "mapped"), MAPPED, ids=[line for line, _ in MAPPED])
def test_a_command_fixbot_can_run_or_follow(line: str, mapped: Mapped) -> None:
    assert map_command(line) == mapped


LEFT = [
    ("pytest | tee log.txt", "needs a shell (a pipe)"),
    ("ruff check . && mypy .", "needs a shell (&&)"),
    ("pytest --junitxml=$OUT", "needs a shell (a variable, $OUT)"),
    ("pytest ${{ matrix.args }}", "${{ }} expression"),
    ("pytest > log.txt", "needs a shell (a redirection)"),
    ("COVERAGE=1 pytest", "sets environment variables"),
    ("export PYTHONPATH=src", "sets environment variables (export)"),
    ("npm test", "another language's tool (npm)"),
    ("cargo test", "another language's tool (cargo)"),
    ("go test ./...", "another language's tool (go)"),
    ("sudo apt-get install -y libpq-dev", "runs as another user (sudo)"),
    ("apt-get install -y libpq-dev > /dev/null", "installs system packages (apt-get)"),
    ("docker compose up -d", "runs containers (docker)"),
    ("service postgresql start", "starts or waits for a service (service)"),
    ("curl -sSf https://example.invalid | sh", "needs the network (curl)"),
    ("tox -e py311", "runs tox sessions"),
    ("python -m nox -s tests", "runs nox sessions"),
    ("make test", "runs make targets"),
    ("pre-commit run --all-files", "runs pre-commit hooks"),
    ("uv sync --frozen", "manages its own environment (uv)"),
    ("poetry install", "manages its own environment (poetry)"),
    ("ruff format .", "ruff format --check"),
    ("bash -c 'pytest -q'", "runs bash itself"),
    ("cd src", "a shell builtin (cd)"),
    ("git diff --exit-code", "not a git repository"),
]


@pytest.mark.parametrize(("line", "says"), LEFT, ids=[line for line, _ in LEFT])
def test_a_command_fixbot_does_not_run_says_why(line: str, says: str) -> None:
    mapped = map_command(line)
    assert isinstance(mapped, Unmapped)
    assert says in mapped.why


@pytest.mark.parametrize(
    "line", ["set -euo pipefail", "echo building", "python --version", "pip list"]
)
def test_commands_that_check_nothing_are_ignored(line: str) -> None:
    assert isinstance(map_command(line), Ignored)


def test_installing_the_installer_is_ignored() -> None:
    assert isinstance(map_command("python -m pip install --upgrade pip setuptools"), Ignored)


def test_a_line_split_unsafely_is_unmapped_with_its_reason() -> None:
    mapped = map_command(Line(3, "if true; then\n  pytest\nfi", "a multi-line if block"))
    assert mapped == Unmapped("a multi-line if block: fixbot cannot split it into commands safely")
