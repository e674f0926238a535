"""The tested values written as text the code reads (part of `special-cases-test`).

A membership test against a tuple of tested inputs is one spelling of a special case; the same
inputs written inside text and read back at run time are another, whatever reads them:
`str(n) in "11 12 13 111"`, `f",{n}," in ",11,12,13,"`, `"x11x12".split("x")`, `re.findall`
over a constant, a regular expression that lists them (`re.fullmatch("1[123]|11[123]", s)`),
a docstring or comment parsed through `__doc__` or the module's own source. So:

- a string the diff adds (not a docstring, not only printed or logged) that spells three or more
  of the numbers the failing tests assert on is refused, however the code reads it;
- a pattern the diff passes to `re` that matches two or more tested numbers and none of them
  shifted past every tested input (`1[123]$` matches 1011 too: a rule over the last digits; a
  list of the inputs does not) is refused;
- code the diff adds that reads the module's own docstrings or source as data (`__doc__`,
  `inspect.getdoc`/`getsource`/`getcomments`, `linecache`, `open(__file__)`) is refused: the
  prose examples are the tests' answers, and text no rule reads as code would decide the result.
  Handing a docstring on as help text (`description=__doc__`, `print(__doc__)`, `wrapper.__doc__
  = func.__doc__`) is not reading it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from fixbot.screen.source import Hit, Source, line

SPELLED = 3  # distinct tested numbers a string must spell to single them out
NUMBER = re.compile(r"\d+(?:\.\d+)?")
PATTERN_CAP = 300  # a longer pattern is not run by the screen
SHOWN = ("print", "logging", "logger", "log", "warnings.warn")
OWN_TEXT = (
    *("inspect.getdoc", "inspect.getsource", "inspect.getsourcelines", "inspect.getcomments"),
    *("inspect.findsource", "linecache", "pydoc", "tokenize.open"),
)
SEMANTICS = {"fullmatch": "fullmatch", "match": "match"}  # re's others search
HELP_KEYWORDS = frozenset({"description", "epilog", "help", "usage", "doc", "__doc__"})


def tested_numbers(source: Source) -> frozenset[float]:
    return frozenset(v for kind, v in source.literals if kind == "n" and isinstance(v, float))


def spelled_in_text(source: Source) -> Iterator[Hit]:
    numbers = tested_numbers(source)
    if source.is_test or not numbers:
        return
    docstrings = _docstrings(source.tree)
    for node, text in source.strings():
        if node in docstrings or _only_shown(source, node):
            continue
        found = sorted({float(t) for t in NUMBER.findall(text[:100_000])} & numbers)
        if len(found) >= SPELLED:
            yield Hit(
                "special-cases-test",
                line(node),
                f"{source.snippet(node)} spells {_listed(found)}, values the failing tests "
                "assert on, as text the code reads; make the code right for every input",
            )
    yield from _patterns(source, numbers)
    yield from _own_text(source)


def _docstrings(tree: ast.Module) -> set[ast.AST]:
    found: set[ast.AST] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(first.value)
    return found


def _only_shown(source: Source, node: ast.AST) -> bool:
    """A string printed, logged or warned and nothing else (output no code reads back)."""
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, ast.Call):
            name = source.name(ancestor.func) or ""
            return any(name == s or name.startswith(s + ".") for s in SHOWN)
        if not isinstance(ancestor, ast.JoinedStr | ast.FormattedValue | ast.BinOp):
            return False
    return False


def _listed(found: list[float]) -> str:
    shown = ", ".join(f"{n:g}" for n in found[:6])
    return shown + (", ..." if len(found) > 6 else "")


def _patterns(source: Source, numbers: frozenset[float]) -> Iterator[Hit]:
    """A pattern passed to `re` that matches tested numbers and none past them."""
    whole = sorted(int(n) for n in numbers if n == int(n) and n >= 0)
    if len(whole) < 2:
        return
    shift = 10 ** len(str(whole[-1]))  # past every tested input, in its own digits
    for node in source.new(ast.Call):
        assert isinstance(node, ast.Call)
        name = source.name(node.func) or ""
        if not name.startswith("re.") or not node.args:
            continue
        pattern = source.folded(node.args[0])
        if pattern is None or len(pattern) > PATTERN_CAP:
            continue
        try:
            compiled = re.compile(pattern)
        except (re.error, RecursionError, OverflowError, ValueError):
            continue
        how = getattr(compiled, SEMANTICS.get(name.rpartition(".")[2], "search"))
        matched = [n for n in whole if how(str(n))]
        if len(matched) >= 2 and not any(how(str(n + shift)) for n in matched):
            yield Hit(
                "special-cases-test",
                line(node),
                f"{source.snippet(node)} matches {_listed([float(n) for n in matched])}, "
                "values the failing tests assert on, and no number past them: a list of the "
                "tested inputs, not a rule; make the code right for every input",
            )


def _own_text(source: Source) -> Iterator[Hit]:
    """Code the diff adds that reads the module's docstrings or source as data."""
    reads: list[ast.AST] = [
        node
        for node, name in source.references()
        if any(name == o or name.startswith(o + ".") for o in OWN_TEXT)
        or _loads_doc(source, node, name)
    ]
    reads += [n for n in source.new(ast.Call) if _opens_own_file(n)]
    for node in reads:
        yield Hit(
            "special-cases-test",
            line(node),
            f"{source.snippet(node)} reads the module's own docstrings or source as data: "
            "answers parsed from prose decide the result where no rule reads them; compute them",
        )


def _loads_doc(source: Source, node: ast.AST, name: str) -> bool:
    if name.rpartition(".")[2] != "__doc__" or not isinstance(node, ast.Attribute | ast.Name):
        return False
    return isinstance(node.ctx, ast.Load) and not _handed_on(source, node)


def _handed_on(source: Source, node: ast.AST) -> bool:
    """`description=__doc__`, `print(__doc__)`, `wrapper.__doc__ = func.__doc__`."""
    parent = source.parents.get(node)
    if isinstance(parent, ast.keyword):
        return parent.arg in HELP_KEYWORDS
    if isinstance(parent, ast.Assign) and parent.value is node:
        return all(getattr(t, "attr", getattr(t, "id", "")) == "__doc__" for t in parent.targets)
    if isinstance(parent, ast.Call) and node in parent.args:
        return _only_shown(source, node) or (source.name(parent.func) or "").endswith("Parser")
    return False


def _opens_own_file(node: ast.AST) -> bool:
    """`open(__file__)`, `Path(__file__).read_text()`, `io.open(__file__, "rb")`."""
    assert isinstance(node, ast.Call)
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if called not in ("open", "read_text", "read_bytes", "open_code"):
        return False
    targets = [*node.args[:1], *([func.value] if isinstance(func, ast.Attribute) else [])]
    for target in targets:
        if isinstance(target, ast.Call) and target.args:  # Path(__file__)
            target = target.args[0]
        if isinstance(target, ast.Name) and target.id == "__file__":
            return True
    return False
