"""What a Python file imports and uses, read as data (parsed, never run): the dotted modules
it imports, the repository files they may live in, the names a definition uses, the names a
module takes from its siblings (a package's `__init__.py` re-exporting its submodules')."""

from __future__ import annotations

import ast
from posixpath import dirname


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


def imported_from(
    module: ast.Module, path: str, known: set[str]
) -> list[tuple[str, dict[str, str]]]:
    """The repository files a module's top-level `from X import ...` statements take names
    from, each with {the name here: its name there} ("*": every name), relative imports
    resolved from `path`'s package."""
    found: list[tuple[str, dict[str, str]]] = []
    package = dirname(path)
    for node in module.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        names = {(a.asname or a.name): a.name for a in node.names}
        if node.level:
            base = package
            for _ in range(node.level - 1):
                base = dirname(base)
            rel = "/".join(filter(None, [base, *(node.module or "").split(".")]))
            files = [f for f in (f"{rel}.py", f"{rel}/__init__.py") if f in known]
        else:
            files = module_files(node.module or "", known)
        if files:
            found.append((files[0], names))
    return found
