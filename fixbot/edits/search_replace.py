"""Other reply shapes than a unified diff, turned into the canonical diff (pure).

The fenced unified diff stays the documented contract; small models often cannot write one
that applies, so when a reply has none, these shapes are accepted too:

    SEARCH/REPLACE blocks       path line, then <<<<<<< SEARCH / ======= / >>>>>>> REPLACE;
                                the search text must occur exactly once in the file (after
                                trailing whitespace is ignored)
    a whole definition          a fenced block naming an existing file (```python calc.py, or
                                the path alone on the line before the fence) holding complete
                                top-level functions or classes of that file: each replaces
                                the definition of the same name; a block that names no file
                                counts when exactly one file defines all its definitions
    a whole file                the same, holding the whole file (it defines every top-level
                                name the file defines)

Everything becomes FileChanges and then the one canonical diff, so policy, evidence and the PR
see a diff as always. A shape that does not fit exactly is a named problem, never a guess.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fixbot.edits.patch import DiffRejected, FileChange, Patch, render_diff, repo_path

Reader = Callable[[str], str | None]

_SEARCH = re.compile(r"^<{5,9} ?SEARCH\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_REPLACE = re.compile(r"^>{5,9} ?REPLACE\s*$")
_FENCE = re.compile(r"^(`{3,}|~{3,})\s*([^\s`]*)\s*([^\s`]*)\s*$")
_PATH = re.compile(r"^[\s*`#:]*(?:file:?\s*)?([\w./-]+\.\w+)[\s*`:]*$", re.IGNORECASE)


@dataclass(frozen=True)
class _Block:
    path: str | None  # named in the info string or on the line before the fence
    body: str


def parse_edits(reply: str, read: Reader, files: Sequence[str] = ()) -> Patch | None:
    """The patch the reply's other-shaped edits make, None when it holds none of them;
    DiffRejected naming each problem when it holds some that do not fit. `files` (the
    repository's) lets a ```python block that names no file count when its definitions are
    those of exactly one file."""
    text = reply.replace("\r\n", "\n")
    changes: dict[str, str] = {}
    originals: dict[str, str] = {}
    problems: list[str] = []

    def current(path: str) -> str | None:
        if path not in changes:
            found = read(path)
            if found is None:
                return None
            originals[path] = changes[path] = found
        return changes[path]

    found_any = False
    for path, search, replace in _search_replace_blocks(text):
        found_any = True
        _apply_search_replace(path, search, replace, current, changes, problems)
    if not found_any:
        for block in _fenced(text):
            named = block.path or _owner(block.body, files, read)
            if named is None:
                continue
            try:
                path = repo_path(named)
            except DiffRejected:
                continue
            content = current(path)
            if content is None:
                continue
            found_any = True
            replaced = _replace_definitions(content, block.body)
            if replaced is None:
                problems.append(
                    f"{path}: the ```block is neither the whole file nor complete top-level "
                    "definitions of it; send a unified diff"
                )
            else:
                changes[path] = replaced
    if not found_any:
        return None
    if problems:
        raise DiffRejected(*problems)
    edited = [
        FileChange(path, originals[path], new)
        for path, new in changes.items()
        if new != originals[path]
    ]
    if not edited:
        raise DiffRejected("the edits change nothing")
    return Patch(changes=tuple(edited), diff=render_diff(edited))


def _owner(body: str, files: Sequence[str], read: Reader) -> str | None:
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


def _search_replace_blocks(text: str) -> list[tuple[str | None, str, str | None]]:
    lines = text.split("\n")
    blocks: list[tuple[str | None, str, str | None]] = []
    path: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        named = _PATH.match(line)
        if named and not _SEARCH.match(line):
            path = named.group(1)
        if _SEARCH.match(line):
            search, i = _until(lines, i + 1, _DIVIDER)
            replace, i = _until(lines, i + 1, _REPLACE)
            if i >= len(lines):  # no ======= or no >>>>>>> REPLACE: a cut-off reply
                blocks.append((path, "", None))
                break
            blocks.append((path, search, replace))
        i += 1
    return blocks


def _until(lines: list[str], start: int, end: re.Pattern[str]) -> tuple[str, int]:
    i = start
    while i < len(lines) and not end.match(lines[i]):
        i += 1
    body = lines[start:i]
    return ("\n".join(body) + "\n") if body else "", i


def _apply_search_replace(
    path: str | None,
    search: str,
    replace: str | None,
    current: Callable[[str], str | None],
    changes: dict[str, str],
    problems: list[str],
) -> None:
    if replace is None:
        problems.append(
            "a SEARCH/REPLACE block is not closed (no ======= or >>>>>>> REPLACE line): "
            "the reply may have been cut off; send the whole block"
        )
        return
    if path is None:
        problems.append("a SEARCH/REPLACE block names no file: put its path on the line above")
        return
    try:
        path = repo_path(path)
    except DiffRejected as exc:
        problems.extend(exc.problems)
        return
    content = current(path)
    if content is None:
        problems.append(f"{path}: no such file for a SEARCH/REPLACE block")
        return
    if not search.strip():
        problems.append(f"{path}: a SEARCH block is empty")
        return
    starts = _occurrences(content, search)
    if len(starts) != 1:
        how = "does not occur" if not starts else f"occurs {len(starts)} times"
        first = search.strip().splitlines()[0][:80]
        problems.append(f"{path}: the SEARCH text starting {first!r} {how} in the file")
        return
    start, stop = starts[0]
    changes[path] = content[:start] + replace + content[stop:]


def _occurrences(content: str, search: str) -> list[tuple[int, int]]:
    """(start, stop) character spans of whole-line matches, trailing whitespace ignored."""
    lines = content.splitlines(keepends=True)
    wanted = [line.rstrip() for line in search.splitlines()]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    found = []
    for i in range(len(lines) - len(wanted) + 1):
        if [line.rstrip() for line in lines[i : i + len(wanted)]] == wanted:
            found.append((offsets[i], offsets[i + len(wanted)]))
    return found


def _fenced(text: str) -> list[_Block]:
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
            before = _PATH.match(lines[i - 1])
            path = before.group(1) if before else None
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence[0] * len(fence)):
            j += 1
        blocks.append(_Block(path, "\n".join(lines[i + 1 : j]) + "\n"))
        i = j + 1
    return blocks


def _path_in(word: str) -> str | None:
    word = word.removeprefix("path=").removeprefix("file=")
    return word if "." in word and re.fullmatch(r"[\w./-]+", word) else None


def _replace_definitions(content: str, body: str) -> str | None:
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
