"""Whether conditions that name tested values state a rule over a class of inputs the failing
tests show, or single the tested inputs out, judged by what the conditions do (run by
`fixbot.screen.pinning`), not by the literals they spell.

`11 <= n % 100 <= 13` names 11 and 13, which the tests pass, and is a rule: it holds for more
than a handful of integers (211 too) and for several tested inputs (11, 12, 13, 111, 112, 113).
`n == 111`, `110 < n < 114`, `n % 10**6 == 111`, a class narrowed by an `if` nested under it or
around it, or a modulus that covers one tested input single them out, however they are spelled.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from fixbot.screen.pinning import pins, predicate, unknown_of
from fixbot.screen.source import SCOPES, Source

SHOWN = 2  # a class the tests show holds for at least this many of their inputs


def path(source: Source, node: ast.AST) -> list[ast.expr]:
    """The conditions under which `node` runs in its function: each enclosing `if`'s test, `not`
    the test in its `else`."""
    conditions: list[ast.expr] = []
    child = node
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, SCOPES):
            break
        if isinstance(ancestor, ast.If) and child is not ancestor.test:
            inside = any(child is statement for statement in ancestor.body)
            conditions.append(ancestor.test if inside else ast.UnaryOp(ast.Not(), ancestor.test))
        child = ancestor
    return conditions


def _narrowing(conditions: Sequence[ast.expr], about: ast.expr) -> ast.expr | None:
    """Those of the conditions that are about `about`'s one unknown, as one condition; the
    conditions about anything else are left out (they do not narrow it)."""
    unknown = unknown_of(about)
    own = [c for c in conditions if unknown is not None and unknown_of(c) == unknown]
    if not own:
        return None
    return own[0] if len(own) == 1 else ast.BoolOp(ast.And(), own)


def tested_numbers(source: Source) -> set[int]:
    """The integers the failing tests pass as a call's only argument."""
    numbers = set()
    for args, _, _ in source.cases:
        kind, value = args[0] if len(args) == 1 else ("", None)
        if kind == "n" and isinstance(value, float) and value.is_integer():
            numbers.add(int(value))
    return numbers


def _a_parameter(source: Source, about: ast.expr) -> bool:
    function = source.scope(about)
    if not isinstance(function, SCOPES):
        return False
    args = (a for a in ast.walk(function.args) if isinstance(a, ast.arg))
    return unknown_of(about) in {ast.dump(ast.Name(id=a.arg, ctx=ast.Load())) for a in args}


def a_class_the_tests_show(
    source: Source, about: ast.expr, paths: Sequence[Sequence[ast.expr]]
) -> bool:
    """Whether the conditions about `about`'s unknown, a parameter of the function, hold
    wherever they guard (each of `paths`) for more than a handful of integers and for SHOWN or
    more of the numbers the failing tests pass."""
    tested = tested_numbers(source)
    if len(tested) < SHOWN or not _a_parameter(source, about):
        return False
    for conditions in paths:
        condition = _narrowing(conditions, about)
        if condition is None or (holds := predicate(condition)) is None:
            return False
        if pins(condition) is not False or sum(holds(n) for n in tested) < SHOWN:
            return False
    return True


def rule_over_a_class(source: Source, compare: ast.Compare) -> bool:
    """Whether a comparison is part of a rule over a class the tests show (`n % 100 in (11, 12,
    13)`), wherever it guards: the `if` it is part of with the enclosing ones, and every `if`
    nested under it, in its body or its `else`."""
    guard: ast.expr = compare
    while isinstance(parent := source.parents.get(guard), ast.BoolOp | ast.UnaryOp):
        guard = parent
    owner = source.parents.get(guard)
    paths = [[compare, guard, *path(source, guard)]]
    if isinstance(owner, ast.If) and owner.test is guard:
        guarded = (*owner.body, *owner.orelse)
        inner = (n for s in guarded for n in ast.walk(s) if isinstance(n, ast.If))
        paths += [path(source, n.body[0]) for n in inner]
    return a_class_the_tests_show(source, compare, paths)


def pins_tested_inputs(
    source: Source, about: ast.expr, conditions: Sequence[ast.expr], named: bool
) -> bool:
    """Whether the conditions pin `about`'s unknown to a handful of integers that include a
    tested input, or that the conditions `named` (a tested literal in them)."""
    condition = _narrowing(conditions, about)
    if condition is None or (holds := predicate(condition)) is None or not pins(condition):
        return False
    return named or any(holds(n) for n in tested_numbers(source))
