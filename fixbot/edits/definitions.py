"""Blocks of code: whole definitions of a file (top-level ones, or methods), or the whole file.

A block that names no file counts when exactly one file defines its definitions (all of them,
else some: a fix that adds a helper). Each definition replaces the one of the same name, and a
new one joins before them; a block holding every definition of the file and other statements
is the whole file (the file's imports it lacks kept). A block defining nothing the file
defines is no edit of it.

Real files are mostly classes, and a fix is mostly one method. A class block that leaves out
some of the class's methods is that class in part: each method it holds replaces the method of
the same name (a new one joins after the last it replaced), the rest of the class stays. A
function that the file defines only as the method of one class (sent alone, dedented or at the
class's own indentation) replaces that method, at its indentation (the file's own, tabs too; a
line inside a string moves never). A name a class defines twice (a property's getter and
setter) is no one method: only the whole class replaces it.
"""

from __future__ import annotations

import ast
import builtins
import io
import textwrap
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeGuard

Reader = Callable[[str], str | None]


def owned_parts(
    body: str, files: Sequence[str], read: Reader, asked: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """The files a block that names no file is for, and the part of it for each: the one
    Python file defining all its functions and classes (its tries, `test*`, aside) takes the
    whole block; else each definition goes to the one file defining it (a small model sends
    the test's helpers and the fixed function in one block), a new one (a helper) with the
    definition after it, and the block's imports with every part. [] when a definition is
    defined by several files, or none of them by any. `asked`: the definitions the reply was
    asked for (`path::name`, `path::Class.method`): that file takes what several define (a
    test double's `add` beside the asked `Cart.add`), and the class named takes a method
    several classes define (`_methods`)."""
    body = _dedented(body)
    try:
        tree = ast.parse(body)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    spans = _definitions(tree)
    names = {n for n in spans if not n.startswith("test")} or set(spans)
    if not names:
        return []
    defined = _defined_in(files, read, set(spans), asked)
    every = _the_asked([path for path, found in defined.items() if names <= found], asked)
    if len(every) == 1:
        return [(every[0], body)]
    if every:
        return []
    owners: dict[str, str | None] = {}
    for name in spans:
        having = _the_asked([path for path, found in defined.items() if name in found], asked)
        if len(having) > 1:
            return []
        owners[name] = having[0] if having else None
    _attach_new(owners, list(spans))
    paths = list(dict.fromkeys(p for p in owners.values() if p is not None))
    if len(paths) <= 1:
        return [(paths[0], body)] if paths else []
    lines = body.splitlines(keepends=True)
    imports = [
        "".join(lines[node.lineno - 1 : node.end_lineno or node.lineno])
        for node in tree.body
        if _is_import(node)
    ]
    return [
        (
            path,
            "".join(imports)
            + "\n\n".join("".join(_segment(lines, *spans[n])) for n in spans if owners[n] == path),
        )
        for path in paths
    ]


def placeable(content: str) -> set[str]:
    """The definitions of a module that a block's function replaces without a guess, by the
    names an ask gives them: a top-level function defined once (`name`), and a method that
    `_methods` places when the ask names its class (`Class.name`: a class defined once; no
    top-level definition of the name, and no class defining it twice). Never a `test*` name:
    sent in a block for a source file, it is taken for the reply's try of its fix."""
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return set()
    top = [node.name for node in tree.body if isinstance(node, _DEFINITION)]
    found = {node.name for node in tree.body if _is_function(node) and top.count(node.name) == 1}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and top.count(node.name) == 1:
            for name in _members(node):
                method = _methods(tree, [f"{node.name}.{name}"]).get(name)
                if method is not None and method.owner == node.name:
                    found.add(f"{node.name}.{name}")
    return {name for name in found if not name.rpartition(".")[2].startswith("test")}


def free_names(content: str) -> set[str] | None:
    """The names a module reads and never binds (not a builtin, an import, a definition, a
    parameter or any assignment anywhere in it); None when it does not parse. A module whose
    code reads none has no use for a name a star import would bring."""
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    bound = set(dir(builtins)) | _MODULE_NAMES
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, _DEFINITION):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound |= set(node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return read - bound


_MODULE_NAMES = {"__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__"}
_MODULE_NAMES |= {"__builtins__", "__path__", "__annotations__", "__dict__", "__debug__"}


def asked_of(asked: Sequence[str], path: str) -> tuple[str, ...]:
    """The definitions asked of `path` (`name`, `Class.name`), of the asked `path::name`s."""
    prefix = f"{path}::"
    return tuple(entry.removeprefix(prefix) for entry in asked if entry.startswith(prefix))


def _the_asked(paths: list[str], asked: Sequence[str]) -> list[str]:
    """Of several files, the one the reply was asked about, when it is one of them."""
    chosen = [path for path in paths if asked_of(asked, path)]
    return chosen if len(paths) > 1 and len(chosen) == 1 else paths


def _defined_in(
    files: Sequence[str], read: Reader, names: set[str], asked: Sequence[str]
) -> dict[str, set[str]]:
    """The top-level definitions of each Python file that defines any of `names` (and the
    methods a block's definition replaces there, `_methods`)."""
    found: dict[str, set[str]] = {}
    for path in files:
        text = read(path) if path.endswith(".py") else None
        if text is None or not any(f"def {n}" in text or f"class {n}" in text for n in names):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        methods = _methods(tree, asked_of(asked, path))
        found[path] = (set(_definitions(tree)) | set(methods)) & names
    return {path: names_in for path, names_in in found.items() if names_in}


def _attach_new(owners: dict[str, str | None], order: list[str]) -> None:
    """A definition no file has goes with the owned definition after it, else before it."""
    for index, name in enumerate(order):
        if owners[name] is not None:
            continue
        after = [owners[n] for n in order[index + 1 :] if owners[n] is not None]
        before = [owners[n] for n in order[:index] if owners[n] is not None]
        owners[name] = (after or before[::-1] or [None])[0]


def replace_definitions(
    content: str, body: str, own: Sequence[str] = (), asked: Sequence[str] = ()
) -> str | None:
    """content with body's top-level definitions put in place of the same-named ones (new
    ones before them), or the body itself when it is the whole file; None when body is
    neither (loose statements, or nothing the file defines). `own`: the file's own module
    names; a body importing from its own module (a line copied from the test) loses it, and
    (but in a test module) so do the asserts, calls, test functions and `__main__` block it
    adds to try itself. `asked`: the definitions the reply was asked for (`_methods`)."""
    try:
        old_tree = ast.parse(content)
        body = _dedented(body)
        body = _without_lines(body, _self_imports(ast.parse(body), own))
        if not _is_test_module(own):
            body = _without_lines(body, _demonstrations(ast.parse(body), old_tree))
        body = _docstrings_kept(body, ast.parse(body), old_tree, content)
        new_tree = ast.parse(body)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    old_defs = _definitions(old_tree)
    new_defs = _definitions(new_tree)
    if not new_defs:
        return None
    loose = _loose(new_tree)
    partial = {n for n in new_defs if _partial_class(old_tree, new_tree, n) is not None}
    whole = loose or _statements(old_tree) <= _statements(new_tree)
    if set(old_defs) <= set(new_defs) and whole and not partial:
        return _with_imports(body, new_tree, old_tree, content)  # the whole file
    methods = _methods(old_tree, asked)
    as_methods = [n for n in new_defs if n not in old_defs and n in methods]
    if loose or not (set(new_defs) & set(old_defs) or as_methods):
        return None
    lines = content.splitlines(keepends=True)
    body_lines = body.splitlines(keepends=True)
    imports = _new_imports(old_tree, new_tree, body)
    old = set(old_defs)
    replaced = [n for n in new_defs if n in old]
    new_nodes = _nodes(new_tree)
    # A new function taking `self` or `cls` beside the methods of one class is its helper
    # method: it joins that class after them, not the module.
    owners = {methods[n].owner for n in as_methods}
    helpers = [
        n
        for n in new_defs
        if n not in old and n not in as_methods and len(owners) == 1 and _takes_self(new_nodes[n])
    ]
    added = [
        [*_segment(body_lines, *new_defs[n]), "\n", "\n"]
        for n in new_defs
        if n not in old and n not in as_methods and n not in helpers
    ]
    old_nodes = _nodes(old_tree)
    # Every span this block replaces, old line numbers: (start, stop, the lines put there).
    edits: list[tuple[int, int, list[str]]] = []
    for name in replaced:
        segment = _segment(body_lines, *new_defs[name])
        classes = _partial_class(old_tree, new_tree, name) if name in partial else None
        if classes is not None:
            merged = _merged_class(lines, body_lines, *classes)
            if not merged:
                return None
            edits += merged
        else:
            start = _kept_decorators(old_nodes[name], new_nodes[name], old_defs[name][0])
            edits.append((start, old_defs[name][1], segment))
    for name in as_methods:
        method = methods[name]
        segment = _segment(body_lines, *new_defs[name])
        start = method.line if not new_nodes[name].decorator_list else method.start
        edits.append((start, method.stop, _reindented(segment, method.indent(lines))))
    if helpers:
        last = max(as_methods, key=lambda n: methods[n].stop)
        indent = methods[last].indent(lines)
        for name in helpers:
            segment = _reindented(_segment(body_lines, *new_defs[name]), indent)
            edits.append((methods[last].stop, methods[last].stop, ["\n", *segment]))
    # Replace from the bottom up, so earlier line numbers stay valid.
    order = sorted(range(len(edits)), key=lambda i: (edits[i][0], i), reverse=True)
    for start, stop, segment in (edits[i] for i in order):
        lines[start:stop] = segment
    if added:  # new helpers go before the first top-level definition the block edits
        edited = [*replaced, *(methods[n].owner for n in as_methods)]
        at = min(old_defs[n][0] for n in edited)
        lines[at:at] = [line for helper in added for line in helper]
    if imports:
        at = _import_point(old_tree)
        lines[at:at] = [f"{line}\n" for line in imports]
    return "".join(lines)


def _nodes(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """Top-level definitions by name (the last of a name, as `_definitions` has it)."""
    return {node.name: node for node in tree.body if isinstance(node, _DEFINITION)}


def _kept_decorators(old: ast.stmt, new: ast.stmt, start: int) -> int:
    """Where a replacement starts (0-based): at the old definition's `def` line, keeping its
    decorators, when the new one has none (sent from its `def` line, as a model copies a
    function), else at its first decorator."""
    if getattr(new, "decorator_list", None) or not getattr(old, "decorator_list", None):
        return start
    return old.lineno - 1


def _takes_self(node: ast.stmt) -> bool:
    """Whether a function's first parameter is `self` or `cls`: a method, written alone."""
    if not _is_function(node):
        return False
    params = [*node.args.posonlyargs, *node.args.args]
    return bool(params) and params[0].arg in ("self", "cls")


def _dedented(body: str) -> str:
    """The block dedented when it does not parse as it is (a method sent at its class's
    indentation)."""
    try:
        ast.parse(body)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return textwrap.dedent(body)
    return body


_FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class _Method:
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


def _members(node: ast.ClassDef) -> dict[str, _Method]:
    """A class's methods by name: each name defined once in the class (a name defined twice,
    a property's getter and setter, is no one method, and is left out)."""
    twice = _defined_twice(node)
    found: dict[str, _Method] = {}
    for item in node.body:
        if isinstance(item, _FUNCTION) and item.end_lineno is not None and item.name not in twice:
            first = min([item.lineno, *(d.lineno for d in item.decorator_list)]) - 1
            found[item.name] = _Method(
                first, item.end_lineno, item.lineno - 1, item.col_offset, node.name
            )
    return found


def _defined_twice(node: ast.ClassDef) -> set[str]:
    names = [item.name for item in node.body if isinstance(item, _FUNCTION)]
    return {name for name in names if names.count(name) > 1}


def _methods(tree: ast.Module, asked: Sequence[str] = ()) -> dict[str, _Method]:
    """The method a function of a block replaces, by name: the one a single top-level class
    defines, or, where several classes define the name, the one of the class the reply was
    asked for (`Class.name` in `asked`: the ask named the class, the reply the method); never
    a name a top-level definition has, nor one a class defines twice."""
    found: dict[str, list[_Method]] = {}
    twice: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            twice |= _defined_twice(node)
            for name, method in _members(node).items():
                found.setdefault(name, []).append(method)
    top = set(_definitions(tree))
    chosen: dict[str, _Method] = {}
    for name, methods in found.items():
        named = [m for m in methods if f"{m.owner}.{name}" in asked]
        if name not in top and name not in twice and (len(methods) == 1 or len(named) == 1):
            chosen[name] = methods[0] if len(methods) == 1 else named[0]
    return chosen


def _class_named(tree: ast.Module, name: str) -> ast.ClassDef | None:
    return next(
        (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name),
        None,
    )


def _partial_class(
    old_tree: ast.Module, new_tree: ast.Module, name: str
) -> tuple[ast.ClassDef, ast.ClassDef] | None:
    """(old, new) when the block's class `name` leaves out some of the file's class's methods:
    the class in part, not a new class without them."""
    old, new = _class_named(old_tree, name), _class_named(new_tree, name)
    if old is None or new is None:
        return None
    return (old, new) if set(_members(old)) - set(_members(new)) else None


def _merged_class(
    lines: list[str], body_lines: list[str], old: ast.ClassDef, new: ast.ClassDef
) -> list[tuple[int, int, list[str]]] | None:
    """The edits that put a partial class's methods into the file's class: each replaces the
    method of its name, a new one joins after the last method replaced. None when the block
    changes anything else of the class (its bases, decorators, attributes): not a part, and
    not the whole."""
    same_header = all(
        [ast.dump(n) for n in getattr(old, part)] == [ast.dump(n) for n in getattr(new, part)]
        for part in ("bases", "keywords", "decorator_list")
    )
    had = {ast.dump(item) for item in old.body if not isinstance(item, _FUNCTION)}
    others = [
        item
        for index, item in enumerate(new.body)
        if not isinstance(item, _FUNCTION) and not _is_docstring(new.body, index)
    ]
    if not same_header or any(ast.dump(item) not in had for item in others):
        return None
    if _defined_twice(new) or _defined_twice(old) & {
        item.name for item in new.body if isinstance(item, _FUNCTION)
    }:
        return None  # a property's getter and setter: which replaces which is a guess
    old_members = _members(old)
    body = old.body[0]
    indent = lines[body.lineno - 1][: body.col_offset]  # the class body's, as the file has it
    edits: list[tuple[int, int, list[str]]] = []
    last = old.end_lineno or len(lines)
    for name, method in _members(new).items():
        segment = _reindented(_segment(body_lines, method.start, method.stop), indent)
        if name in old_members:
            last = old_members[name].stop
            edits.append((old_members[name].start, last, segment))
        else:  # a new method: after the last one replaced (else at the class's end)
            edits.append((last, last, ["\n", *segment]))
    return edits


def _reindented(segment: list[str], indent: str) -> list[str]:
    """The lines moved so that the first starts at `indent`: the first line's indentation
    replaced on every line of code that has it (a line that starts inside a string, such as
    a docstring's or a template's, stays exactly as it is: its text is a value)."""
    first = next((line for line in segment if line.strip()), "")
    own = first[: len(first) - len(first.lstrip())]
    inside = _inside_strings(segment)
    return [
        indent + line[len(own) :]
        if line.strip() and line.startswith(own) and n not in inside
        else line
        for n, line in enumerate(segment)
    ]


def _inside_strings(segment: list[str]) -> set[int]:
    """The indexes of the lines that start inside a multi-line string."""
    found: set[int] = set()
    text = textwrap.dedent("".join(segment))
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                found.update(range(token.start[0], token.end[0]))  # 1-based rows -> 0-based
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


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
            or (_is_function(node) and node.name.startswith("test"))
            or _is_main_block(node)
        )
    ]


def _is_function(node: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)


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


def _segment(lines: list[str], start: int, stop: int) -> list[str]:
    chosen = lines[start:stop]
    if chosen and not chosen[-1].endswith("\n"):
        chosen[-1] += "\n"
    return chosen


def _with_imports(body: str, new_tree: ast.Module, old_tree: ast.Module, content: str) -> str:
    """A whole-file body with the file's own imports that it left out put back: a model that
    rewrites a file often drops a line at its top, which no fix needs."""
    missing = _new_imports(new_tree, old_tree, content)
    if not missing:
        return body
    lines = body.splitlines(keepends=True)
    at = _import_point(new_tree)
    lines[at:at] = [f"{line}\n" for line in missing]
    return "".join(lines)


def _loose(tree: ast.Module) -> bool:
    """Whether the module holds statements other than definitions, imports and a docstring."""
    return any(
        not isinstance(node, _DEFINITION)
        and not _is_import(node)
        and not _is_docstring(tree.body, i)
        for i, node in enumerate(tree.body)
    )


def _is_docstring(body: Sequence[ast.stmt], index: int) -> bool:
    """Whether body[index] is the docstring of the module or class whose body it is."""
    node = body[index]
    return index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _new_imports(old_tree: ast.Module, new_tree: ast.Module, body: str) -> list[str]:
    """`new_tree`'s top-level import statements (source in `body`) that `old_tree` lacks."""
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
        if (_is_import(node) or _is_docstring(tree.body, index)) and node.end_lineno is not None:
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
