"""Whether an edit leaves a file's code as it was: a reply refused as no change is never run."""

from __future__ import annotations

import ast
import builtins
import re

from fixbot.edits.syntax import DEFINITION


def same_code(new: str, old: str, path: str) -> bool:
    """Whether an edit leaves the code as it was, but for trailing whitespace and blank lines
    at its ends: a model that sends a file back with a newline added changed nothing. So are
    star imports it adds above the code as it was (`from typing import *`, a small model's
    habit: HumanEval's files open with such lines), where they can bring nothing the code
    uses: a module that uses no name it does not bind, not a package's `__init__.py` (whose
    star imports re-export), absolute imports only."""
    before = [line.rstrip() for line in old.strip("\n").splitlines()]
    after = [line.rstrip() for line in new.strip("\n").splitlines()]
    if after == before:
        return True
    if path.rpartition("/")[2] == "__init__.py" or _free_names(old) != set():
        return False
    had = set(before)
    kept = [line for line in after if line in had or not _STAR_IMPORT.match(line)]
    return [line for line in kept if line] == [line for line in before if line]


_STAR_IMPORT = re.compile(r"^from\s+[A-Za-z_][\w.]*\s+import\s+\*\s*(?:#.*)?$")


def _free_names(content: str) -> set[str] | None:
    """The names a module reads and never binds (not a builtin, an import, a definition, a
    parameter or any assignment anywhere in it); None when it does not parse. A module whose
    code reads none has no use for a name a star import would bring."""
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    bound = set(dir(builtins)) | _MODULE_NAMES
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, DEFINITION):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound |= set(node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return read - bound


_MODULE_NAMES = {"__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__"}
_MODULE_NAMES |= {"__builtins__", "__path__", "__annotations__", "__dict__", "__debug__"}
