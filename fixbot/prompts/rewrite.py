"""A rewrite ask: the functions the failing tests use, their bodies left out, to be written
anew from their specification, wherever the code carries it: the signature, the docstring, the
comment block above the function, the module's docstring, and what the failing tests assert
(shown with the ask).

A small model shown a buggy function tends to send it back as it is (the code reads as right
to it); asked to write the body afresh from what specifies it, it writes what that says
(measured side by side: docs/benchmarks.md). Only a top-level function whose body starts on a
line of its own (after its docstring, if it has one) is rewritten; the rest of the file, the
comments and docstrings included, is shown as it is. The reply is the whole file, screened and
checked like any other: the tests stay the judge.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

from fixbot.prompts.imports import names_used
from fixbot.prompts.sources import Sources, test_definition
from fixbot.records import CheckResult, failing_tests

LEFT_OUT = "...  # the body, left out: write it anew from the specification"
REWRITTEN_TESTS = 5  # the failing tests whose functions name what to rewrite

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def rewritable(check: CheckResult, tree: Path, files: Sequence[str], path: str) -> tuple[str, ...]:
    """The functions of `path` the failing tests name, in file order, that a rewrite ask can
    leave out: each with a body on lines of its own. () when there is none."""
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
    """`text` with the body of each function named (after its docstring, if any) replaced by
    one line that says to write it; a function that cannot be left out stays as it is."""
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
            cuts.append((start, node.end_lineno, " " * _first_statement(node).col_offset))
    for start, end, indent in sorted(cuts, reverse=True):
        lines[start - 1 : end] = [f"{indent}{LEFT_OUT}\n"]
    return "".join(lines)


def _first_statement(node: _Function) -> ast.stmt:
    """The body's first statement after the docstring (the docstring when it is all)."""
    has_docstring = ast.get_docstring(node) is not None
    return node.body[1] if has_docstring and len(node.body) > 1 else node.body[0]


def _body_start(node: _Function) -> int | None:
    """The line the body starts on (after the docstring, if any), when there is one and it
    shares no line with the signature or the docstring."""
    has_docstring = ast.get_docstring(node) is not None
    if has_docstring and len(node.body) < 2:
        return None  # the docstring is the whole body
    first = _first_statement(node)
    # a statement cannot start inside the signature: only a one-line `def f(): ...` shares one
    before = node.body[0].end_lineno if has_docstring else node.lineno
    if before is None or first.lineno <= before:
        return None
    return first.lineno
