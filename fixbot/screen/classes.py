"""Whether conditions state a rule over a class of inputs the failing tests show, or single the
tested inputs out, judged by what the conditions do (run by `fixbot.screen.pinning` on the
tested inputs' scale), not by the literals they spell.

`if 11 <= n % 100 <= 13: return "th"` names 11 and 13, which the tests pass, and is a rule:
with the conditions around it, each alternative of it (`a or b`) that holds for a tested input
holds for more than PINNED integers of the tested inputs' window (211 too) and for SHOWN or
more tested inputs (11, 12, 13, 111, 112, 113). Only an `if` whose branches read nothing (no
name at all: `return "th"`, `suffix = "th"`) is judged so, over a parameter the function never
rebinds, with every condition around it run: what such an `if` does, it does for the whole
class, and nothing under it can narrow the class again. Anything else is read by its literals.

The other way, `pins_tested_inputs`: an `if` whose conditions hold for at most PINNED integers
of a window of both signs, at least half of them tested inputs (`110 < n < 114`), singles them
out with or without a tested literal in it.

The work is bounded per file (BUDGET evaluations; then conditions are read by their literals).
"""

from __future__ import annotations

import ast
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
GUARDS = (ast.If, ast.While, ast.IfExp)


def window(tested: Iterable[int], both_signs: bool = False) -> list[int]:
    """The integers a condition is tried on: from 0 (or -SPAN, where a tested input is negative
    or `both_signs`) to SPAN, ten times the largest tested input (at least REACH); every one of
    them up to WIDEST of them, else every one within REACH of 0 and WIDEST spread by the
    golden ratio (evenly, and in step with no period); and the tested inputs themselves."""
    numbers = sorted(set(tested))
    span = max(REACH, 10 * max((abs(n) for n in numbers), default=0))
    low = -span if both_signs or any(n < 0 for n in numbers) else 0
    if span - low < WIDEST:
        return sorted({*range(low, span + 1), *numbers})
    near = range(max(low, -REACH), REACH + 1)
    size, golden = span - low + 1, (math.sqrt(5) - 1) / 2
    drawn = (low + int((i * golden) % 1 * size) for i in range(WIDEST))  # no period repeats
    return sorted({*near, *drawn, *numbers})


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
    """The integers the failing tests pass as a call's only argument."""
    numbers = set()
    for args, _, _ in source.cases:
        kind, value = args[0] if len(args) == 1 else ("", None)
        if kind == "n" and isinstance(value, float) and value.is_integer():
            numbers.add(int(value))
    return frozenset(numbers)


def _the_parameter(source: Source, test: ast.expr) -> str | None:
    """The unknown of `test` (dumped) when it is a parameter its function never rebinds, in a
    file that leaves the builtins the interpreter runs as they are; else None."""
    function = source.scope(test)
    unknown = unknown_of(test)
    if not isinstance(function, SCOPES) or unknown is None or rebinds(source.tree):
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


def _judged(
    source: Source, conditions: Sequence[ast.expr], both_signs: bool
) -> list[tuple[list[int], int]] | None:
    """For each alternative of the conditions together: (integers of the window it holds for,
    up to PINNED + 1; how many tested inputs it holds for). None when they cannot be run, or
    the file's budget is spent."""
    alternatives = disjuncts(
        conditions[0] if len(conditions) == 1 else ast.BoolOp(ast.And(), list(conditions))
    )
    if alternatives is None:
        return None
    tested = tested_numbers(source)
    tried = window(tested, both_signs)
    judged: list[tuple[list[int], int]] = []
    for alternative in alternatives:
        holds = predicate(alternative)
        if holds is None:
            return None
        covered = sum(holds(n) for n in tested)
        if not covered:  # answers no tested input: nothing to single out
            judged.append(([], 0))
            continue
        key = f"{both_signs} {ast.dump(alternative)}"
        if key not in source.memo:
            if source.spent + len(tried) > BUDGET:
                return None
            source.memo[key], runs = true_for(holds, tried, PINNED + 1)
            source.spent += runs
        judged.append((source.memo[key], covered))
    return judged


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
    judged = [_judged(source, conditions, both_signs=False) for conditions in branches]
    if any(j is None for j in judged):
        return False
    alternatives = [each for branch in judged for each in branch or []]
    return any(covered for _, covered in alternatives) and all(
        not covered or (len(true) > PINNED and covered >= SHOWN) for true, covered in alternatives
    )


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


def _punches_a_hole(node: ast.AST) -> bool:
    """`n != 211`, `n not in (...)`, `not n == 211`: a value left out of a class."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = node.operand
        return isinstance(inner, ast.Compare) and all(
            isinstance(o, ast.Eq | ast.In) for o in inner.ops
        )
    return isinstance(node, ast.Compare) and any(
        isinstance(o, ast.NotEq | ast.NotIn) for o in node.ops
    )


def _can_fail(source: Source, conditions: Sequence[ast.expr]) -> bool:
    """Whether the conditions, run whole as Python runs them, fail for an integer of the window
    (`1 // (n % 1000 < 200)`: an alternative judged alone would hide it), or punch holes in a
    class where the diff writes it (`n != 211`: the untested inputs it leaves out are singled
    out)."""
    for condition in conditions:
        for node in ast.walk(condition):
            if source.touched(node) and _punches_a_hole(node):
                return True
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


def pins_tested_inputs(source: Source, test: ast.expr) -> bool:
    """Whether an `if`'s or a `while`'s conditions (its test and those around it that are about
    the same parameter) hold for a handful of integers, at least half of them tested inputs
    (`if 110 < n < 114:`)."""
    owner = source.parents.get(test)
    unknown = _the_parameter(source, test)
    if not isinstance(owner, ast.If | ast.While) or unknown is None:
        return False
    conditions = [c for c in [test, *path(source, owner)] if unknown_of(c) == unknown]
    judged = _judged(source, conditions, both_signs=True)
    telling = tested_numbers(source) - {0, 1, -1}  # `if not n: return "zero"` is a base case
    return judged is not None and any(
        telling.intersection(true)
        and len(true) <= PINNED
        and 2 * len(telling.intersection(true)) >= len(true)
        for true, _ in judged
    )
