"""What a reply sends back: the file under repair whole, when it is small; when it is too
large to come back whole, the definitions of it that the failing tests' tracebacks and imports
name, each complete; else a diff.

A real module runs to thousands of lines, so a whole-file reply is out of reach, and a unified
diff against it is an edit format that a model can get wrong in many ways (line numbers,
context that does not match, a hunk cut short) while meaning the right change. The functions a
traceback runs through, or a failing test calls, are each a few dozen lines: shown whole and
asked for whole, the reply is code (what every model writes best), and fixbot places each
definition by its name (edits/definitions.py), as it does any reply's.

Only what can be placed without a guess is asked for (edits.placeable: a top-level function,
or a method, `Class.name`, whose `def name` goes to the class the ask named), nearest the
raise first, while together they fit a reply. A line that raised in nothing a reply can
replace, several files, or too much: a diff is asked for, as before.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from fixbot.edits import placeable
from fixbot.model import estimate_tokens
from fixbot.prompts.excerpts import EXCERPTED_TESTS
from fixbot.prompts.sources import Sources, Span, code_spans, is_test
from fixbot.records import CheckResult, failing_tests

WHOLE_REPLY_CHARS = 6_000  # a file under repair this small may be asked for whole
DEFINITIONS_CHARS = 6_000  # the definitions asked for, together at most this (a whole file's)
REPLY_PROSE_TOKENS = 200  # a code reply's sentence before its block

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def file_to_return(
    check: CheckResult,
    tree: Path,
    files: Sequence[str],
    *,
    protected: Mapping[str, str],
    reply_tokens: int,
) -> str:
    """The one source file the failing tests' tracebacks and imports name, when it is small
    enough to come back whole in a reply of `reply_tokens` (with a sentence before it); ""
    when they name none, several, or a larger one (then its definitions may be asked for,
    else a diff)."""
    sources, path, _ = _under_repair(check, tree, files, protected)
    source = sources.get(path) if path else None
    if source is None or len(source.text) > WHOLE_REPLY_CHARS:
        return ""
    return path if fits_a_reply(source.text, reply_tokens) else ""


def _under_repair(
    check: CheckResult, tree: Path, files: Sequence[str], protected: Mapping[str, str]
) -> tuple[Sources, str, list[Span]]:
    """The repository's sources, the one file under repair ("" when the failing tests name
    none or several), and its spans."""
    sources = Sources(tree, set(files))
    spans = code_under_repair(check, sources, protected)
    paths = dict.fromkeys(span.path for span in spans)
    return sources, next(iter(paths)) if len(paths) == 1 else "", spans


def code_under_repair(
    check: CheckResult, sources: Sources, protected: Mapping[str, str]
) -> list[Span]:
    """The spans of source files (not tests, not protected) that the first failing tests'
    tracebacks and imports name, nearest the raise first."""
    ids = failing_tests(check)[:EXCERPTED_TESTS]
    return [
        span
        for span in code_spans(check, ids, sources, findings_shown=0)
        if span.path not in protected and not is_test(span.path)
    ]


def fits_a_reply(text: str, reply_tokens: int) -> bool:
    """Whether `text` comes back whole in a reply of `reply_tokens`, with a sentence before it."""
    return estimate_tokens(text) * 5 // 4 + REPLY_PROSE_TOKENS <= reply_tokens


class Definitions(NamedTuple):
    """What of a file a reply sends back: its path, the definitions' names (`name`,
    `Class.name`), and their text, one after another."""

    file: str = ""
    names: tuple[str, ...] = ()
    text: str = ""


def definitions_to_return(
    check: CheckResult,
    tree: Path,
    files: Sequence[str],
    *,
    protected: Mapping[str, str],
    reply_tokens: int,
) -> Definitions:
    """The one source file the failing tests' tracebacks and imports name, and the definitions
    of it to send back whole, nearest the raise first, as many as fit in DEFINITIONS_CHARS and
    a reply of `reply_tokens`; none when they name no file or several, or no definition of it
    that can be placed fits."""
    sources, path, spans = _under_repair(check, tree, files, protected)
    source = sources.get(path) if path else None
    if source is None or source.module is None:
        return Definitions()
    names = placeable(source.text)
    chosen: dict[str, str] = {}
    for index, span in enumerate(spans):
        found = _enclosing(source.module, span.line or span.choices[0][0], names)
        if found is None and index == 0 and span.line:
            return Definitions()  # the line that raised is in nothing a reply can replace
        bare = {name.rpartition(".")[2] for name in chosen}
        if found is None or found[0] in chosen or found[0].rpartition(".")[2] in bare:
            continue  # two `def __init__` in one reply: neither could be placed
        name, node = found
        text = "\n".join(source.lines[_first_line(node) - 1 : node.end_lineno])
        if not _fits([*chosen.values(), text], reply_tokens):
            break
        chosen[name] = text
    if not chosen:
        return Definitions()
    return Definitions(path, tuple(chosen), "\n\n".join(chosen.values()))


def _fits(texts: list[str], reply_tokens: int) -> bool:
    joined = "\n\n".join(texts)
    return len(joined) <= DEFINITIONS_CHARS and fits_a_reply(joined, reply_tokens)


def _enclosing(module: ast.Module, line: int, names: set[str]) -> tuple[str, _Function] | None:
    """The top-level function, or the method of a top-level class, whose lines (decorators
    included) hold `line`, when a reply's definition can replace it."""
    for node in module.body:
        if not _first_line(node) <= line <= (node.end_lineno or node.lineno):
            continue
        if isinstance(node, _Function):
            return (node.name, node) if node.name in names else None
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, _Function) and (
                    _first_line(item) <= line <= (item.end_lineno or item.lineno)
                ):
                    name = f"{node.name}.{item.name}"
                    return (name, item) if name in names else None
        return None
    return None


def _first_line(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])
