"""What a Python file imports and uses, read as data (parsed, never run): the dotted modules
it imports, the repository files they may live in, the names a definition uses."""

from __future__ import annotations

import ast


def names_used(node: ast.AST) -> set[str]:
    """Every name and attribute a piece of code mentions."""
    names = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            names.add(child.id)
        elif isinstance(child, ast.Attribute):
            names.add(child.attr)
    return names


def imported_modules(source: str) -> list[str]:
    """Dotted names a Python file imports (`from a.b import c` gives a.b and a.b.c)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def module_files(module: str, known: set[str]) -> list[str]:
    """The repository files a dotted module name may live in (flat or src/ layout)."""
    rel = module.replace(".", "/")
    options = [f"{rel}.py", f"{rel}/__init__.py", f"src/{rel}.py", f"src/{rel}/__init__.py"]
    return [path for path in options if path in known]
