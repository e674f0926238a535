"""Which definition of a module a block's function is, by its name alone: a top-level function
defined once, or the method of the one class that defines it (where several classes define
it, the class the reply was asked about). A name a class defines twice (a property's getter
and setter) is no one method: only the whole class replaces it."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from fixbot.edits.syntax import DEFINITION, FUNCTION, is_function, top_level


def placeable(content: str) -> set[str]:
    """The definitions of a module that a block's function replaces without a guess, by the
    names an ask gives them: a top-level function defined once (`name`), and a method that
    `placed_methods` places when the ask names its class (`Class.name`: a class defined once; no
    top-level definition of the name, and no class defining it twice). Never a `test*` name:
    sent in a block for a source file, it is taken for the reply's try of its fix."""
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return set()
    top = [node.name for node in tree.body if isinstance(node, DEFINITION)]
    found = {node.name for node in tree.body if is_function(node) and top.count(node.name) == 1}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and top.count(node.name) == 1:
            for name in members(node):
                method = placed_methods(tree, [f"{node.name}.{name}"]).get(name)
                if method is not None and method.owner == node.name:
                    found.add(f"{node.name}.{name}")
    return {name for name in found if not name.rpartition(".")[2].startswith("test")}


@dataclass(frozen=True)
class Method:
    """A method of a class: its lines (0-based, decorators in, end exclusive), its def line,
    its column, and its class's name."""

    start: int
    stop: int
    line: int
    column: int
    owner: str

    def indent(self, lines: Sequence[str]) -> str:
        """The method's own indentation, as the file writes it (spaces or tabs)."""
        return lines[self.line][: self.column]


def members(node: ast.ClassDef) -> dict[str, Method]:
    """A class's methods by name: each name defined once in the class (a name defined twice,
    a property's getter and setter, is no one method, and is left out)."""
    twice = defined_twice(node)
    found: dict[str, Method] = {}
    for item in node.body:
        if isinstance(item, FUNCTION) and item.end_lineno is not None and item.name not in twice:
            first = min([item.lineno, *(d.lineno for d in item.decorator_list)]) - 1
            found[item.name] = Method(
                first, item.end_lineno, item.lineno - 1, item.col_offset, node.name
            )
    return found


def defined_twice(node: ast.ClassDef) -> set[str]:
    names = [item.name for item in node.body if isinstance(item, FUNCTION)]
    return {name for name in names if names.count(name) > 1}


def placed_methods(tree: ast.Module, asked: Sequence[str] = ()) -> dict[str, Method]:
    """The method a function of a block replaces, by name: the one a single top-level class
    defines, or, where several classes define the name, the one of the class the reply was
    asked for (`Class.name` in `asked`: the ask named the class, the reply the method); never
    a name a top-level definition has, nor one a class defines twice."""
    found: dict[str, list[Method]] = {}
    twice: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            twice |= defined_twice(node)
            for name, method in members(node).items():
                found.setdefault(name, []).append(method)
    top = set(top_level(tree))
    chosen: dict[str, Method] = {}
    for name, methods in found.items():
        named = [m for m in methods if f"{m.owner}.{name}" in asked]
        if name not in top and name not in twice and (len(methods) == 1 or len(named) == 1):
            chosen[name] = methods[0] if len(methods) == 1 else named[0]
    return chosen


def class_named(tree: ast.Module, name: str) -> ast.ClassDef | None:
    return next(
        (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name),
        None,
    )
