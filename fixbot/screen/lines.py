"""Which lines of each file a canonical diff adds (the only ones screened), and which paths are
tests."""

from __future__ import annotations

import re

from fixbot.edits import FileChange, header_path

_HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_LONE_CR = re.compile(r"\r(?!\n)")


def split_lines(text: str) -> list[str]:
    """Lines as the canonical diff counts them: split at "\n" only, like Python's tokenizer
    (str.splitlines would also split at \f)."""
    return text.split("\n")


def added_lines(diff: str) -> dict[str, frozenset[int]]:
    """Per file, the numbers of the new file's lines that a canonical diff adds (its + lines)."""
    found: dict[str, set[int]] = {}
    added: set[int] | None = None
    number = 0
    for line in diff.split("\n"):
        if (path := header_path(line)) is not None:
            added = found.setdefault(path, set())
            number = 0
        elif (hunk := _HUNK.match(line)) and added is not None:
            number = int(hunk[1])
        elif number and added is not None and line[:1] in (" ", "+"):
            if line[:1] == "+":
                added.add(number)
            number += 1
    return {path: frozenset(lines) for path, lines in found.items()}


def reviewed_lines(change: FileChange, by_path: dict[str, frozenset[int]]) -> frozenset[int]:
    """What to review in `change`: its added lines; every line where the numbering is unsure
    (no section in the diff, or a lone \r, which Python counts as a line break)."""
    assert change.new is not None
    if change.path not in by_path or _LONE_CR.search(change.new):
        return frozenset(range(1, len(split_lines(change.new)) + 1))
    return by_path[change.path]


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (
        any(p in ("tests", "test") for p in parts[:-1])
        or name == "conftest.py"
        or name.startswith("test_")
        or name.endswith("_test.py")
    )
