"""commands/shell.py: a script split into its command lines, and what only a shell understands."""

from __future__ import annotations

import pytest

from fixbot.commands.shell import Line, command_lines, shell_construct

SCRIPT = """\
#!/usr/bin/env bash
# a comment
set -euo pipefail

ruff check \\
    src tests
if [ -n "$CI" ]; then
    pytest -q   # inside the block: not a command of its own
fi
for x in a b; do echo "$x"; done
cat > notes.txt <<'END'
pytest --this-is-data
END
deploy() {
    twine upload dist/*
}
python -c "
import sys
"
ls |
  wc -l
mypy src  # the end
"""


def test_a_script_is_split_into_its_commands() -> None:
    lines = command_lines(SCRIPT)
    assert [(line.number, line.why) for line in lines] == [
        (3, ""),
        (5, ""),
        (7, "a multi-line if block"),
        (10, ""),
        (11, "a heredoc"),
        (14, "a multi-line { } block"),
        (17, "a quoted string across lines"),
        (20, "a command across lines"),
        (22, ""),
    ]
    assert lines[1].text == "ruff check  src tests"  # a continuation is one line
    assert lines[-1] == Line(22, "mypy src  # the end")
    assert not any("this-is-data" in line.text for line in lines)


def test_a_case_block_is_one_line() -> None:
    script = 'case "$1" in\n  fast) pytest -x ;;\n  *) pytest ;;\nesac\nmypy .\n'
    assert [(line.number, line.why) for line in command_lines(script)] == [
        (1, "a multi-line case block"),
        (5, ""),
    ]


def test_an_unclosed_block_runs_to_the_end() -> None:
    [line] = command_lines("if true; then\n  pytest\n")
    assert line.why == "a multi-line if block"


@pytest.mark.parametrize(
    ("text", "construct"),
    [
        ("pytest -q", ""),
        ("pytest -k 'a or b' # trailing comment | not a pipe", ""),
        ("pip install -e .[test]", ""),  # brackets: the shell leaves them when nothing matches
        ("pytest | tee log", "a pipe"),
        ("ruff check . && mypy .", "&&"),
        ("pytest || true", "||"),
        ("cd src; pytest", "a ;"),
        ("pytest > out.txt", "a redirection"),
        ("pytest 2>&1", "a redirection"),
        ("pytest &", "a background &"),
        ("echo $HOME", "a variable, $HOME"),
        ('echo "${PYTHON:-python}"', "a variable, ${PYTHON:-python}"),
        ("echo '$HOME'", ""),  # single quotes: literal
        ("pytest $(cat tests.txt)", "a command substitution"),
        ("pytest `cat tests.txt`", "a command substitution"),
        ("ruff check src/*.py", "a glob"),
        ("pytest ~/tests", "a ~ home directory"),
        ("! pytest", "a ! negation"),
        ("(cd src && pytest)", "a subshell"),
        ('pytest -k "not \\"slow\\""', ""),
    ],
)
def test_shell_constructs_are_named(text: str, construct: str) -> None:
    assert shell_construct(text) == construct
