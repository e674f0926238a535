"""A rewrite ask: the functions the failing tests use, their bodies left out, to be written
anew from their signatures and docstrings, the specification the code itself carries.

A small model shown a buggy function tends to send it back as it is (the code reads as right
to it); asked to write the body afresh from its docstring, it writes what the docstring says
(measured side by side: docs/benchmarks.md). Only a top-level function with a docstring and a
body beyond it is rewritten; the rest of the file is shown as it is. The reply is the whole
file, screened and checked like any other: the tests stay the judge.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

from fixbot.prompts.imports import names_used
from fixbot.prompts.sources import Sources, test_definition
from fixbot.records import CheckResult, failing_tests

LEFT_OUT = "...  # the body, left out: write it anew from the docstring"
REWRITTEN_TESTS = 5  # the failing tests whose functions name what to rewrite

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def rewritable(check: CheckResult, tree: Path, files: Sequence[str], path: str) -> tuple[str, ...]:
    """The functions of `path` the failing tests name, in file order, that a rewrite ask can
    leave out: each with a docstring and a body after it. () when there is none."""
    sources = Sources(tree, set(files))
    used: set[str] = set()
    for test_id in failing_tests(check)[:REWRITTEN_TESTS]:
        found = test_definition(test_id, sources)
        used |= names_used(found[1]) if found else set()
    source = sources.get(path)
    if source is None or source.module is None:
        return ()
    return tuple(
        node.name
        for node in source.module.body
        if isinstance(node, _Function) and node.name in used and _body_start(node) is not None
    )


def elided(text: str, names: Sequence[str]) -> str:
    """`text` with the body of each function named (after its docstring) replaced by one
    line that says to write it; a function that cannot be left out stays as it is."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return text
    lines = text.splitlines(keepends=True)
    cuts = []
    for node in module.body:
        if not isinstance(node, _Function) or node.name not in names:
            continue
        start = _body_start(node)
        if start is not None and node.end_lineno is not None:
            cuts.append((start, node.end_lineno, " " * node.body[1].col_offset))
    for start, end, indent in sorted(cuts, reverse=True):
        lines[start - 1 : end] = [f"{indent}{LEFT_OUT}\n"]
    return "".join(lines)


def _body_start(node: _Function) -> int | None:
    """The line the body after the docstring starts on, when there is a docstring, a body
    after it, and the two do not share a line."""
    if ast.get_docstring(node) is None or len(node.body) < 2:
        return None
    docstring, first = node.body[0], node.body[1]
    if docstring.end_lineno is None or first.lineno <= docstring.end_lineno:
        return None
    return first.lineno
