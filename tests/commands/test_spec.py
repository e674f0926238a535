"""commands/spec.py: the kind a command is, read from its words; the checks `checks:` becomes."""

from __future__ import annotations

import shlex

import pytest

from fixbot.commands.spec import InvalidCheck, kind_of, legacy_checks, resolve_checks

KINDS = [
    ("pytest", "pytest"),
    ("pytest -q -x tests/unit", "pytest"),
    ("py.test", "pytest"),
    (".venv/bin/pytest -q", "pytest"),
    ("python -m pytest", "pytest"),
    ("python3.11 -X dev -W error -m pytest -q", "pytest"),
    ("python -mpytest", "pytest"),
    ("coverage run -m pytest", "pytest"),
    ("uv run pytest -q", "pytest"),
    ("uv run --frozen -- pytest", "pytest"),
    ("poetry run python -m pytest", "pytest"),
    ("python -m unittest discover -s tests", "unittest"),
    ("python -m unittest", "unittest"),
    ("ruff check .", "ruff"),
    ("ruff .", "ruff"),
    ("ruff check --output-format=github src", "ruff"),
    ("python -m ruff check .", "ruff"),
    ("ruff check --fix --diff .", "ruff"),
    ("ruff format --check .", "ruff-format"),
    ("ruff format --diff src", "ruff-format"),
    ("python -m ruff format --check .", "ruff-format"),
    ("mypy src", "mypy"),
    ("python -m mypy --strict fixbot", "mypy"),
    ("dmypy run -- src", "mypy"),
    ("python -m build", "command"),
    ("mkdocs build --strict", "command"),
    ("python scripts/check.py", "command"),
    ("python -c 'import pytest'", "command"),
    ("dmypy status", "command"),
    ("exec pytest", "pytest"),
]


@pytest.mark.parametrize(("line", "kind"), KINDS)
def test_the_kind_of_a_command(line: str, kind: str) -> None:
    assert kind_of(shlex.split(line)) == kind


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("ruff format .", "ruff format --check"),
        ("python -m ruff format src", "ruff format --check"),
        ("ruff check --fix .", "without --fix"),
    ],
)
def test_a_command_that_rewrites_the_tree_is_no_check(line: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        kind_of(shlex.split(line))


def test_resolve_checks_says_which_item_and_key() -> None:
    with pytest.raises(InvalidCheck) as caught:
        resolve_checks([{"name": "a", "run": "pytest"}, {"name": "b"}])
    assert (caught.value.index, caught.value.key) == (1, "run")
    with pytest.raises(InvalidCheck) as caught:
        resolve_checks([{"name": "a", "run": "mypy .", "kind": "mypy", "test_timeout_seconds": 5}])
    assert (caught.value.index, caught.value.key) == (0, "test_timeout_seconds")


def test_the_legacy_form_keeps_the_gates_as_gates() -> None:
    [lint, types, tests] = legacy_checks("pytest -x", lint=True, types=True)
    assert (lint.gate, types.gate, tests.gate) == (True, True, False)
    assert (lint.kind, types.kind, tests.kind) == ("ruff", "mypy", "pytest")
    # Today a test command that is not pytest is one test read by its exit code: so it stays.
    [only] = legacy_checks("python -m unittest", lint=False, types=False)
    assert (only.name, only.kind) == ("tests", "command")
    [fmt] = legacy_checks("ruff format .", lint=False, types=False)
    assert fmt.kind == "command"
