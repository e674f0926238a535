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
import io
import textwrap
import tokenize
from collections.abc import Callable, Sequence

from fixbot.edits.methods import class_named, defined_twice, members, placed_methods
from fixbot.edits.syntax import (
    DEFINITION,
    FUNCTION,
    is_docstring,
    is_function,
    is_import,
    span_lines,
    top_level,
)
from fixbot.edits.tidied import import_point, new_imports, tidied, with_imports

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
    several classes define (`placed_methods`)."""
    body = _dedented(body)
    try:
        tree = ast.parse(body)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    spans = top_level(tree)
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
        if is_import(node)
    ]
    return [
        (
            path,
            "".join(imports)
            + "\n\n".join(
                "".join(span_lines(lines, *spans[n])) for n in spans if owners[n] == path
            ),
        )
        for path in paths
    ]


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
    methods a block's definition replaces there, `placed_methods`)."""
    found: dict[str, set[str]] = {}
    for path in files:
        text = read(path) if path.endswith(".py") else None
        if text is None or not any(f"def {n}" in text or f"class {n}" in text for n in names):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        methods = placed_methods(tree, asked_of(asked, path))
        found[path] = (set(top_level(tree)) | set(methods)) & names
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
    adds to try itself. `asked`: the definitions the reply was asked for (`placed_methods`)."""
    try:
        old_tree = ast.parse(content)
        body = tidied(_dedented(body), old_tree, content, own)
        new_tree = ast.parse(body)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    old_defs = top_level(old_tree)
    new_defs = top_level(new_tree)
    if not new_defs:
        return None
    loose = _loose(new_tree)
    partial = {n for n in new_defs if _partial_class(old_tree, new_tree, n) is not None}
    whole = loose or _statements(old_tree) <= _statements(new_tree)
    if set(old_defs) <= set(new_defs) and whole and not partial:
        return with_imports(body, new_tree, old_tree, content)  # the whole file
    methods = placed_methods(old_tree, asked)
    as_methods = [n for n in new_defs if n not in old_defs and n in methods]
    if loose or not (set(new_defs) & set(old_defs) or as_methods):
        return None
    lines = content.splitlines(keepends=True)
    body_lines = body.splitlines(keepends=True)
    imports = new_imports(old_tree, new_tree, body)
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
        [*span_lines(body_lines, *new_defs[n]), "\n", "\n"]
        for n in new_defs
        if n not in old and n not in as_methods and n not in helpers
    ]
    old_nodes = _nodes(old_tree)
    # Every span this block replaces, old line numbers: (start, stop, the lines put there).
    edits: list[tuple[int, int, list[str]]] = []
    for name in replaced:
        segment = span_lines(body_lines, *new_defs[name])
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
        segment = span_lines(body_lines, *new_defs[name])
        start = method.line if not new_nodes[name].decorator_list else method.start
        edits.append((start, method.stop, _reindented(segment, method.indent(lines))))
    if helpers:
        last = max(as_methods, key=lambda n: methods[n].stop)
        indent = methods[last].indent(lines)
        for name in helpers:
            segment = _reindented(span_lines(body_lines, *new_defs[name]), indent)
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
        at = import_point(old_tree)
        lines[at:at] = [f"{line}\n" for line in imports]
    return "".join(lines)


def _nodes(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """Top-level definitions by name (the last of a name, as `top_level` has it)."""
    return {node.name: node for node in tree.body if isinstance(node, DEFINITION)}


def _kept_decorators(old: ast.stmt, new: ast.stmt, start: int) -> int:
    """Where a replacement starts (0-based): at the old definition's `def` line, keeping its
    decorators, when the new one has none (sent from its `def` line, as a model copies a
    function), else at its first decorator."""
    if getattr(new, "decorator_list", None) or not getattr(old, "decorator_list", None):
        return start
    return old.lineno - 1


def _takes_self(node: ast.stmt) -> bool:
    """Whether a function's first parameter is `self` or `cls`: a method, written alone."""
    if not is_function(node):
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


def _partial_class(
    old_tree: ast.Module, new_tree: ast.Module, name: str
) -> tuple[ast.ClassDef, ast.ClassDef] | None:
    """(old, new) when the block's class `name` leaves out some of the file's class's methods:
    the class in part, not a new class without them."""
    old, new = class_named(old_tree, name), class_named(new_tree, name)
    if old is None or new is None:
        return None
    return (old, new) if set(members(old)) - set(members(new)) else None


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
    had = {ast.dump(item) for item in old.body if not isinstance(item, FUNCTION)}
    others = [
        item
        for index, item in enumerate(new.body)
        if not isinstance(item, FUNCTION) and not is_docstring(new.body, index)
    ]
    if not same_header or any(ast.dump(item) not in had for item in others):
        return None
    if defined_twice(new) or defined_twice(old) & {
        item.name for item in new.body if isinstance(item, FUNCTION)
    }:
        return None  # a property's getter and setter: which replaces which is a guess
    old_members = members(old)
    body = old.body[0]
    indent = lines[body.lineno - 1][: body.col_offset]  # the class body's, as the file has it
    edits: list[tuple[int, int, list[str]]] = []
    last = old.end_lineno or len(lines)
    for name, method in members(new).items():
        segment = _reindented(span_lines(body_lines, method.start, method.stop), indent)
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


def _loose(tree: ast.Module) -> bool:
    """Whether the module holds statements other than definitions, imports and a docstring."""
    return any(
        not isinstance(node, DEFINITION) and not is_import(node) and not is_docstring(tree.body, i)
        for i, node in enumerate(tree.body)
    )


def _statements(tree: ast.Module) -> set[str]:
    """The module's top-level statements other than definitions (imports, constants, calls)."""
    return {ast.dump(node) for node in tree.body if not isinstance(node, DEFINITION)}
