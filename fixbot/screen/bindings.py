"""Which names a patch binds, and where: what classes.py needs to know that the function a
class is stated in, and the builtins its condition calls, are what the failing tests run.

    top_level_names(tree)   every name bound in a module's own namespace, once a binding
    bound_names(tree)       every name bound anywhere under a node, once a binding
    written(files)          the names the patch may bind in any module without a statement of
                            that module's own (attribute stores, `setattr`, submodule imports),
                            WRITTEN where it may bind any name (`setattr` of a computed name,
                            `exec`, a star import, a module's `__getattr__`, `sys.modules`)
    elsewhere(files)        per changed file, the names the other changed files bind at their
                            top level (a re-export, `from .m import f`, aside)
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping

SETTERS = frozenset({"setattr", "delattr", "__setattr__", "__delattr__"})
WRITTEN = "*"  # the patch may bind a name of any name


def written(files: Mapping[str, ast.Module]) -> frozenset[str]:
    """The names the changed files may bind in a module other than by that module's own binding
    statements: every attribute stored or deleted (`sys.modules[__name__].suffix = ...`,
    `ordinal.abs = ...`), named to a setter as a constant (`setattr(m, "abs", f)`), a changed
    module's own name or one imported as a submodule (importing `ordinal/abs.py` binds `abs` in
    `ordinal`); and WRITTEN
    where they name a setter otherwise, `exec`, `eval`, `compile`, `sys.modules` or
    `__builtins__`, import `*`, or give a module a `__getattr__`."""
    found = {_module_name(path) for path in files}  # a submodule's import binds its name
    for tree in files.values():
        read: set[int] = set()  # setters whose call named a constant (walked parent first)
        anywhere = _names_for_any_name(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _name_of(node.func) in SETTERS:
                name = _setter_name(node)
                found.add(WRITTEN if name is None else name)
                read.add(id(node.func))
            elif id(node) not in read:
                found.update(_written_by(node, anywhere))
        if "__getattr__" in top_level_names(tree):  # PEP 562: it answers for any name
            found.add(WRITTEN)
    telling = found & (SETTERS | {"__getattr__", "__builtins__"})  # `m.__getattr__ = f`
    return frozenset(found | ({WRITTEN} if telling else set()))


def _setter_name(call: ast.Call) -> str | None:
    """The constant name a setter's call writes (`setattr(o, "x", v)`, `o.__setattr__("x", v)`,
    `delattr(o, "x")`, `o.__delattr__("x")`), or None where the screen cannot read it."""
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    deletes = _name_of(call.func) in ("delattr", "__delattr__")
    unbound = len(call.args) == (2 if deletes else 3)
    bound = len(call.args) == (1 if deletes else 2)
    position = 1 if unbound else 0 if bound else None
    name = call.args[position] if position is not None else None
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return name.value
    return None


def _written_by(node: ast.AST, anywhere: frozenset[str]) -> list[str]:
    if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
        table = isinstance(node.value, ast.Name) and f"{node.value.id}.{node.attr}" in anywhere
        return [node.attr, WRITTEN] if table else [node.attr]  # `sys.modules |= {...}`
    if isinstance(node, ast.Import):
        return [part for alias in node.names for part in alias.name.split(".")[1:]]
    if isinstance(node, ast.ImportFrom):
        return [WRITTEN] if any(alias.name == "*" for alias in node.names) else []
    if isinstance(node, ast.Name) and node.id in anywhere | SETTERS:
        return [WRITTEN]
    if isinstance(node, ast.Attribute) and node.attr in SETTERS:
        return [WRITTEN]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return [WRITTEN] if f"{node.value.id}.{node.attr}" in anywhere else []
    return []


def _names_for_any_name(tree: ast.Module) -> frozenset[str]:
    """How the module spells what may bind any name: the builtins `exec`, `eval`, `compile` and
    `__builtins__` (bare, or `builtins.exec` through an import of `builtins`), `sys.modules`
    (through an import of `sys` or of `modules` from it), under whatever name it imports them;
    never an attribute of another object (`re.compile`, `model.eval()`, `self.modules`)."""
    spelled = {"exec", "eval", "compile", "__builtins__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name
                if alias.name == "sys":
                    spelled.add(f"{local}.modules")
                elif alias.name == "builtins":
                    spelled.update(f"{local}.{name}" for name in ("exec", "eval", "compile"))
        elif isinstance(node, ast.ImportFrom) and node.module in ("sys", "builtins"):
            wanted = ("modules",) if node.module == "sys" else ("exec", "eval", "compile")
            spelled.update(a.asname or a.name for a in node.names if a.name in wanted)
    return frozenset(spelled)


def _module_name(path: str) -> str:
    """The name a file's module is bound to in its package (`ordinal/abs.py`, `abs/__init__.py`:
    `abs`)."""
    parts = path.rsplit("/", 2)
    stem = parts[-1].rsplit(".", 1)[0]
    return parts[-2] if stem == "__init__" and len(parts) > 1 else stem


def _name_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def elsewhere(files: Mapping[str, ast.Module]) -> dict[str, frozenset[str]]:
    """For each changed file, the names the other changed files bind at their top level, less
    re-exports (`from .m import f`): a wrapper of the same name there may be what a test
    imports."""
    tops = {path: set(top_level_names(tree, reexports=False)) for path, tree in files.items()}
    return {
        path: frozenset(set().union(*(names for other, names in tops.items() if other != path)))
        for path in files
    }


@functools.lru_cache(maxsize=8)
def top_level_names(tree: ast.Module, reexports: bool = True) -> list[str]:
    """Every name bound in the module's own namespace, once per binding: what `bound_names`
    counts outside function, lambda and class bodies (their names, decorators, defaults and
    bases are the module's) and comprehensions (but for a `:=` in one), and every `global`
    name; without `reexports`, less the names `from m import name` binds to themselves."""
    names: list[str] = []
    pending: list[ast.AST] = list(ast.iter_child_nodes(tree))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            names.extend([] if isinstance(node, ast.Lambda) else [node.name])
            pending.extend(_evaluated_where_defined(node))
            continue
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            walrus = (n.target for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
            names.extend(t.id for t in walrus if isinstance(t, ast.Name))  # its targets are its own
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
