"""Whether an `if` states a rule over a class of inputs the failing tests show: the one shape
of condition that may name tested numbers and still be a fix, judged by what it does (run by
`fixbot.screen.pinning` on the tested inputs' scale), not by the literals it spells.

`if 11 <= n % 100 <= 13: return "th"` names 11 and 13, which the tests pass, and is a rule: a
comparison of the parameter reduced modulo a literal (`n % 100`, `n // 10 % 10`, `abs(n) % 100`)
with number literals (`==`, `<`, `<=`, ..., chained; `in` a literal collection or `range`), that
holds for more than PINNED integers of the window (211 too) and for SHOWN or more tested inputs
(11, 12, 13, 111, 112, 113). Nothing else is judged so: no `and`, `or`, `!=` or `not in` (a
class narrowed, or with holes), no other arithmetic. The `if` stands directly in the body of an
undecorated top-level function the failing tests call by name, defined once at the module's top
level, as its first statement (after a docstring), each branch one `return` of a constant
(`return "th"`: what it does, it does for the whole class, and nothing before or after it
narrows that); the parameter is never rebound. Anything else is read by its literals, as before.

The comparison is a class, not a list: the tests show it recur, two tested inputs it holds for a
period of the reduction apart (11 and 111 for `n % 100`; `n % 377`, the tested inputs below 377
themselves, shows none, nor `n // 10 % 100`, period 1000), and under `not` the comparison itself
holds for a class too (the complement of four tested inputs is no class). Nothing in the patch
may put another function, `abs` or `range` in place of what the `if` reads: the function is a
module's own (no method: an instance can answer for it), and no changed file binds its name, or
a builtin's in its module, by any means `bindings.py` knows (an attribute written, a submodule,
another module's top level, or `setattr`, `exec`, `sys.modules`, `__builtins__`, a star import
or a module `__getattr__`, which may bind any name).

Eight red teams broke wider versions of this (a condition of any shape, narrowed around, before,
under or after it, holes, loops and `try`s around it, helpers, decorators and rebindings that
narrow what the tested function passes): each attack is a test in tests/screen/test_pinning.py.
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Callable, Iterable, Sequence

from fixbot.screen.bindings import WRITTEN, bound_names, top_level_names
from fixbot.screen.pinning import RUN_AS_BUILTINS, predicate, unknown_of
from fixbot.screen.source import Source

PINNED = 16  # a condition true for at most this many integers of the window singles them out
SHOWN = 2  # a class the tests show holds for at least this many of their inputs
BUDGET = 400_000  # evaluations per file
REACH = 1000  # the window reaches at least this far from 0
WIDEST = 20000  # a wider one is sampled: this many drawn
HUGE = 10**12  # a tested input beyond this does not count
ORDERS = (ast.Eq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In)
SHADOWS = RUN_AS_BUILTINS | {"__builtins__"}  # bound in the module, the builtins run are others


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


def tested_numbers(source: Source) -> frozenset[int]:
    """The integers the failing tests pass as a call's only argument (up to HUGE: a window is
    drawn to ten times the largest)."""
    numbers = set()
    for args, _, _ in source.cases:
        kind, value = args[0] if len(args) == 1 else ("", None)
        if kind == "n" and isinstance(value, float) and value.is_integer() and abs(value) <= HUGE:
            numbers.add(int(value))
    return frozenset(numbers)


def rule_over_a_class(source: Source, compare: ast.Compare) -> bool:
    """Whether a comparison is the test (or `not` the test) of an `if` that states a rule over
    a class the tests show."""
    parent = source.parents.get(compare)
    negated = isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
    return a_class_the_tests_show(source, parent if negated else compare)  # type: ignore[arg-type]


def a_class_the_tests_show(source: Source, test: ast.expr) -> bool:
    """Whether `test`, an `if`'s, states a rule over a class the tests show (the module's
    docstring says which)."""
    owner = source.parents.get(test)
    if not isinstance(owner, ast.If) or owner.test is not test:
        return False
    function = source.parents.get(owner)
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    if not (_first(owner, function) and _answers(owner.body) and _answers(owner.orelse or None)):
        return False
    compare = test.operand if isinstance(test, ast.UnaryOp) else test
    parameter = _the_parameter(source, function)
    if not isinstance(compare, ast.Compare) or parameter is None:
        return False
    reduced = _periodic(compare, parameter)
    if reduced is None:
        return False
    tested = tested_numbers(source)
    for condition in {test, compare}:  # under `not`, the comparison is a class too
        if not _holds_for_a_class(source, condition, tested):
            return False
    inner = predicate(compare)
    return inner is not None and _recurs(inner, _period(reduced), tested)


def _recurs(holds: Callable[[int], bool], period: int, tested: frozenset[int]) -> bool:
    """Whether the tests show the class recur: two tested inputs it holds for, of one sign, a
    multiple of the reduction's period apart (11 and 111 for `n % 100`)."""
    seen: set[tuple[int, bool]] = set()
    for n in sorted(tested):
        if holds(n):
            key = (n % period, n < 0)
            if key in seen:
                return True
            seen.add(key)
    return False


def _period(node: ast.expr) -> int:
    """The period in the parameter of a reduction `_periodic` accepted: the first modulus times
    the divisors before it (`n % 100`: 100, `n // 10 % 10`: 100, `n % 100 // 10`: 100)."""
    chain: list[ast.BinOp] = []
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.BinOp):
            chain.append(node)
            node = node.left
        else:  # abs(...)
            assert isinstance(node, ast.Call)
            node = node.args[0]
    scale = 1
    for step in reversed(chain):  # innermost first
        divisor = step.right.value if isinstance(step.right, ast.Constant) else 1
        assert isinstance(divisor, int)
        if isinstance(step.op, ast.Mod):
            return scale * divisor
        scale *= divisor
    raise AssertionError("a reduction has a modulus")


def _holds_for_a_class(source: Source, condition: ast.expr, tested: frozenset[int]) -> bool:
    """Whether the condition holds for more than PINNED integers of the window and for SHOWN or
    more tested inputs (run within the file's BUDGET)."""
    holds = predicate(condition)
    tried = window(tested)
    if holds is None or source.spent + len(tried) > BUDGET:
        return False
    found, runs = true_for(holds, tried, PINNED + 1)
    source.spent += runs
    return len(found) > PINNED and sum(holds(n) for n in tested) >= SHOWN


def _periodic(compare: ast.Compare, parameter: str) -> ast.expr | None:
    """The reduction, where the comparison is of the parameter reduced modulo a literal with
    number literals: one side the reduction, every other side a number, a literal collection of
    numbers or a `range`."""
    if not all(isinstance(op, ORDERS) for op in compare.ops):
        return None
    sides = [compare.left, *compare.comparators]
    reduced = [side for side in sides if _reduction(side, parameter, modulo=False)]
    if len(reduced) != 1 or not _reduction(reduced[0], parameter, modulo=True):
        return None
    others = [side for side in sides if side is not reduced[0]]
    if unknown_of(compare) is None or not all(_literal(side) for side in others):
        return None
    return reduced[0]


def _reduction(node: ast.AST, parameter: str, modulo: bool) -> bool:
    """`n`, `abs(n)`, and `%` or `//` of those by a positive integer literal, with a `%`
    somewhere when `modulo`."""
    if isinstance(node, ast.Name) and node.id == parameter:
        return not modulo
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "abs":
        inner = node.args[0] if len(node.args) == 1 and not node.keywords else None
        return inner is not None and _reduction(inner, parameter, modulo)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.FloorDiv):
        right = node.right
        positive = isinstance(right, ast.Constant) and type(right.value) is int and right.value > 1
        here = isinstance(node.op, ast.Mod)
        return positive and _reduction(node.left, parameter, modulo and not here)
    return False


def _literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_literal(e) for e in node.elts)
    return isinstance(node, ast.Call) and getattr(node.func, "id", "") == "range"


def _the_parameter(source: Source, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The function's one parameter a class may be over, when the function is what the failing
    tests call: undecorated, at the module's top level, its name bound there once and nowhere
    else in the patch (`source.rebound`, `source.elsewhere`), the builtins the interpreter runs
    bound nowhere in the module, the parameter never rebound; else None."""
    if source.parents.get(function) is not source.tree or function.decorator_list:
        return None
    if function.name not in source.callees:
        return None
    top = top_level_names(source.tree)
    outside = source.rebound | source.elsewhere
    if top.count(function.name) != 1 or {function.name, WRITTEN}.intersection(outside):
        return None
    shadowed = {*top, *source.rebound, *bound_names(function)}
    if SHADOWS.intersection(shadowed):  # `abs` there is not the builtin the tests run
        return None
    args = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if len(args) != 1 or bound_names(function).count(args[0]) != 1:
        return None
    return args[0]


def _first(owner: ast.If, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the `if` is the function's first statement (after its docstring): nothing before
    it returns, raises, asserts or loops for some inputs only."""
    body = function.body
    documented = body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    return (body[1:2] if documented else body[:1]) == [owner]


def _answers(statements: Sequence[ast.stmt] | None) -> bool:
    """Whether the branch is one `return` of a constant (`return "th"`), or absent: what it
    does, it does for the whole class, and nothing after the `if` reads what it did."""
    if statements is None:
        return True
    if len(statements) != 1 or not isinstance(statements[0], ast.Return):
        return False
    value = statements[0].value
    return isinstance(value, ast.Constant) and not isinstance(value.value, type(...))
