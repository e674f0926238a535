"""Source excerpts: the repository's files, read and parsed once, and the spans of them worth
showing (the failing tests' functions, the code the tracebacks name and the tests import), each
chosen within a token allowance. Repository text is untrusted: read only through `read_inside`,
shown in a fence it cannot close."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TypedDict

from fixbot.inert import fence_marker
from fixbot.model import estimate_tokens
from fixbot.prompts.imports import imported_from, imported_modules, module_files, names_used
from fixbot.records import CheckResult
from fixbot.snapshot import read_inside

WHOLE_FILE_CHARS = 6_000  # a file this small is shown whole
FRAME_CHARS = 8_000  # a definition larger than this is shown as a window around the line
WINDOW_LINES = 15  # lines either side of a named line, when no definition fits
READ_BYTES = 2_000_000  # larger files are named, never read
ITEM_TOKENS = 8  # a heading, a fence and newlines around one item

_FRAME_IN_TRACE = re.compile(
    r"(?:^|[\s\"'(])(?:/workspace/)?(?:\./)?([\w./-]+\.py)(?::(\d+)|\", line (\d+))"
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_STACK_START = re.compile(
    r"^.*\(most recent call (?:first|last)\):|^During handling of the above exception"
    r"|^The above exception was the direct cause",
    re.MULTILINE,
)
_RECENT_FIRST = re.compile(r"\(most recent call first\):")


class Excerpt(TypedDict):
    title: str  # "calc.py (whole file)" or "lines 120-145 of calc.py (...)"
    text: str
    fence: str  # a backtick fence longer than any run of backticks inside the text
    path: str
    whole: bool  # the whole file


def cost(texts: Iterable[str], overhead: int) -> int:
    """Estimated tokens of texts, each with `overhead` tokens of markup around it."""
    return sum(estimate_tokens(text) + overhead for text in texts)


def one_line(text: str) -> str:
    """An id or a path as one line of text: a newline in a file name cannot start a section."""
    return _CONTROL.sub("?", text)


def fence(texts: Iterable[str]) -> str:
    """A backtick fence that no run of backticks in the texts can close (the one rule,
    fixbot.inert's, that report.md and the PR body use too)."""
    return fence_marker(*texts)


# 2. and 3. Source excerpts: the failing tests, then the code the tracebacks name


@dataclass
class Source:
    text: str
    lines: list[str]
    module: ast.Module | None


@dataclass
class Span:
    """One excerpt wanted from a file: its choices of lines, the widest first."""

    path: str
    choices: list[tuple[int, int]]  # (first line, last line), 1-based, inclusive
    line: int = 0  # the line a traceback or a finding names: shown already, nothing to add
    why: str = ""  # "the traceback names line 12"


@dataclass
class Sources:
    """The snapshot's files, read and parsed once, and the excerpts chosen from them."""

    tree: Path
    known: set[str]
    cache: dict[str, Source | None] = field(default_factory=dict)
    shown: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def get(self, path: str, max_bytes: int = READ_BYTES) -> Source | None:
        if path not in self.cache:
            self.cache[path] = _read(self.tree, path, max_bytes) if path in self.known else None
        return self.cache[path]

    def covered(self, path: str, first: int, last: int) -> bool:
        return any(a <= first and last <= b for a, b in self.shown.get(path, []))

    def take(self, spans: Iterable[Span], tokens: int) -> tuple[list[Excerpt], int]:
        """An excerpt for each span, in order: its widest choice that fits, none when one
        already shown covers it; a span that fits in no way is named in `skipped`."""
        chosen: list[Excerpt] = []
        spent = 0
        for span in spans:
            source = self.get(span.path)
            wanted = [(span.line, span.line)] if span.line else span.choices
            if source is None or any(self.covered(span.path, a, b) for a, b in wanted):
                continue
            for first, last in span.choices:
                text = "\n".join(source.lines[first - 1 : last])
                excerpt = Excerpt(
                    title=_title(span, first, last, len(source.lines)),
                    text=text,
                    fence=fence([text]),
                    path=span.path,
                    whole=first == 1 and last >= len(source.lines),
                )
                tokens_of = cost([excerpt["title"] + "\n" + text], ITEM_TOKENS)
                if spent + tokens_of <= tokens:
                    chosen.append(excerpt)
                    spent += tokens_of
                    self.shown.setdefault(span.path, []).append((first, last))
                    break
            else:
                first, last = span.choices[-1]
                self.skipped.append(_title(span, first, last, len(source.lines)))
        return chosen, spent


def _read(tree: Path, path: str, max_bytes: int) -> Source | None:
    try:
        if os.lstat(tree / path).st_size > max_bytes:
            return None
    except OSError:
        return None
    text = read_inside(tree, path)
    if text is None:
        return None
    try:
        module: ast.Module | None = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        module = None
    return Source(text, text.splitlines(), module)


def _title(span: Span, first: int, last: int, total: int) -> str:
    path = one_line(span.path)
    if first == 1 and last >= total:
        return f"{path} (whole file)"
    why = f"; {span.why}" if span.why else ""
    return f"lines {first}-{last} of {path} ({total} lines{why})"


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _extent(node: ast.stmt) -> tuple[int, int]:
    """A statement's lines, its decorators included."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return first, node.end_lineno or node.lineno


def _window(line: int, total: int, lines: int = WINDOW_LINES) -> tuple[int, int]:
    return max(1, line - lines), min(total, line + lines)


def _too_big(source: Source, first: int, last: int) -> bool:
    return sum(len(line) + 1 for line in source.lines[first - 1 : last]) > FRAME_CHARS


def _around(source: Source, line: int) -> list[tuple[int, int]]:
    """Choices for a named line: the whole file when small, the top-level definition around
    it (or, in a large class, the method), then a window of lines."""
    total = len(source.lines)
    line = min(max(line, 1), total)
    choices = [(1, total)] if len(source.text) <= WHOLE_FILE_CHARS else []
    body = source.module.body if source.module else []
    for _depth in range(2):
        enclosing = [n for n in body if _extent(n)[0] <= line <= _extent(n)[1]]
        if not enclosing or not isinstance(enclosing[0], Definition):
            break
        extent = _extent(enclosing[0])
        if not _too_big(source, *extent):
            choices.append(extent)
            break
        body = enclosing[0].body if isinstance(enclosing[0], ast.ClassDef) else []
    return [*choices, _window(line, total)]


def _definition(body: list[ast.stmt], names: Sequence[str]) -> Definition | None:
    """The nested definition `names` (class, then method) in a module's body."""
    node: Definition | None = None
    for name in names:
        node = next((n for n in body if isinstance(n, Definition) and n.name == name), None)
        if node is None:
            return None
        body = node.body
    return node


def names_a_test(test_id: str) -> bool:
    """Whether a failing entry is a test, not a check that is not a test run (`check: NAME`,
    `command: ARGV`: its findings or output are its message, checks/part.py)."""
    classname, _, name = test_id.partition("::")
    return bool(name) and not classname.startswith(("command: ", "check: "))


def _test_location(test_id: str, known: set[str]) -> tuple[str, list[str]] | None:
    """'tests.test_calc.TestAdd::test_one[2]' -> ('tests/test_calc.py', ['TestAdd', 'test_one']):
    pytest's JUnit classname is the module's dotted path, then any test classes."""
    if not names_a_test(test_id):
        return None
    classname, _, name = test_id.partition("::")
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if path in known:
            return path, [*parts[cut:], name.split("[", 1)[0]]
    return None


def _spans_of(source: Source, path: str, node: ast.stmt) -> Span:
    first, last = _extent(node)
    choices = [(first, last)]
    if _too_big(source, first, last):
        choices = [(first, min(last, first + 2 * WINDOW_LINES))]
    return Span(path, choices)


def test_definition(test_id: str, sources: Sources) -> tuple[str, Definition] | None:
    """(the test file, the failing test's function as it defines it), when it can be read."""
    located = _test_location(test_id, sources.known)
    source = sources.get(located[0]) if located else None
    if located is None or source is None or source.module is None:
        return None
    node = _definition(source.module.body, located[1])
    return (located[0], node) if node is not None else None


def test_spans(ids: Sequence[str], sources: Sources) -> list[Span]:
    """The failing test functions, as the test files define them."""
    spans = []
    for test_id in ids:
        found = test_definition(test_id, sources)
        source = sources.get(found[0]) if found else None
        if found is not None and source is not None:
            spans.append(_spans_of(source, found[0], found[1]))
    return spans


def trace_lines(text: str, known: set[str]) -> list[tuple[str, int]]:
    """(path, line) pairs a traceback names, repository files only, nearest the raise first:
    an engineer reads a stack from the frame that raised outward, so the frames the budget
    keeps are the deepest. Each stack of the text (a chained exception's too) is read in its
    own direction (Python's and pytest's most recent call last, faulthandler's first); the
    frames are taken by their distance from the raise, one rank of every stack at a time."""
    ranked: dict[tuple[str, int], tuple[int, int]] = {}
    for block, stack in enumerate(_stacks(text)):
        frames = [(m[1], int(m[2] or m[3])) for m in _FRAME_IN_TRACE.finditer(stack)]
        if not _RECENT_FIRST.search(stack):
            frames.reverse()
        for rank, frame in enumerate(f for f in frames if f[0] in known):
            ranked[frame] = min(ranked.get(frame, (rank, block)), (rank, block))
    return sorted(ranked, key=ranked.__getitem__)


def _stacks(text: str) -> list[str]:
    """The text's stacks: split where one starts (a traceback's or a thread dump's header) or
    where an exception chains to the next."""
    starts = sorted({0, *(m.start() for m in _STACK_START.finditer(text))})
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def code_spans(
    check: CheckResult, ids: Sequence[str], sources: Sources, findings_shown: int = 10
) -> list[Span]:
    """The lines the tracebacks name (code before tests), the code the failing tests import
    (small modules whole, else the definitions the failing tests use), then the lines the
    ruff and mypy findings name."""
    named: dict[tuple[str, int], str] = {}
    for test_id in ids:
        result = check["tests"][test_id]
        for path, line in trace_lines(result["message"] + "\n" + result["detail"], sources.known):
            named.setdefault((path, line), f"the traceback names line {line}")
    traced = sorted(named, key=lambda pair: is_test(pair[0]))  # stable: nearest the raise first
    for finding in check["findings"][:findings_shown]:
        if finding["path"] in sources.known and finding["line"] > 0:
            why = f"{finding['tool']} {one_line(finding['code'])} at line {finding['line']}"
            named.setdefault((finding["path"], finding["line"]), why)
    spans = [_span_around(sources, path, line, named[path, line]) for path, line in traced]
    spans += _imported_spans(ids, sources)
    spans += [
        _span_around(sources, *pair, why) for pair, why in named.items() if pair not in traced
    ]
    return [span for span in spans if span.choices]


def _span_around(sources: Sources, path: str, line: int, why: str) -> Span:
    source = sources.get(path)
    return Span(path, _around(source, line) if source and source.lines else [], line, why)


def is_test(path: str) -> bool:
    name = PurePosixPath(path).name
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def _imported_spans(ids: Sequence[str], sources: Sources) -> Iterable[Span]:
    """The code the failing tests import, where it is defined: of each module they import, the
    definitions of the names they use (a small module whole), followed through the modules it
    takes them from (a package's `__init__.py` that re-exports its submodules is not the code
    under repair); a module whose used names are not found anywhere, small, whole."""
    used: set[str] = set()
    test_files: dict[str, None] = {}
    for test_id in ids:
        found = test_definition(test_id, sources)
        if found is not None:
            used |= names_used(found[1])
            test_files.setdefault(found[0])
    modules: dict[str, None] = {}
    for test_file in test_files:
        source = sources.get(test_file)
        for module in imported_modules(source.text if source else ""):
            modules.update(dict.fromkeys(module_files(module, sources.known)))
    wanted: dict[str, dict[int, ast.stmt]] = {}  # file -> its statements to show, in order
    for path in modules:
        source = sources.get(path)
        if source is None or not source.lines or is_test(path):
            continue
        defining = _defining(path, {name: name for name in used}, sources, set())
        if not defining and len(source.text) <= WHOLE_FILE_CHARS:
            defining = [(path, [])]
        for where, nodes in defining:
            wanted.setdefault(where, {}).update((id(node), node) for node in nodes)
    for where, shown in wanted.items():
        defined_in = sources.get(where)
        assert defined_in is not None
        if len(defined_in.text) <= WHOLE_FILE_CHARS:
            yield Span(where, [(1, len(defined_in.lines))])
        else:
            yield from (_spans_of(defined_in, where, node) for node in shown.values())


REEXPORT_DEPTH = 3  # `__init__.py` -> a submodule -> its submodule


def _defining(
    path: str, wanted: Mapping[str, str], sources: Sources, seen: set[str], depth: int = 0
) -> list[tuple[str, list[ast.stmt]]]:
    """The files that define `wanted`'s names ({name here: name in this module}), each with
    its statements that define them: this module's own, then those it imports them from."""
    source = sources.get(path)
    if path in seen or source is None or source.module is None or not wanted:
        return []
    seen.add(path)
    own = [n for n in source.module.body if _defines(n) & set(wanted.values())]
    found = [(path, own)] if own else []
    if depth >= REEXPORT_DEPTH:
        return found
    defined: set[str] = set().union(*(_defines(n) for n in own))
    rest = {here: there for here, there in wanted.items() if there not in defined}
    for origin, names in imported_from(source.module, path, sources.known):
        star = "*" in names.values()
        onward = {
            here: names.get(there, there) for here, there in rest.items() if star or there in names
        }
        found += _defining(origin, onward, sources, seen, depth + 1)
    return found


def _defines(node: ast.stmt) -> set[str]:
    """The names a top-level statement defines: a function's or class's, an assignment's."""
    if isinstance(node, Definition):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else []
    if isinstance(node, ast.AnnAssign):
        targets = [node.target]
    return {t.id for t in targets if isinstance(t, ast.Name)}
