"""Which names a patch binds, and where: what classes.py needs to know that the function a
class is stated in, and the builtins its condition calls, are what the failing tests run.

    top_level_names(tree)        every name bound in a module's own namespace, once a binding
    bound_names(tree)            every name bound anywhere under a node, once a binding
    rebound_from_outside(files)  per changed file, the names the patch may rebind in its module
                                 without a binding of the module's own (attribute stores,
                                 other files' top-level names; WRITTEN where `setattr` is named)
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping

SETTERS = frozenset({"setattr", "delattr", "__setattr__", "__delattr__"})
WRITTEN = "*"  # in Source.rebound: the patch may write an attribute of any name


def rebound_from_outside(files: Mapping[str, ast.Module]) -> dict[str, frozenset[str]]:
    """For each changed Python file, the names the patch may rebind in its module without a
    binding of the module's own: every attribute name any changed file writes or deletes
    (`sys.modules[__name__].suffix = ...`, `ordinal.abs = ...`), the names other changed files
    bind at their top level (a re-export, `from .m import f`, aside), and WRITTEN where a
    changed file names `setattr`, `delattr` or their dunders (any name may be written)."""
    written: set[str] = set()
    for tree in files.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                written.add(node.attr)
            named = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
            if named in SETTERS:
                written.add(WRITTEN)
    tops = {path: set(top_level_names(tree, reexports=False)) for path, tree in files.items()}
    return {
        path: frozenset(written.union(*(names for other, names in tops.items() if other != path)))
        for path in files
    }


@functools.lru_cache(maxsize=8)
def top_level_names(tree: ast.Module, reexports: bool = True) -> list[str]:
    """Every name bound in the module's own namespace, once per binding: what `bound_names`
    counts outside function, lambda and class bodies (their names, decorators, defaults and
    bases are the module's), and every `global` name; without `reexports`, less the names
    `from m import name` binds to themselves."""
    names: list[str] = []
    pending: list[ast.AST] = list(ast.iter_child_nodes(tree))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            names.extend([] if isinstance(node, ast.Lambda) else [node.name])
            pending.extend(_evaluated_where_defined(node))
            continue
        if isinstance(node, ast.ImportFrom) and not reexports:
            names.extend(a.asname for a in node.names if a.asname and a.asname != a.name)
            continue
        names.extend(_binds(node))
        pending.extend(ast.iter_child_nodes(node))
    names.extend(n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names)
    return names


def _evaluated_where_defined(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda,
) -> list[ast.AST]:
    """What a definition runs in the enclosing scope: decorators, defaults, annotations, bases,
    keywords."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    defaults: list[ast.AST] = [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]
    if isinstance(node, ast.Lambda):
        return defaults
    arguments = node.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    annotations = [a.annotation for a in every if a.annotation is not None]
    returns = [node.returns] if node.returns else []
    return [*node.decorator_list, *defaults, *annotations, *returns]


def bound_names(tree: ast.AST) -> list[str]:
    """Every name `tree` binds, once per binding, in any scope."""
    return [name for node in ast.walk(tree) for name in _binds(node)]


def _binds(node: ast.AST) -> list[str]:
    """The names one node binds: a definition, a parameter, an assignment's target (also by
    `for`, `with`, `:=`, `del`), an import, `except ... as`, a `match` capture, `global`."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [(node.asname or node.name).split(".")[0]]
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    if isinstance(node, ast.Global | ast.Nonlocal):
        return list(node.names)
    return []
