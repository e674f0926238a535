"""Reward-hacking checks on a model's diff, before anything runs.

A model under test pressure may make the tests pass without fixing the code: skip them, exit
early, hook pytest, patch builtins, detect the test run, read the expected values from the tests,
rig `__eq__`, swallow errors, silence the gates, or special-case the tested inputs. `review`
looks only at what the diff adds (pre-existing code never counts) and names each finding so the
model learns what was refused and why.

    review(patch, tree=..., failing_tests=[...], strictness="strict") -> [PolicyFinding, ...]

"lenient" keeps the rules that are never a fix (LENIENT); "strict" also the ones a real fix
rarely needs; "off" none. The Python rules live in rules.py and runtime.py, and by capability
(what code reaches, whatever it is called) in reach.py, lookups.py, answers.py and checkers.py;
the rules on names and comments in textual.py; which lines are screened in lines.py; what the
failing tests assert in asserted.py.
"""

from __future__ import annotations

import ast
import platform
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fixbot.edits import FileChange, Patch
from fixbot.screen.answers import answers_from_tests
from fixbot.screen.asserted import asserted_callees, asserted_cases, asserted_literals
from fixbot.screen.bindings import WRITTEN, elsewhere, written
from fixbot.screen.checkers import stub_hits
from fixbot.screen.lines import added_lines, is_test_path, reviewed_lines, split_lines
from fixbot.screen.lookups import LOOKUP_RULES
from fixbot.screen.prose import spelled_in_data
from fixbot.screen.reach import REACH_RULES
from fixbot.screen.rules import RULES
from fixbot.screen.runtime import RUNTIME_RULES, literal_code
from fixbot.screen.source import Case, Hit, Key, Source
from fixbot.screen.textual import comment_hits, fallback_hits, name_hits

Strictness = Literal["strict", "lenient", "off"]

LENIENT = frozenset(
    {
        "adds-skip",
        "exits-early",
        "adds-pytest-hook",
        "patches-builtins",
        "detects-test-runner",
        "reads-tests",
        "hides-code",
    }
)
STRICT = LENIENT | {"overrides-eq", "swallows-errors", "silences-gate", "special-cases-test"}
STRICT |= {*RUNTIME_RULES, *REACH_RULES, *LOOKUP_RULES, "answers-from-tests"}
ALL_RULES = {**RULES, **RUNTIME_RULES, **REACH_RULES, **LOOKUP_RULES}
ALL_RULES["answers-from-tests"] = answers_from_tests
NESTING = 3  # exec("exec('...')"): how deep literal code passed to exec is screened
UNREADABLE = ast.Module(body=[], type_ignores=[])  # a file nested too deeply to parse here


@dataclass(frozen=True)
class PolicyFinding:
    rule: str  # kebab-case rule name
    path: str
    line: int  # line in the new file (0 when not applicable)
    detail: str  # what was found and why it is refused, for the model

    def __str__(self) -> str:
        return f"policy {self.rule}: {self.path}:{self.line}: {self.detail}"


def review(
    patch: Patch,
    *,
    tree: Path,
    failing_tests: Sequence[str],
    strictness: Strictness = "strict",
) -> list[PolicyFinding]:
    """What `patch` adds that games the checks instead of fixing the code, by rule."""
    if strictness == "off":
        return []
    rules = STRICT if strictness == "strict" else LENIENT
    literals = asserted_literals(tree, failing_tests) if "special-cases-test" in rules else {}
    known = asserted_cases(tree, failing_tests) if "answers-from-tests" in rules else []
    called = asserted_callees(tree, failing_tests) if "special-cases-test" in rules else frozenset()
    found: dict[tuple[str, str, int], PolicyFinding] = {}
    by_path = added_lines(patch.diff)
    parsed = {c.path: t for c in patch.changes if (t := _parsed(c)) is not None}
    trees = {path: tree for path, tree in parsed.items() if tree is not UNREADABLE}
    rebound, others = (
        written(trees) | ({WRITTEN} if len(trees) < len(parsed) else set()),
        elsewhere(trees),
    )
    for change in patch.changes:
        if change.new is None:
            continue
        lines = reviewed_lines(change, by_path)
        read = (parsed.get(change.path), rebound, others.get(change.path, frozenset()))
        for hit in _file_hits(change, lines, literals, known, called, read):
            if hit.rule in rules:
                found.setdefault((hit.rule, change.path, hit.line), _finding(change.path, hit))
    for path, hit in stub_hits(patch, tree):
        if hit.rule in rules:
            found.setdefault((hit.rule, path, hit.line), _finding(path, hit))
    return sorted(found.values(), key=lambda f: (f.path, f.line, f.rule))


def _finding(path: str, hit: Hit) -> PolicyFinding:
    return PolicyFinding(hit.rule, path, hit.line, hit.detail)


def python_ast(text: str) -> ast.Module:
    """The AST Python compiles from `text` written as UTF-8, as fixbot writes a candidate: a
    byte-order mark and a coding declaration read as the import system reads them. Raises
    SyntaxError, ValueError (also text that is not UTF-8), RecursionError or MemoryError."""
    return ast.parse(text.encode("utf-8"))


def unread_sources(patch: Patch) -> list[str]:
    """Why a pass with `patch` cannot count: a changed Python file the screen could not parse.
    With a syntax error it fails to import where the checks run fixbot's Python, but it may run
    under a newer one (the project's own), and then no rule read what ran."""
    problems = []
    for change in patch.changes:
        if change.new is None or not change.path.endswith((".py", ".pyi")):
            continue
        try:
            python_ast(change.new)
        except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            where = f" line {exc.lineno}" if isinstance(exc, SyntaxError) else ""
            problems.append(
                f"{change.path}{where} does not parse under fixbot's own Python "
                f"({platform.python_version()}: {type(exc).__name__}), so the screen never read "
                "what the checks ran; a pass it could not screen does not count (run fixbot "
                "with a Python as new as the project's)"
            )
    return problems


def _parsed(change: FileChange) -> ast.Module | None:
    """A changed Python file's new AST as Python compiles it (`python_ast`), or None: deleted,
    not Python, or not Python here (a syntax error: `unread_sources` keeps a pass from needing
    it), or nested too deeply for the screen (UNREADABLE)."""
    if change.new is None:
        return None
    try:
        module = python_ast(change.new)
    except (SyntaxError, ValueError):
        return None
    except (MemoryError, RecursionError):
        return UNREADABLE if change.path.endswith((".py", ".pyi")) else None
    return module if change.path.endswith((".py", ".pyi")) or _holds_code(module) else None


def _holds_code(module: ast.Module) -> bool:
    """Whether a file that is not named as Python is Python with code in it (a definition, an
    import or a lambda): a loader may run it as a module (`table.txt`), so it is screened as
    Python; JSON or `key = value` configuration is Python without code, and is not."""
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    return any(isinstance(node, (*kinds, ast.Lambda)) for node in ast.walk(module))


def _file_hits(
    change: FileChange,
    added: frozenset[int],
    literals: Mapping[Key, str],
    known: Sequence[Case],
    called: frozenset[str],
    parsed: tuple[ast.Module | None, frozenset[str], frozenset[str]],
) -> Iterator[Hit]:
    assert change.new is not None
    yield from name_hits(change)
    lines = split_lines(change.new)
    for number in sorted(added):
        if "pytest11" in lines[number - 1]:
            yield Hit(
                "adds-pytest-hook",
                number,
                "registers a pytest plugin (`pytest11` entry "
                "point): plugins change how tests run, not the code under test",
            )
    if parsed[0] is None and not change.path.endswith((".py", ".pyi")) and added:
        yield from _data_hits(change, added, literals, known, called)
        if not is_test_path(change.path):
            yield from spelled_in_data("\n".join(lines[n - 1] for n in sorted(added)), literals)
    if (parsed[0] is None and not change.path.endswith((".py", ".pyi"))) or not added:
        return
    yield from comment_hits(change.new, added)
    module, rebound, others = parsed
    if module is UNREADABLE:  # Python may compile it under a raised recursion limit
        yield Hit("hides-code", 0, "nests code too deeply for the screen to read; write it flat")
        return
    if module is None:
        yield from fallback_hits(lines, added)
        return
    test = is_test_path(change.path)
    text = change.new.removeprefix("\ufeff")
    source = Source(change.path, text, module, added, test, literals, known, called)
    source.rebound, source.elsewhere = rebound, others
    yield from _source_hits(source, NESTING)


def _data_hits(
    change: FileChange,
    added: frozenset[int],
    literals: Mapping[Key, str],
    known: Sequence[Case],
    called: frozenset[str],
) -> Iterator[Hit]:
    """A data file that reads as Python without code (JSON, `key = value`): its tables are
    judged as answers (a JSON map of the tested inputs to their answers, loaded at run time)."""
    assert change.new is not None
    try:
        module = python_ast(change.new)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return
    test = is_test_path(change.path)
    source = Source(change.path, change.new, module, added, test, literals, known, called)
    try:
        yield from answers_from_tests(source)
    except RecursionError:
        yield Hit("hides-code", 0, "nests data too deeply for the screen to read")


def _source_hits(source: Source, depth: int) -> Iterator[Hit]:
    """Every rule over one parsed file; then the literal code it passes to exec, eval or
    compile, screened as if the diff had added it there (its findings at the call's line)."""
    for name, rule in ALL_RULES.items():
        try:
            yield from rule(source)
        except RecursionError:  # fail closed: what the screen cannot read is not let through
            yield Hit(
                "hides-code",
                0,
                f"nests expressions too deeply for the screen's {name} rule to read; "
                "write the code flat",
            )
    for call, text in literal_code(source) if depth else ():
        try:
            inner = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        everything = frozenset(range(1, len(split_lines(text)) + 1))
        nested = Source(
            source.path, text, inner, everything, source.is_test, source.literals, source.cases
        )
        nested.rebound = frozenset({WRITTEN})  # code run by exec states no class
        for hit in _source_hits(nested, depth - 1):
            yield Hit(hit.rule, call.lineno, f"in the code passed to exec: {hit.detail}")


__all__ = [
    "ALL_RULES",
    "LENIENT",
    "STRICT",
    "PolicyFinding",
    "Strictness",
    "added_lines",
    "asserted_cases",
    "asserted_literals",
    "is_test_path",
    "review",
    "unread_sources",
]
