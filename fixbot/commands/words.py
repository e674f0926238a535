"""A command's words, split as a shell splits them and never run by one: the one rule every
command fixbot reads goes through (a check's `run`, a legacy `test_command`, a setup command).

    split_words(command)   the words (shlex's), or ValueError naming why there are none
    setup_words(command)   (its own VAR=value environment, its argv); ValueError, saying what to
                           write instead, for what only a shell could run
"""

from __future__ import annotations

import re
import shlex

from fixbot.commands.shell import shell_construct

_CHAINS = frozenset({"&&", "||", "a ;", "a background &"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def split_words(command: str) -> list[str]:
    """The command's words as a shell would split them; ValueError when it cannot be split
    (an open quote) or is only whitespace."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise ValueError(f"cannot be split into words like a shell command: {exc}") from None
    if not words:
        raise ValueError("must be a command, got only whitespace")
    return words


def setup_words(command: str) -> tuple[dict[str, str], list[str]]:
    """One setup command as (its own environment, its argv): split like a shell command, its
    leading VAR=value words setting that command's environment, as a shell's would. Raise
    ValueError, saying what to write instead, for what only a shell could run."""
    construct = shell_construct(command)
    if construct:
        instead = (
            "write each command as one item of a list "
            "(setup_command: [first command, second command])"
            if construct in _CHAINS
            else "run a script of the repository's that does it"
        )
        raise ValueError(
            f"{command!r} has {construct}, which only a shell understands, but setup_command "
            f"is never run by a shell: {instead}"
        )
    words = split_words(command)
    env: dict[str, str] = {}
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if not words:
        raise ValueError(f"{command!r} names no command to run")
    return env, words
