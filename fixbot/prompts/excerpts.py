"""What the model is shown, within a token budget (`prompt_budget_tokens`).

In priority order, each part taking what the parts before it left:

1. every failing test id and its assertion message: always, even past the budget (then the
   messages are shortened; ids are never dropped);
2. the failing tests' own source, the test functions (tests are protected, not hidden);
3. the code frames: the lines the tracebacks name, then the code the failing tests import; a
   small file whole, else the top-level definition around the line, under "lines a-b of path";
4. the tracebacks, head and tail;
5. a map of the repository, module -> top-level names;
6. the plain file list.

Everything shown is repository content or test output: untrusted data, fenced, read only
through `read_inside` (never through a symlink). The template's own text, the CI jobs, the
lessons and the hint are the caller's: TEMPLATE_TOKENS keeps room for the template's text.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TypedDict

from fixbot.llm import estimate_tokens
from fixbot.records import CheckResult, failing_tests
from fixbot.snapshot.protected import read_inside

DEFAULT_BUDGET_TOKENS = 8000
TEMPLATE_TOKENS = 400  # the template's own text, the commit and the headings
# The failing tests' messages share up to FAILING_SHARE of the budget (the ids always show);
# the parts after them take up to these fractions, cumulatively: what one leaves flows on.
FAILING_SHARE = 0.30
SHARES = {"tests": 0.25, "frames": 0.65, "details": 0.80}
EXCERPTED_TESTS = 10  # the first failing tests whose source and tracebacks' lines are shown
CHARS_PER_TOKEN = 4  # estimate_tokens' ratio, to turn a token allowance into characters
MESSAGE_FLOOR = 32  # characters of each message kept, however many tests fail
WHOLE_FILE_CHARS = 6_000  # a file this small is shown whole
FRAME_CHARS = 8_000  # a definition larger than this is shown as a window around the line
WINDOW_LINES = 15  # lines either side of a named line, when no definition fits
READ_BYTES = 2_000_000  # larger files are named, never read
DETAILS_SHOWN = 5  # tracebacks shown, of the first failing tests
OMITTED_SHOWN = 20
MAP_FILE_BYTES = 256_000
MAP_FILES_PARSED = 1_000
MAP_NAMES = 20
ITEM_TOKENS = 8  # a heading, a fence and newlines around one item

_FRAME_IN_TRACE = re.compile(
    r"(?:^|[\s\"'(])(?:/workspace/)?(?:\./)?([\w./-]+\.py)(?::(\d+)|\", line (\d+))"
)
_BACKTICKS = re.compile(r"`{3,}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class FailingTest(TypedDict):
    id: str
    message: str
    detail: str


class Failure(TypedDict):
    """A failing test as the task prompt lists it: its id and its (maybe shortened) message."""

    id: str
    message: str  # indented four spaces, under the id


class Excerpt(TypedDict):
    title: str  # "calc.py (whole file)" or "lines 120-145 of calc.py (...)"
    text: str
    fence: str  # a backtick fence longer than any run of backticks inside the text


class Trace(TypedDict):
    id: str
    text: str
    fence: str


def failing(check: CheckResult, limit: int = 30) -> list[FailingTest]:
    return [
        FailingTest(id=t, message=check["tests"][t]["message"], detail=check["tests"][t]["detail"])
        for t in failing_tests(check)[:limit]
    ]


def prompt_values(
    check: CheckResult,
    tree: Path,
    files: Sequence[str],
    *,
    protected: Mapping[str, str],
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
) -> dict[str, object]:
    """The task template's values for this failure, within budget_tokens (estimated)."""
    avail = max(budget_tokens - TEMPLATE_TOKENS, 0)
    ids = failing_tests(check)
    sources = _Sources(tree, set(files))
    shown, used = failures(check, ids, int(avail * FAILING_SHARE))
    left = avail - used
    spent = 0  # by the parts after the failures, against their cumulative shares
    excerpted = ids[:EXCERPTED_TESTS]
    tests, used = sources.take(test_spans(excerpted, sources), _limit(avail, "tests", left, spent))
    left, spent = left - used, spent + used
    frames, used = sources.take(
        code_spans(check, excerpted, sources), _limit(avail, "frames", left, spent)
    )
    left, spent = left - used, spent + used
    details, used, untraced = traces(check, ids, _limit(avail, "details", left, spent))
    left -= used
    omitted = sources.skipped[:OMITTED_SHOWN]
    if len(sources.skipped) > OMITTED_SHOWN:
        omitted.append(f"{len(sources.skipped) - OMITTED_SHOWN} more excerpts")
    if len(ids) > len(excerpted):
        omitted.append(f"the source of {len(ids) - len(excerpted)} more failing tests")
    if untraced:
        omitted.append(f"the tracebacks of {untraced} more failing tests")
    left -= _cost(omitted, ITEM_TOKENS)
    modules, mapped, left = repo_map(sources, files, tokens=left)
    listing = file_list(files, protected, skip=mapped, tokens=left)
    return {
        "failing": shown,
        "failing_fence": _fence(f"{f['id']}\n{f['message']}" for f in shown),
        "tests": tests,
        "frames": frames,
        "details": details,
        "omitted": omitted,
        "repo_map": modules,
        "map_fence": _fence(modules),
        "tree": listing,
        "tree_fence": _fence(listing),
    }


def _limit(avail: int, part: str, left: int, spent: int) -> int:
    """What a part may take: its cumulative share of the budget less what came before it."""
    return max(0, min(left, int(avail * SHARES[part]) - spent))


def _cost(texts: Iterable[str], overhead: int) -> int:
    """Estimated tokens of texts, each with `overhead` tokens of markup around it."""
    return sum(estimate_tokens(text) + overhead for text in texts)


def _one_line(text: str) -> str:
    """An id or a path as one line of text: a newline in a file name cannot start a section."""
    return _CONTROL.sub("?", text)


def _fence(texts: Iterable[str]) -> str:
    """A backtick fence that no run of backticks in the texts can close."""
    longest = max((len(run) for text in texts for run in _BACKTICKS.findall(text)), default=2)
    return "`" * (longest + 1)


# 1. Failing tests and their messages


def failures(check: CheckResult, ids: Sequence[str], tokens: int) -> tuple[list[Failure], int]:
    """Every failing test with its message, the longest messages shortened to fit `tokens`
    (to MESSAGE_FLOOR characters at most, ids are never dropped); and the tokens spent."""
    messages = [check["tests"][t]["message"].strip() for t in ids]
    id_tokens = _cost((t + "\n" for t in ids), 1)  # a token each for rounding
    room = (tokens - id_tokens) * CHARS_PER_TOKEN - 8 * len(ids)  # the indent and newlines
    cap = _water_level([len(m) for m in messages], room)
    while True:
        shown = [
            Failure(id=_one_line(t), message=_indent(_shorten(m, cap)))
            for t, m in zip(ids, messages, strict=True)
        ]
        spent = _cost((f"{f['id']}\n{f['message']}\n" for f in shown), 0)
        if spent <= tokens or cap <= MESSAGE_FLOOR:  # multi-line messages indent more
            return shown, spent
        cap = max(MESSAGE_FLOOR, cap * 9 // 10)


def _water_level(lengths: list[int], room: int) -> int:
    """The largest cap for which the capped lengths sum to at most room (at least MESSAGE_FLOOR)."""
    left, count = room, len(lengths)
    for done, length in enumerate(sorted(lengths)):
        share = left // (count - done)
        if length > share:
            return max(share, MESSAGE_FLOOR)
        left -= length
    return max(lengths, default=0)


def _shorten(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: max(cap - 1, 0)].rstrip() + "…"


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines())


# 2. and 3. Source excerpts: the failing tests, then the code the tracebacks name


@dataclass
class _Source:
    text: str
    lines: list[str]
    module: ast.Module | None


@dataclass
class _Span:
    """One excerpt wanted from a file: its choices of lines, the widest first."""

    path: str
    choices: list[tuple[int, int]]  # (first line, last line), 1-based, inclusive
    line: int = 0  # the line a traceback or a finding names: shown already, nothing to add
    why: str = ""  # "the traceback names line 12"


@dataclass
class _Sources:
    """The snapshot's files, read and parsed once, and the excerpts chosen from them."""

    tree: Path
    known: set[str]
    cache: dict[str, _Source | None] = field(default_factory=dict)
    shown: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def get(self, path: str, max_bytes: int = READ_BYTES) -> _Source | None:
        if path not in self.cache:
            self.cache[path] = _read(self.tree, path, max_bytes) if path in self.known else None
        return self.cache[path]

    def covered(self, path: str, first: int, last: int) -> bool:
        return any(a <= first and last <= b for a, b in self.shown.get(path, []))

    def take(self, spans: Iterable[_Span], tokens: int) -> tuple[list[Excerpt], int]:
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
                    fence=_fence([text]),
                )
                cost = _cost([excerpt["title"] + "\n" + text], ITEM_TOKENS)
                if spent + cost <= tokens:
                    chosen.append(excerpt)
                    spent += cost
                    self.shown.setdefault(span.path, []).append((first, last))
                    break
            else:
                first, last = span.choices[-1]
                self.skipped.append(_title(span, first, last, len(source.lines)))
        return chosen, spent


def _read(tree: Path, path: str, max_bytes: int) -> _Source | None:
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
    return _Source(text, text.splitlines(), module)


def _title(span: _Span, first: int, last: int, total: int) -> str:
    path = _one_line(span.path)
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


def _too_big(source: _Source, first: int, last: int) -> bool:
    return sum(len(line) + 1 for line in source.lines[first - 1 : last]) > FRAME_CHARS


def _around(source: _Source, line: int) -> list[tuple[int, int]]:
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


def _test_location(test_id: str, known: set[str]) -> tuple[str, list[str]] | None:
    """'tests.test_calc.TestAdd::test_one[2]' -> ('tests/test_calc.py', ['TestAdd', 'test_one']):
    pytest's JUnit classname is the module's dotted path, then any test classes."""
    classname, _, name = test_id.partition("::")
    if not name or classname.startswith("command: "):
        return None
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if path in known:
            return path, [*parts[cut:], name.split("[", 1)[0]]
    return None


def _spans_of(source: _Source, path: str, node: ast.stmt) -> _Span:
    first, last = _extent(node)
    choices = [(first, last)]
    if _too_big(source, first, last):
        choices = [(first, min(last, first + 2 * WINDOW_LINES))]
    return _Span(path, choices)


def test_spans(ids: Sequence[str], sources: _Sources) -> list[_Span]:
    """The failing test functions, as the test files define them."""
    spans = []
    for test_id in ids:
        located = _test_location(test_id, sources.known)
        source = sources.get(located[0]) if located else None
        if located is None or source is None or source.module is None:
            continue
        node = _definition(source.module.body, located[1])
        if node is not None:
            spans.append(_spans_of(source, located[0], node))
    return spans


def trace_lines(text: str, known: set[str]) -> list[tuple[str, int]]:
    """(path, line) pairs a traceback names, repository files only, in order of mention."""
    found: dict[tuple[str, int], None] = {}
    for match in _FRAME_IN_TRACE.finditer(text):
        path, line = match[1], int(match[2] or match[3])
        if path in known:
            found.setdefault((path, line))
    return list(found)


def code_spans(check: CheckResult, ids: Sequence[str], sources: _Sources) -> list[_Span]:
    """The lines the tracebacks name (code before tests), the code the failing tests import
    (small modules whole, else the definitions the failing tests use), then the lines the
    ruff and mypy findings name."""
    named: dict[tuple[str, int], str] = {}
    for test_id in ids:
        result = check["tests"][test_id]
        for path, line in trace_lines(result["message"] + "\n" + result["detail"], sources.known):
            named.setdefault((path, line), f"the traceback names line {line}")
    traced = sorted(named, key=lambda pair: _is_test(pair[0]))  # stable: in order of mention
    for finding in check["findings"][:EXCERPTED_TESTS]:
        if finding["path"] in sources.known and finding["line"] > 0:
            why = f"{finding['tool']} {_one_line(finding['code'])} at line {finding['line']}"
            named.setdefault((finding["path"], finding["line"]), why)
    spans = [_span_around(sources, path, line, named[path, line]) for path, line in traced]
    spans += _imported_spans(ids, sources)
    spans += [
        _span_around(sources, *pair, why) for pair, why in named.items() if pair not in traced
    ]
    return [span for span in spans if span.choices]


def _span_around(sources: _Sources, path: str, line: int, why: str) -> _Span:
    source = sources.get(path)
    return _Span(path, _around(source, line) if source and source.lines else [], line, why)


def _is_test(path: str) -> bool:
    name = PurePosixPath(path).name
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def _imported_spans(ids: Sequence[str], sources: _Sources) -> Iterable[_Span]:
    used: set[str] = set()
    test_files: dict[str, None] = {}
    for test_id in ids:
        located = _test_location(test_id, sources.known)
        source = sources.get(located[0]) if located else None
        if located is None or source is None or source.module is None:
            continue
        node = _definition(source.module.body, located[1])
        used |= _names_used(node) if node is not None else set()
        test_files.setdefault(located[0])
    modules: dict[str, None] = {}
    for test_file in test_files:
        source = sources.get(test_file)
        for module in imported_modules(source.text if source else ""):
            modules.update(dict.fromkeys(module_files(module, sources.known)))
    for path in modules:
        source = sources.get(path)
        if source is None or not source.lines or _is_test(path):
            continue
        if len(source.text) <= WHOLE_FILE_CHARS:
            yield _Span(path, [(1, len(source.lines))])
            continue
        for statement in source.module.body if source.module else []:
            if isinstance(statement, Definition) and statement.name in used:
                yield _spans_of(source, path, statement)


def _names_used(node: ast.AST) -> set[str]:
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


# 4. Tracebacks


def traces(check: CheckResult, ids: Sequence[str], tokens: int) -> tuple[list[Trace], int, int]:
    """The first failing tests' tracebacks, head and tail, sharing `tokens`; the tokens spent
    and how many tracebacks were left out."""
    with_detail = [t for t in ids if check["tests"][t]["detail"].strip()]
    chosen = with_detail[:DETAILS_SHOWN]
    shown: list[Trace] = []
    spent = 0
    for number, test_id in enumerate(chosen):
        share = (tokens - spent) // (len(chosen) - number) - ITEM_TOKENS - estimate_tokens(test_id)
        if share < 50:  # too little to say anything
            continue
        text = _head_tail(check["tests"][test_id]["detail"].strip("\n"), share * CHARS_PER_TOKEN)
        shown.append(Trace(id=_one_line(test_id), text=text, fence=_fence([test_id, text])))
        spent += _cost([test_id + "\n" + text], ITEM_TOKENS)
    return shown, spent, len(with_detail) - len(shown)


def _head_tail(text: str, chars: int) -> str:
    """The text, or its first and last lines within `chars` with the middle elided."""
    if len(text) <= chars:
        return text
    mark = "[... {} lines elided ...]"
    half = (chars - len(mark) - 8) // 2
    head = text[:half].rsplit("\n", 1)[0] if "\n" in text[:half] else text[:half]
    tail = text[-half:].split("\n", 1)[-1] if "\n" in text[-half:] else text[-half:]
    elided = text.count("\n") - head.count("\n") - tail.count("\n")
    return f"{head}\n{mark.format(elided)}\n{tail}"


# 5. and 6. The repository: a map of its modules, then its file list


def repo_map(
    sources: _Sources, files: Sequence[str], *, tokens: int
) -> tuple[list[str], set[str], int]:
    """'path: name, name' for Python modules, those near the excerpts first, while they fit;
    unparsable and large files are skipped. Returns the lines, their paths, the tokens left."""
    near = {PurePosixPath(p).parent for p in sources.shown}
    python = [f for f in files if f.endswith(".py")]
    python.sort(key=lambda f: (PurePosixPath(f).parent not in near, _is_test(f)))
    lines: list[str] = []
    mapped: set[str] = set()
    for path in python[:MAP_FILES_PARSED]:
        source = sources.get(path, MAP_FILE_BYTES)
        names = _top_level_names(source.module) if source and source.module else []
        if not names:
            continue
        if len(names) > MAP_NAMES:
            names = [*names[:MAP_NAMES], f"+{len(names) - MAP_NAMES} more"]
        line = f"{_one_line(path)}: {', '.join(names)}"
        cost = _cost([line], 1)
        if cost > tokens:
            break
        lines.append(line)
        mapped.add(path)
        tokens -= cost
    return lines, mapped, tokens


def _top_level_names(module: ast.Module) -> list[str]:
    return [n.name for n in module.body if isinstance(n, Definition) and not n.name.startswith("_")]


def file_list(
    files: Sequence[str], protected: Mapping[str, str], *, skip: set[str], tokens: int
) -> list[str]:
    """The files the map does not name, protected ones marked, while they fit."""
    rest = [f for f in files if f not in skip]
    tokens -= ITEM_TOKENS  # the "... and N more" line
    listing: list[str] = []
    for path in rest:
        line = _one_line(path) + ("  (protected)" if path in protected else "")
        cost = _cost([line], 1)
        if cost > tokens:
            break
        listing.append(line)
        tokens -= cost
    if len(listing) < len(rest):
        listing.append(f"... and {len(rest) - len(listing)} more files")
    return listing
