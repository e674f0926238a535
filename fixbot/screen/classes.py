"""Whether an `if` states a rule over a class of inputs the failing tests show, judged by what
its condition does (run by `fixbot.screen.pinning` on the tested inputs' scale), not by the
literals it spells; anything this module cannot judge is read by its literals, as before.

`if 11 <= n % 100 <= 13: return "th"` names 11 and 13, which the tests pass, and is a rule: with
the conditions around it, each alternative of it (`a or b`) that holds for a tested input holds
for more than PINNED integers of the window (211 too), for SHOWN or more tested inputs (11, 12,
13, 111, 112, 113), and has no hole (no part of it, left out, adds back a handful of integers:
`n != 211`, `not 211 <= n <= 213`, `n - 211`). Only an `if` whose branches read no name at all
(`return "th"`: what it does, it does for the whole class) is judged so, reached through nothing
but `if`s, its conditions run whole failing for no integer, over a parameter never rebound of
an undecorated top-level function or method the failing tests call by name (so no caller,
decorator or default narrows what the tests pass); its `else` is judged as `not` the test.

The work is bounded per file (BUDGET evaluations; then conditions are read by their literals).
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Callable, Iterable, Sequence

from fixbot.screen.pinning import Failed, predicate, rebinds, small, unknown_of
from fixbot.screen.source import SCOPES, Source

PINNED = 16  # an alternative true for at most this many integers of the window singles out
SHOWN = 2  # a class the tests show holds for at least this many of their inputs
BUDGET = 400_000  # evaluations per file
ALTERNATIVES = 8  # a condition that splits into more is not judged
REACH = 1000  # the window reaches at least this far from 0
WIDEST = 20000  # a wider one is sampled: this many drawn
HUGE = 10**12  # a tested input beyond this does not count
GUARDS = (ast.If, ast.While, ast.IfExp)


@functools.lru_cache(maxsize=16)
def window(tested: frozenset[int], both_signs: bool = False) -> tuple[int, ...]:
    """The integers a condition is tried on: from 0 (or -SPAN, where a tested input is negative
    or `both_signs`) to SPAN, ten times the largest tested input (at least REACH); every one of
    them up to WIDEST of them, else every one within REACH of 0 and WIDEST spread by the
    golden ratio (evenly, and in step with no period); and the tested inputs themselves."""
    numbers = sorted(set(tested))
    span = max(REACH, 10 * max((abs(n) for n in numbers), default=0))
    low = -span if both_signs or any(n < 0 for n in numbers) else 0
    if span - low < WIDEST:
        return tuple(sorted({*range(low, span + 1), *numbers}))
    near = range(max(low, -REACH), REACH + 1)
    size, golden = span - low + 1, (math.sqrt(5) - 1) / 2
    drawn = (low + int((i * golden) % 1 * size) for i in range(WIDEST))  # no period repeats
    return tuple(sorted({*near, *drawn, *numbers}))


def true_for(
    holds: Callable[[int], bool], tried: Iterable[int], enough: int
) -> tuple[list[int], int]:
    """The integers of `tried` the condition holds for, no more than `enough`, and how many it
    was run on to tell."""
    found: list[int] = []
    runs = 0
    for x in tried:
        runs += 1
        if holds(x):
            found.append(x)
            if len(found) >= enough:
                break
    return found, runs


class _Many(Exception):
    """More alternatives than ALTERNATIVES."""


def disjuncts(condition: ast.expr) -> list[ast.expr] | None:
    """The alternatives the condition holds under, each a conjunction, or None when there are
    more than ALTERNATIVES."""
    if not small(condition):
        return None
    try:
        found = _alternatives(condition, negated=False)
    except _Many:
        return None
    return [parts[0] if len(parts) == 1 else ast.BoolOp(ast.And(), list(parts)) for parts in found]


def _alternatives(node: ast.expr, negated: bool) -> list[Sequence[ast.expr]]:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _alternatives(node.operand, not negated)
    if isinstance(node, ast.BoolOp):
        either = isinstance(node.op, ast.Or) != negated  # not (a and b) is (not a) or (not b)
        parts = [_alternatives(value, negated) for value in node.values]
        if either:
            found = [alternative for part in parts for alternative in part]
        else:
            found = [[]]
            for part in parts:
                found = [[*a, *b] for a in found for b in part]
                if len(found) > ALTERNATIVES:
                    raise _Many
        if len(found) > ALTERNATIVES:
            raise _Many
        return found
    return [[ast.UnaryOp(ast.Not(), node) if negated else node]]


def path(source: Source, node: ast.AST) -> list[ast.expr]:
    """The conditions under which `node` runs in its function: each enclosing `if`, `while`
    and `x if c else y`'s test, `not` the test in its `else`."""
    conditions: list[ast.expr] = []
    child = node
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, SCOPES):
            break
        if isinstance(ancestor, GUARDS) and child is not ancestor.test:
            body = ancestor.body if isinstance(ancestor.body, list) else [ancestor.body]
            inside = any(child is part for part in body)
            conditions.append(ancestor.test if inside else ast.UnaryOp(ast.Not(), ancestor.test))
        child = ancestor
    return conditions


def tested_numbers(source: Source) -> frozenset[int]:
    """The integers the failing tests pass as a call's only argument (up to HUGE: a window is
    drawn to ten times the largest)."""
    numbers = set()
    for args, _, _ in source.cases:
        kind, value = args[0] if len(args) == 1 else ("", None)
        if kind == "n" and isinstance(value, float) and value.is_integer() and abs(value) <= HUGE:
            numbers.add(int(value))
    return frozenset(numbers)


def _the_parameter(source: Source, test: ast.expr) -> str | None:
    """The unknown of `test` (dumped) when it is a parameter, never rebound, of a function the
    failing tests call by name, undecorated, at the module's top level or a method of a class
    there (so what the tests pass is what it gets: no caller, decorator or default narrows
    it), in a file that leaves the builtins the interpreter runs as they are; else None."""
    function = source.scope(test)
    unknown = unknown_of(test)
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or unknown is None:
        return None
    home = source.parents.get(function)
    top = home is source.tree or (
        isinstance(home, ast.ClassDef) and source.parents.get(home) is source.tree
    )
    tested = function.name in source.callees and not function.decorator_list
    if not (top and tested) or rebinds(source.tree):
        return None
    for arg in (a for a in ast.walk(function.args) if isinstance(a, ast.arg)):
        if ast.dump(ast.Name(id=arg.arg, ctx=ast.Load())) == unknown:
            return None if _rebound(function, arg.arg) else unknown
    return None


def _rebound(function: ast.AST, name: str) -> bool:
    for node in ast.walk(function):
        stored = isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
        if (stored and node.id == name) or (  # type: ignore[attr-defined]
            isinstance(node, ast.Global | ast.Nonlocal) and name in node.names
        ):
            return True
    return False


def _reads_nothing(statements: Sequence[ast.stmt]) -> bool:
    """Whether the statements read no name at all (`return "th"`): what they do, they do for
    every input that reaches them."""
    return not any(
        isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        for statement in statements
        for node in ast.walk(statement)
    )


def _judged(source: Source, conditions: Sequence[ast.expr]) -> list[bool] | None:
    """For each alternative of the conditions together that holds for a tested input: whether
    it is a class the tests show (more than PINNED integers of the window, SHOWN or more tested
    inputs, no hole: no part of it, left out, adds back a handful of integers, as `n != 211`,
    `not 211 <= n <= 213` or `n - 211` do). None when they cannot be run, or the file's budget
    is spent."""
    alternatives = disjuncts(
        conditions[0] if len(conditions) == 1 else ast.BoolOp(ast.And(), list(conditions))
    )
    if alternatives is None:
        return None
    tested = tested_numbers(source)
    tried = window(tested)
    judged: list[bool] = []
    for alternative in alternatives:
        holds = predicate(alternative)
        if holds is None:
            return None
        covered = sum(holds(n) for n in tested)
        if not covered:  # answers no tested input: nothing to single out
            continue
        true = _count(source, holds, tried)
        holed = _holed(source, alternative, holds, tried)
        if true is None or holed is None:
            return None
        judged.append(true > PINNED and covered >= SHOWN and not holed)
    return judged


def _holed(
    source: Source, alternative: ast.expr, holds: Callable[[int], bool], tried: Sequence[int]
) -> bool | None:
    """Whether a part of the alternative, left out, adds back a handful of integers (a hole
    punched in a class); None when a part cannot be run or the budget is spent."""
    parts = alternative.values if isinstance(alternative, ast.BoolOp) else []
    for left_out in range(len(parts)) if len(parts) > 1 else ():
        rest = [p for n, p in enumerate(parts) if n != left_out]
        wider = predicate(rest[0] if len(rest) == 1 else ast.BoolOp(ast.And(), rest))
        if wider is None:
            return None

        def outside(x: int, wider: Callable[[int], bool] = wider) -> bool:
            return wider(x) and not holds(x)

        added = _count(source, outside, tried)
        if added is None:
            return None
        if 0 < added <= PINNED:
            return True
    return False


def _count(source: Source, holds: Callable[[int], bool], tried: Sequence[int]) -> int | None:
    """For how many integers of `tried` the condition holds, counting to PINNED + 1; None once
    the file's budget is spent."""
    if source.spent + len(tried) > BUDGET:
        return None
    found, runs = true_for(holds, tried, PINNED + 1)
    source.spent += runs
    return len(found)


def a_class_the_tests_show(source: Source, test: ast.expr) -> bool:
    """Whether `test`, an `if`'s, states a rule over a class of inputs the tests show (see the
    module's docstring)."""
    owner = source.parents.get(test)
    if not isinstance(owner, ast.If) or owner.test is not test:
        return False
    if not (_reads_nothing(owner.body) and _reads_nothing(owner.orelse)):
        return False
    unknown = _the_parameter(source, test)
    around = path(source, owner)
    if unknown is None or any(unknown_of(c) != unknown for c in [test, *around]):
        return False
    if not _reached_through_ifs(source, owner) or _can_fail(source, [test, *around]):
        return False
    branches = [[test, *around]]  # what runs the body; and the `else`, where there is one
    branches += [[ast.UnaryOp(ast.Not(), test), *around]] if owner.orelse else []
    judged = [_judged(source, conditions) for conditions in branches]
    if any(j is None for j in judged):
        return False
    alternatives = [each for branch in judged for each in branch or []]
    return bool(alternatives) and all(alternatives)


def _reached_through_ifs(source: Source, owner: ast.If) -> bool:
    """Whether nothing but `if`s stands between the `if` and its function's body: a loop, a
    `try`, a `with` or a `match` around it decides whether it is reached by what `path`
    cannot read (`for _ in range(n < 200):`, `1 // (n < 200)` in a `try`)."""
    for ancestor in source.ancestors(owner):
        if isinstance(ancestor, SCOPES):
            return True
        if not isinstance(ancestor, ast.If):
            return False
    return False


def _can_fail(source: Source, conditions: Sequence[ast.expr]) -> bool:
    """Whether the conditions, run whole as Python runs them, fail for an integer of the window
    (`1 // (n % 1000 < 200)`: an alternative judged alone would hide it)."""
    together = conditions[0] if len(conditions) == 1 else ast.BoolOp(ast.And(), list(conditions))
    holds = predicate(together, errors=True)
    tried = window(tested_numbers(source))
    if holds is None or source.spent + len(tried) > BUDGET:
        return True
    source.spent += len(tried)
    try:
        for x in tried:
            holds(x)
    except Failed:
        return True
    return False


def rule_over_a_class(source: Source, compare: ast.Compare) -> bool:
    """Whether a comparison is part of an `if`'s test that states a rule over a class the tests
    show (`if n % 100 in (11, 12, 13): return "th"`)."""
    guard: ast.expr = compare
    while isinstance(parent := source.parents.get(guard), ast.BoolOp | ast.UnaryOp):
        guard = parent
    return a_class_the_tests_show(source, guard)
