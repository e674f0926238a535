"""What the model is shown, within a token budget (`prompt_budget_tokens`).

In priority order, each part taking what the parts before it left:

1. every failing test id, the line it failed at and its evidence (failures.py): always, even
   past the budget (then the messages are shortened, heads and tails kept; ids are never
   dropped);
2. the failing tests' own source, the test functions (tests are protected, not hidden);
3. the code frames: the lines the tracebacks name, then the code the failing tests import; a
   small file whole, else the top-level definition around the line, under "lines a-b of path";
4. the tracebacks, head and tail (none for a test failing exactly as an earlier one);
5. a map of the repository, module -> top-level names;
6. the plain file list.

Everything shown is repository content or test output: untrusted data, fenced, read only
through `read_inside` (never through a symlink). The template's own text, the CI jobs, the
lessons and the hint are the caller's: TEMPLATE_TOKENS keeps room for the template's text.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TypedDict

from fixbot.model import CHARS_PER_TOKEN, estimate_tokens
from fixbot.prompts.failures import cleaned, failures, head_tail, noun, same_failures
from fixbot.prompts.sources import (
    ITEM_TOKENS,
    Definition,
    Excerpt,
    Sources,
    code_spans,
    cost,
    fence,
    is_test,
    one_line,
    test_spans,
)
from fixbot.records import CheckResult, failing_tests

DEFAULT_BUDGET_TOKENS = 8000
TEMPLATE_TOKENS = 400  # the template's own text, the commit and the headings
# The failing tests' messages share up to FAILING_SHARE of the budget (the ids always show);
# the parts after them take up to these fractions, cumulatively: what one leaves flows on.
FAILING_SHARE = 0.30
SHARES = {"tests": 0.25, "frames": 0.65, "details": 0.80}
EXCERPTED_TESTS = 10  # the first failing tests whose source and tracebacks' lines are shown
DETAILS_SHOWN = 5  # tracebacks shown, of the first failing tests
OMITTED_SHOWN = 20
MAP_FILE_BYTES = 256_000
CHECKS_SHOWN = 20  # of the tests' assert lines, for a whole-file ask
MAP_FILES_PARSED = 1_000
MAP_NAMES = 20


class Trace(TypedDict):
    id: str
    text: str
    fence: str


def prompt_values(
    check: CheckResult,
    tree: Path,
    files: Sequence[str],
    *,
    protected: Mapping[str, str],
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    compact: bool = False,
    spec: bool = True,
) -> dict[str, object]:
    """The task template's values for this failure, within budget_tokens (estimated).
    `compact` (a whole-file reply is asked): the failing tests, the tests and the code only;
    no tracebacks (each test's assertion stands for its traceback), map or file list. `spec`:
    the tests' source too (else the failing tests' ids, assertions and messages alone)."""
    avail = max(budget_tokens - TEMPLATE_TOKENS, 0)
    ids = failing_tests(check)
    sources = Sources(tree, set(files))
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
    tests, frames = _as_specification(tests, frames, protected)
    if not spec:
        tests = []
    checks = assert_lines(tests) if compact else []
    details: list[Trace] = []
    untraced = 0
    if not compact:
        details, used, untraced = traces(check, ids, _limit(avail, "details", left, spent))
        left -= used
    omitted = sources.skipped[:OMITTED_SHOWN]
    if len(sources.skipped) > OMITTED_SHOWN:
        omitted.append(f"{len(sources.skipped) - OMITTED_SHOWN} more excerpts")
    if len(ids) > len(excerpted):
        omitted.append(f"the source of {len(ids) - len(excerpted)} more failing tests")
    if untraced:
        omitted.append(f"the tracebacks of {untraced} more failing tests")
    left -= cost(omitted, ITEM_TOKENS)
    modules, mapped, left = repo_map(sources, files, tokens=0 if compact else left)
    listing = [] if compact else file_list(files, protected, skip=mapped, tokens=left)
    return {
        "failing": shown,
        "noun": noun(ids),
        "failing_fence": fence(f"{f['id']}\n{f['assertion']}\n{f['message']}" for f in shown),
        "tests": tests,
        "frames": frames,
        "details": details,
        "omitted": omitted,
        "repo_map": modules,
        "map_fence": fence(modules),
        "tree": listing,
        "tree_fence": fence(listing),
        "checks": checks,
        "checks_fence": fence(checks),
    }


def assert_lines(tests: Sequence[Excerpt], shown: int = CHECKS_SHOWN) -> list[str]:
    """The assertions of the tests' excerpts (`assert` statements, and unittest's
    `self.assert...(...)` calls, each on one line), once each, as text: what the tests check,
    for a model that copies a test's source when it is shown as code."""
    found: dict[str, None] = {}
    for excerpt in tests:
        found.update(dict.fromkeys(_assertions(excerpt["text"])))
    return list(found)[:shown]


ASSERTION_CHARS = 300  # an assertion longer than this is cut (its head kept)


def _assertions(text: str) -> list[str]:
    """`text`'s assertions in order, each as one line (one that spans lines as Python writes
    it back: a string's value, its inner lines and spaces, kept); the `assert` lines alone
    where the text does not parse (an excerpt cut short)."""
    parsed = _parsed(text)
    if parsed is None:
        lines = (line.strip() for line in text.splitlines())
        return [one_line(line) for line in lines if line.startswith("assert ")]
    module, source = parsed
    found = []
    for node in ast.walk(module):
        call = node.func if isinstance(node, ast.Call) else None
        is_check = isinstance(call, ast.Attribute) and call.attr.startswith("assert")
        if isinstance(node, ast.Assert | ast.Call) and (is_check or isinstance(node, ast.Assert)):
            one_of = node.end_lineno == node.lineno
            one = (ast.get_source_segment(source, node) or "") if one_of else ast.unparse(node)
            found.append((node.lineno, node.col_offset, one))
    return [one_line(line[:ASSERTION_CHARS]) for *_, line in sorted(found) if line]


def _parsed(text: str) -> tuple[ast.Module, str] | None:
    """A test's excerpt parsed, with the text parsed: dedented, or (a string in it at column
    0 keeps it from dedenting) as the body of a class, as a method is."""
    for source in (textwrap.dedent(text), f"class _:\n{text}"):
        try:
            return ast.parse(source), source
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
    return None


def _as_specification(
    tests: list[Excerpt], frames: list[Excerpt], protected: Mapping[str, str]
) -> tuple[list[Excerpt], list[Excerpt]]:
    """The excerpts of tests and protected files (the failing tests' own and those the
    tracebacks name) as the specification, the rest as the code under repair; a test
    function not shown again where its whole file is."""

    def spec_file(excerpt: Excerpt) -> bool:
        return excerpt["path"] in protected or is_test(excerpt["path"])

    spec = tests + [f for f in frames if spec_file(f)]
    whole = {f["path"] for f in spec if f["whole"]}
    spec = [f for f in spec if f["whole"] or f["path"] not in whole]
    return spec, [f for f in frames if not spec_file(f)]


def _limit(avail: int, part: str, left: int, spent: int) -> int:
    """What a part may take: its cumulative share of the budget less what came before it."""
    return max(0, min(left, int(avail * SHARES[part]) - spent))


# 4. Tracebacks


def traces(check: CheckResult, ids: Sequence[str], tokens: int) -> tuple[list[Trace], int, int]:
    """The first failing tests' tracebacks, head and tail, sharing `tokens`; the tokens spent
    and how many tracebacks were left out. A test that fails exactly as an earlier one does
    (`same_failures`) adds nothing and is not shown; its share is not handed to the other
    tracebacks (one of ten alike takes what it took beside four others) but left to the
    parts after them: the repository's map and file list."""
    same = same_failures(check, ids)
    traced = [t for t in ids if check["tests"][t]["detail"].strip()]
    slots = min(DETAILS_SHOWN, len(traced))
    chosen = [t for t in traced if t not in same][:DETAILS_SHOWN]
    shown: list[Trace] = []
    spent = 0
    for number, test_id in enumerate(chosen):
        share = (tokens - spent) // (slots - number) - ITEM_TOKENS - estimate_tokens(test_id)
        if share < 50:  # too little to say anything
            continue
        detail = cleaned(check["tests"][test_id]["detail"]).strip("\n")
        text = head_tail(detail, int(share * CHARS_PER_TOKEN))
        shown.append(Trace(id=one_line(test_id), text=text, fence=fence([test_id, text])))
        spent += cost([test_id + "\n" + text], ITEM_TOKENS)
    return shown, spent, len(traced) - len(shown)


# 5. and 6. The repository: a map of its modules, then its file list


def repo_map(
    sources: Sources, files: Sequence[str], *, tokens: int
) -> tuple[list[str], set[str], int]:
    """'path: name, name' for Python modules, those near the excerpts first, while they fit;
    unparsable and large files are skipped. Returns the lines, their paths, the tokens left."""
    near = {PurePosixPath(p).parent for p in sources.shown}
    python = [f for f in files if f.endswith(".py")]
    python.sort(key=lambda f: (PurePosixPath(f).parent not in near, is_test(f)))
    lines: list[str] = []
    mapped: set[str] = set()
    for path in python[:MAP_FILES_PARSED]:
        source = sources.get(path, MAP_FILE_BYTES)
        names = _top_level_names(source.module) if source and source.module else []
        if not names:
            continue
        if len(names) > MAP_NAMES:
            names = [*names[:MAP_NAMES], f"+{len(names) - MAP_NAMES} more"]
        line = f"{one_line(path)}: {', '.join(names)}"
        tokens_of = cost([line], 1)
        if tokens_of > tokens:
            break
        lines.append(line)
        mapped.add(path)
        tokens -= tokens_of
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
        line = one_line(path) + ("  (protected)" if path in protected else "")
        tokens_of = cost([line], 1)
        if tokens_of > tokens:
            break
        listing.append(line)
        tokens -= tokens_of
    if len(listing) < len(rest):
        listing.append(f"... and {len(rest) - len(listing)} more files")
    return listing
