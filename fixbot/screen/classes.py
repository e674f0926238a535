"""Whether conditions state a rule over a class of inputs the failing tests show, or single the
tested inputs out, judged by what the conditions do (run by `fixbot.screen.pinning` on the
tested inputs' scale), not by the literals they spell.

`11 <= n % 100 <= 13` names 11 and 13, which the tests pass, and is a rule: it holds for more
than PINNED integers of the window (211 too) and for SHOWN or more tested inputs (11, 12, 13,
111, 112, 113). Each alternative of a condition is judged alone (`11 <= n <= 13 or n % 10 ==
0` is a table of the tested inputs beside a class), and so is every narrowing of what it
guards: the conditions around it and every condition under it (`if n < 200:`, `... if n < 200
else ...`, `while n < 200:`), and the other branch. `n == 111`, `110 < n < 114`, `n % 1000 ==
111` (at the scale of inputs up to 113), or a modulus that covers one tested input single them
out, however they are spelled.

The unknown must be a parameter of the function; the work is bounded per file (BUDGET
evaluations, then conditions are read by their literals again).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from fixbot.screen.pinning import predicate, rebinds, small, true_for, unknown_of, window
from fixbot.screen.source import SCOPES, Source

PINNED = 16  # an alternative true for at most this many integers of the window singles out
SHOWN = 2  # a class the tests show holds for at least this many of their inputs
BUDGET = 400_000  # evaluations per file
INNER = 16  # conditions under a guard judged at most (more: not a class)
ALTERNATIVES = 8  # a condition that splits into more is not judged
GUARDS = (ast.If, ast.While, ast.IfExp)


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


def _a_parameter(source: Source, about: ast.expr) -> bool:
    """Whether `about`'s unknown is a parameter of its function (in a file that leaves the
    builtins the interpreter runs as they are)."""
    if rebinds(source.tree):
        return False
    function = source.scope(about)
    if not isinstance(function, SCOPES):
        return False
    args = (a for a in ast.walk(function.args) if isinstance(a, ast.arg))
    return unknown_of(about) in {ast.dump(ast.Name(id=a.arg, ctx=ast.Load())) for a in args}


def _judged(
    source: Source, conditions: Sequence[ast.expr], about: ast.expr
) -> list[tuple[int, int]] | None:
    """For each alternative of the conditions about `about`'s unknown (the others do not narrow
    it), together: (integers of the window it holds for, up to PINNED + 1; tested inputs it
    holds for). None when they cannot be run, or the file's budget is spent."""
    unknown = unknown_of(about)
    own = [c for c in conditions if unknown is not None and unknown_of(c) == unknown]
    if not own:
        return None
    alternatives = disjuncts(own[0] if len(own) == 1 else ast.BoolOp(ast.And(), own))
    if alternatives is None:
        return None
    tested = tested_numbers(source)
    tried = window(tested)
    judged = []
    for alternative in alternatives:
        holds = predicate(alternative)
        if holds is None:
            return None
        covered = sum(holds(n) for n in tested)
        if not covered:  # answers no tested input: nothing to single out
            judged.append((PINNED + 1, 0))
            continue
        key = ast.dump(alternative)
        if key not in source.memo:
            if source.spent + len(tried) > BUDGET:
                return None
            source.memo[key], runs = true_for(holds, tried, PINNED + 1)
            source.spent += runs
        judged.append((source.memo[key], covered))
    return judged


def a_class_the_tests_show(
    source: Source, about: ast.expr, narrowings: Sequence[Sequence[ast.expr]]
) -> bool:
    """Whether conditions about `about`'s unknown, a parameter, hold for a class the tests show
    wherever they guard: the first narrowing answers a tested input, and in every narrowing
    each alternative that answers one holds for more than PINNED integers of the window and
    for SHOWN or more tested inputs."""
    if not _a_parameter(source, about):
        return False
    for number, conditions in enumerate(narrowings):
        judged = _judged(source, conditions, about)
        if judged is None or (number == 0 and not any(covered for _, covered in judged)):
            return False
        if any(covered and (true <= PINNED or covered < SHOWN) for true, covered in judged):
            return False
    return True


def rule_over_a_class(source: Source, compare: ast.Compare) -> bool:
    """Whether a comparison is part of a rule over a class the tests show (`n % 100 in (11, 12,
    13)`) wherever it guards: with the conditions around it, and with each condition under it
    (both ways: `if n < 200:` narrows the body, `not n < 200` the rest)."""
    guard: ast.expr = compare
    while isinstance(parent := source.parents.get(guard), ast.BoolOp | ast.UnaryOp):
        guard = parent
    owner = source.parents.get(guard)
    around = path(source, guard)
    narrowings: list[list[ast.expr]] = [[compare, *around]]
    if guard is not compare:
        narrowings.append([guard, *around])
    if isinstance(owner, GUARDS) and owner.test is guard:
        for number, inner in enumerate(_conditions_under(owner)):
            if number >= INNER:
                return False
            where = path(source, inner)
            narrowings += [[*where, inner], [*where, ast.UnaryOp(ast.Not(), inner)]]
    return a_class_the_tests_show(source, compare, narrowings)


def _conditions_under(owner: ast.If | ast.While | ast.IfExp) -> Iterator[ast.expr]:
    """Each condition inside what `owner` guards, in either branch: the test of an `if`,
    `while`, `x if c else y` or `assert`, a comprehension's `if`, a part of `a and b`."""
    for branch in (owner.body, owner.orelse):
        for part in branch if isinstance(branch, list) else [branch]:
            for node in ast.walk(part):
                if isinstance(node, (*GUARDS, ast.Assert)):
                    yield node.test
                elif isinstance(node, ast.comprehension):
                    yield from node.ifs
                elif isinstance(node, ast.BoolOp):
                    yield from node.values


def pins_tested_inputs(source: Source, about: ast.expr, conditions: Sequence[ast.expr]) -> bool:
    """Whether the conditions pin `about`'s unknown, a parameter, so that what they guard runs
    for a handful of integers, a tested input among them (`if 110 < n < 114:`)."""
    if not _a_parameter(source, about):
        return False
    judged = _judged(source, conditions, about)
    return judged is not None and any(covered and true <= PINNED for true, covered in judged)
