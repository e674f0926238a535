"""Fenced blocks of code: whole top-level definitions of a file, or the whole file.

A block names its file in the info string (```python calc.py) or on the line before the fence; a
```python block that names no file counts when exactly one file defines all its definitions.
Each definition replaces the one of the same name; a block holding every definition and
statement of the file is the whole file.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fixbot.edits.search_replace import PATH_LINE

Reader = Callable[[str], str | None]

_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([^\s`]*)\s*([^\s`]*)\s*$")


@dataclass(frozen=True)
class Block:
    path: str | None  # named in the info string or on the line before the fence
    body: str


def owner(body: str, files: Sequence[str], read: Reader) -> str | None:
    """The one Python file that defines every top-level function or class the block defines
    (a block that names no file); None when none does, or more than one."""
    try:
        names = set(_definitions(ast.parse(body)))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not names:
        return None
    owners = []
    for path in files:
        if not path.endswith(".py"):
            continue
        text = read(path)
        if text is None or not all(f"def {n}" in text or f"class {n}" in text for n in names):
            continue
        try:
            defined = set(_definitions(ast.parse(text)))
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        if names <= defined:
            owners.append(path)
    return owners[0] if len(owners) == 1 else None


def fenced(text: str) -> list[Block]:
    lines = text.split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence, first, second = opening.groups()
        path = _path_in(second) or _path_in(first)
        if path is None and i > 0:
            before = PATH_LINE.match(lines[i - 1])
            path = before.group(1) if before else None
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
            j += 1
        blocks.append(Block(path, "\n".join(lines[i + 1 : j]) + "\n"))
        i = j + 1
    return blocks


def _path_in(word: str) -> str | None:
    word = word.removeprefix("path=").removeprefix("file=")
    return word if "." in word and re.fullmatch(r"[\w./-]+", word) else None


def replace_definitions(content: str, body: str) -> str | None:
    """content with body's top-level definitions put in place of the same-named ones, or the
    body itself when it is the whole file; None when body is neither."""
    try:
        new_tree = ast.parse(body)
        old_tree = ast.parse(content)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    old_defs = _definitions(old_tree)
    new_defs = _definitions(new_tree)
    if not new_defs:
        return None
    if set(old_defs) <= set(new_defs) and _statements(old_tree) <= _statements(new_tree):
        return body  # the whole file: every definition and every other statement is there
    if any(not isinstance(node, _DEFINITION) for node in new_tree.body if not _is_import(node)):
        return None  # loose statements: not a set of definitions
    if not set(new_defs) <= set(old_defs):
        return None
    lines = content.splitlines(keepends=True)
    body_lines = body.splitlines(keepends=True)
    imports = _new_imports(old_tree, new_tree, body)
    # Replace from the bottom up, so earlier line numbers stay valid.
    for name in sorted(new_defs, key=lambda n: old_defs[n][0], reverse=True):
        start, stop = old_defs[name]
        new_start, new_stop = new_defs[name]
        replacement = body_lines[new_start:new_stop]
        if replacement and not replacement[-1].endswith("\n"):
            replacement[-1] += "\n"
        lines[start:stop] = replacement
    if imports:
        at = _import_point(old_tree)
        lines[at:at] = [f"{line}\n" for line in imports]
    return "".join(lines)


def _new_imports(old_tree: ast.Module, new_tree: ast.Module, body: str) -> list[str]:
    """The body's top-level import statements the file does not have yet."""
    have = {ast.dump(node) for node in old_tree.body if _is_import(node)}
    return [
        segment
        for node in new_tree.body
        if _is_import(node) and ast.dump(node) not in have
        if (segment := ast.get_source_segment(body, node))
    ]


def _import_point(tree: ast.Module) -> int:
    """The line after the file's last top-level import (or its docstring), 0-based."""
    point = 0
    for index, node in enumerate(tree.body):
        docstring = (
            index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        )
        if (_is_import(node) or docstring) and node.end_lineno is not None:
            point = node.end_lineno
    return point


_DEFINITION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _statements(tree: ast.Module) -> set[str]:
    """The module's top-level statements other than definitions (imports, constants, calls)."""
    return {ast.dump(node) for node in tree.body if not isinstance(node, _DEFINITION)}


def _is_import(node: ast.stmt) -> bool:
    return isinstance(node, ast.Import | ast.ImportFrom)


def _definitions(tree: ast.Module) -> dict[str, tuple[int, int]]:
    """Top-level definition name -> (first line, line after its end), 0-based, decorators in."""
    found = {}
    for node in tree.body:
        if isinstance(node, _DEFINITION) and node.end_lineno is not None:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            found[node.name] = (first, node.end_lineno)
    return found
