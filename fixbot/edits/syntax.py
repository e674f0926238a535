"""The few facts about Python syntax trees that the modules placing a reply's code share:
what a definition is, where the top-level ones are, what an import or a docstring is."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TypeGuard

DEFINITION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef)


def is_function(node: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)


def is_import(node: ast.stmt) -> bool:
    return isinstance(node, ast.Import | ast.ImportFrom)


def is_docstring(body: Sequence[ast.stmt], index: int) -> bool:
    """Whether body[index] is the docstring of the module or class whose body it is."""
    node = body[index]
    return index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def top_level(tree: ast.Module) -> dict[str, tuple[int, int]]:
    """Top-level definition name -> (first line, line after its end), 0-based, decorators in."""
    found = {}
    for node in tree.body:
        if isinstance(node, DEFINITION) and node.end_lineno is not None:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            found[node.name] = (first, node.end_lineno)
    return found


def span_lines(lines: list[str], start: int, stop: int) -> list[str]:
    chosen = lines[start:stop]
    if chosen and not chosen[-1].endswith("\n"):
        chosen[-1] += "\n"
    return chosen
