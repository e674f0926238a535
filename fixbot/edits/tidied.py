"""A code block as the file will hold it: what the reply copied in to try itself dropped (an
import of the module from itself, the asserts, calls, tests and `__main__` block it adds to a
source file), what it left out that the file had kept (a function's docstring, the file's
imports)."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from fixbot.edits.syntax import is_docstring, is_function, is_import


def tidied(body: str, old_tree: ast.Module, content: str, own: Sequence[str]) -> str:
    """`body` (a block for the file `content`, whose tree is `old_tree`, imported as the
    module names `own`) without the reply's tries, with the docstrings it left out; raises
    SyntaxError (and the like) where a step does not parse."""
    body = _without_lines(body, _self_imports(ast.parse(body), own))
    if not _is_test_module(own):
        body = _without_lines(body, _demonstrations(ast.parse(body), old_tree))
    return _docstrings_kept(body, ast.parse(body), old_tree, content)


def module_names(path: str) -> list[str]:
    """The names a Python file is imported by: `pkg/mod.py` -> pkg.mod (and mod, for a
    `src/` layout or a tests' path setting)."""
    dotted = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return list(dict.fromkeys([dotted, dotted.removeprefix("src.")]))


def _self_imports(tree: ast.Module, own: Sequence[str]) -> list[ast.stmt]:
    """The top-level imports of the module itself: never a fix, always an import cycle."""
    found: list[ast.stmt] = []
    for node in tree.body:
        if (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in own) or (
            isinstance(node, ast.Import) and any(a.name in own for a in node.names)
        ):
            found.append(node)
    return found


def _is_test_module(own: Sequence[str]) -> bool:
    """Whether the module is a test module by its name (test_x, x_test, conftest)."""
    leaf = own[0].rsplit(".", 1)[-1] if own else ""
    return leaf.startswith("test_") or leaf.endswith("_test") or leaf == "conftest"


def _demonstrations(tree: ast.Module, old_tree: ast.Module) -> list[ast.stmt]:
    """What a reply adds at the top level of a source file to try its fix out, which the
    file did not have: asserts, bare calls (`print(f(2))`), test functions, a `__main__`
    block. Tests belong in the test files; run at import, these would break the module."""
    had = {ast.dump(node) for node in old_tree.body}
    return [
        node
        for node in tree.body
        if ast.dump(node) not in had
        and (
            isinstance(node, ast.Assert)
            or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call))
            or (is_function(node) and node.name.startswith("test"))
            or _is_main_block(node)
        )
    ]


def _is_main_block(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


def _without_lines(text: str, nodes: Sequence[ast.stmt]) -> str:
    """The text without the lines of `nodes` (and the blank and comment lines that then end
    it: what introduced them)."""
    if not nodes:
        return text
    lines = text.splitlines(keepends=True)
    for node in sorted(nodes, key=lambda n: n.lineno, reverse=True):
        del lines[node.lineno - 1 : node.end_lineno or node.lineno]
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
        lines.pop()
    return "".join(lines).rstrip("\n") + "\n"


def _docstrings_kept(body: str, new_tree: ast.Module, old_tree: ast.Module, content: str) -> str:
    """The body with each top-level function's docstring put back where the model's version
    of the function left it out (the docstring is the specification; dropping it is noise)."""
    old_docs = {
        node.name: node.body[0]
        for node in old_tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _docstring_of(node)
    }
    old_lines = content.splitlines(keepends=True)
    lines = body.splitlines(keepends=True)
    for node in sorted(new_tree.body, key=lambda n: n.lineno, reverse=True):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        doc = old_docs.get(node.name)
        first = node.body[0]
        if doc is None or _docstring_of(node) or first.col_offset != doc.col_offset:
            continue
        if first.lineno == node.lineno or doc.end_lineno is None:
            continue  # `def f(): return 1` on one line: nowhere to put it
        lines[first.lineno - 1 : first.lineno - 1] = old_lines[doc.lineno - 1 : doc.end_lineno]
    return "".join(lines)


def _docstring_of(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    first = node.body[0]
    return (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )


def with_imports(body: str, new_tree: ast.Module, old_tree: ast.Module, content: str) -> str:
    """A whole-file body with the file's own imports that it left out put back: a model that
    rewrites a file often drops a line at its top, which no fix needs."""
    missing = new_imports(new_tree, old_tree, content)
    if not missing:
        return body
    lines = body.splitlines(keepends=True)
    at = import_point(new_tree)
    lines[at:at] = [f"{line}\n" for line in missing]
    return "".join(lines)


def new_imports(old_tree: ast.Module, new_tree: ast.Module, body: str) -> list[str]:
    """`new_tree`'s top-level import statements (source in `body`) that `old_tree` lacks."""
    have = {ast.dump(node) for node in old_tree.body if is_import(node)}
    return [
        segment
        for node in new_tree.body
        if is_import(node) and ast.dump(node) not in have
        if (segment := ast.get_source_segment(body, node))
    ]


def import_point(tree: ast.Module) -> int:
    """The line after the file's last top-level import (or its docstring), 0-based."""
    point = 0
    for index, node in enumerate(tree.body):
        if (is_import(node) or is_docstring(tree.body, index)) and node.end_lineno is not None:
            point = node.end_lineno
    return point
