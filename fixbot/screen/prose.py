"""The tested values written as text the code reads (part of `special-cases-test`).

A membership test against a tuple of tested inputs is one spelling of a special case; the same
inputs written inside text and read back at run time are another, whatever reads them:
`str(n) in "11 12 13 111"`, `f",{n}," in ",11,12,13,"`, `"x11x12".split("x")`, `re.findall`
over a constant, a data file the diff adds, a regular expression or glob that lists them
(`re.fullmatch("1[123]|11[123]", s)`), a docstring or comment parsed through `__doc__` or the
module's own source. So:

- the strings one statement of the diff adds (not a docstring, not only printed or logged), or
  a data file the diff adds, that spell three or more of the numbers the failing tests assert
  on are refused, however the code reads them; numbers of one digit, which every format string,
  quantifier and struct layout spells, do not count;
- a pattern the diff passes to `re` or `fnmatch` that matches two or more tested numbers, few
  numbers besides them, and does not match most of them shifted past every tested input, is
  refused (`1[123]$` searched matches 1011 too: a rule over the last digits; `\\d{1,3}` matches
  every number; a list of the inputs matches them alone);
- code the diff adds that reads the module's own docstrings or source as data is refused
  (own_text.py).
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator

from fixbot.screen.own_text import only_shown, own_text, redirected
from fixbot.screen.source import Hit, Key, Source, line

SPELLED = 3  # distinct tested numbers a string must spell to single them out
NUMBER = re.compile(r"\d+(?:\.\d+)?")
PATTERN_CAP = 300  # a longer pattern is not run by the screen
WINDOW = 1000  # numbers a pattern is tried on, at least: a list matches few of them


def tested_numbers(literals: Iterable[Key]) -> frozenset[float]:
    """The failing tests' numbers that tell: of two digits or more, or not whole."""
    return frozenset(
        v
        for kind, v in literals
        if kind == "n" and isinstance(v, float) and (abs(v) >= 10 or v != int(v))
    )


def spelled_in_text(source: Source) -> Iterator[Hit]:
    numbers = tested_numbers(source.literals)
    if source.is_test:
        return
    if numbers:
        yield from _statements(source, numbers)
        yield from _patterns(source, numbers)
    yield from own_text(source)


def spelled_in_data(text: str, literals: Iterable[Key]) -> Iterator[Hit]:
    """A data file the diff adds or changes (its added lines' text) that spells three or more
    tested numbers: a table of the tested inputs, whatever the code does with it."""
    found = sorted({float(t) for t in NUMBER.findall(text[:100_000])} & tested_numbers(literals))
    if len(found) >= SPELLED:
        yield Hit(
            "special-cases-test",
            0,
            f"the data spells {_listed(found)}, values the failing tests assert on, for the "
            "code to read; make the code right for every input",
        )


def _statements(source: Source, numbers: frozenset[float]) -> Iterator[Hit]:
    """The strings each new statement adds, read together: two per string, joined at run
    time, are still six."""
    docstrings = _docstrings(source.tree)
    shown = not redirected(source)
    spelled: dict[ast.AST, set[float]] = {}
    for node, text in source.strings():
        if node in docstrings or (shown and only_shown(source, node)):
            continue
        around: ast.AST = next((a for a in source.ancestors(node) if isinstance(a, ast.stmt)), node)
        spelled.setdefault(around, set()).update(float(t) for t in NUMBER.findall(text[:100_000]))
    for around, found in spelled.items():
        hits = sorted(found & numbers)
        if len(hits) >= SPELLED:
            yield Hit(
                "special-cases-test",
                line(around),
                f"{source.snippet(around)} spells {_listed(hits)}, values the failing tests "
                "assert on, as text the code reads; make the code right for every input",
            )


def _docstrings(tree: ast.Module) -> set[ast.AST]:
    found: set[ast.AST] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(first.value)
    return found


def _listed(found: list[float]) -> str:
    shown = ", ".join(f"{n:g}" for n in found[:6])
    return shown + (", ..." if len(found) > 6 else "")


# --- patterns ----------------------------------------------------------------------------------


def _patterns(source: Source, numbers: frozenset[float]) -> Iterator[Hit]:
    """A pattern passed to `re` or `fnmatch` that lists tested numbers."""
    whole = sorted(int(n) for n in numbers if n == int(n) and n >= 0)
    if len(whole) < 2:
        return
    shift = 10 ** len(str(whole[-1]))  # past every tested input, in its own digits
    window = range(max(WINDOW, shift))
    for node in source.new(ast.Call):
        assert isinstance(node, ast.Call)
        how = _matcher(source, node)
        if how is None:
            continue
        matched = [n for n in whole if how(str(n))]
        if len(matched) < 2 or sum(1 for n in matched if how(str(n + shift))) * 2 >= len(matched):
            continue  # the class recurs past the tests: a rule over digits
        if sum(1 for n in window if how(str(n))) > 2 * len(matched):
            continue  # most numbers match: a shape, not a list
        yield Hit(
            "special-cases-test",
            line(node),
            f"{source.snippet(node)} matches {_listed([float(n) for n in matched])}, values the "
            "failing tests assert on, and few numbers besides: a list of the tested inputs, not "
            "a rule; make the code right for every input",
        )


def _matcher(source: Source, node: ast.Call) -> Callable[[str], object] | None:
    """How the call matches text (a compiled pattern's bound method), or None."""
    name = source.name(node.func) or ""
    if name.startswith("fnmatch."):
        text = _argument(source, node, 1, "pat")
        pattern = fnmatch.translate(text) if text is not None else None
        semantics = "fullmatch"
    elif name.startswith("re."):
        pattern = _argument(source, node, 0, "pattern")
        semantics = _semantics(source, node, name.rpartition(".")[2])
    else:
        return None
    if pattern is None or len(pattern) > PATTERN_CAP:
        return None
    try:
        compiled = re.compile(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    method: Callable[[str], object] = getattr(compiled, semantics)
    return method


def _argument(source: Source, node: ast.Call, at: int, keyword: str) -> str | None:
    given = node.args[at] if len(node.args) > at else None
    given = given or next((k.value for k in node.keywords if k.arg == keyword), None)
    return source.folded(given) if given is not None else None


def _semantics(source: Source, node: ast.Call, function: str) -> str:
    """fullmatch, match or search: as `re.<function>` matches; a compiled pattern as the
    strictest way the file uses it (`.fullmatch` on the call, or on a name bound to it)."""
    if function in ("fullmatch", "match"):
        return function
    if function != "compile":
        return "search"
    parent = source.parents.get(node)
    used = {parent.attr} if isinstance(parent, ast.Attribute) else set()
    bound = source.parents.get(parent) if isinstance(parent, ast.Assign) else None
    targets = {t.id for t in getattr(parent, "targets", []) if isinstance(t, ast.Name)}
    if bound is not None or targets:
        used |= {
            n.attr
            for n in ast.walk(source.tree)
            if isinstance(n, ast.Attribute) and getattr(n.value, "id", None) in targets
        }
    return next((s for s in ("fullmatch", "match") if s in used), "search")
