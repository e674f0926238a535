"""Whether a condition pins its input to a handful of integers (`n == 111`, `110 < n < 114`,
`n % 10**6 == 111`) or states a rule over a whole class of them (`11 <= n % 100 <= 13`, `year %
400 == 0`): the condition is run, never trusted by its spelling.

Only a condition of one unknown (the same name, attribute, subscript or call everywhere: `n`,
`self.n`, `len(xs)`), integer literals, arithmetic and comparisons is run, by a small
interpreter of its own AST (nothing is executed), for every integer from -SPAN to SPAN, SPAN ten
times its largest literal (at least REACH, at most WIDEST), and within REACH of each literal
beyond that. It pins when at most PINNED of those integers make it true: `year % 400 == 0` holds
for 21 of -4000..4000, `n % 10**6 == 111` for 2 of all it is tried on. Any other
condition (a string, a float, two unknowns, a call with literals in it) is `None`: unknown, and
the rules read it by its literals as before.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterator
from typing import Any

REACH = 1000  # integers tried either side of 0 at least, and of each literal beyond SPAN
WIDEST = 20000  # SPAN at most
PINNED = 16  # at most this many integers true in all that: the condition singles them out
LITERALS = 8  # a condition with more integer literals than this is not run
LARGEST = 10**12  # nor one with a literal beyond this

BINARY: dict[type[ast.operator], Callable[[Any, Any], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Div: operator.truediv,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.RShift: operator.rshift,
}
COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], object]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: operator.contains(b, a),
    ast.NotIn: lambda a, b: not operator.contains(b, a),
}
UNARY: dict[type[ast.unaryop], Callable[[Any], object]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}


class _Unknown(Exception):
    """The condition is not one this module runs."""


def pins(condition: ast.AST) -> bool | None:
    """True when the condition holds for at most PINNED integers around its literals, False when
    it holds for more, None when it is not a condition of one integer unknown."""
    holds = predicate(condition)
    if holds is None:
        return None
    numbers = [n.value for n in ast.walk(condition) if _is_int(n)]  # type: ignore[attr-defined]
    if len(numbers) > LITERALS or any(abs(n) > LARGEST for n in numbers):
        return None
    span = min(WIDEST, max(REACH, 10 * max((abs(n) for n in numbers), default=0)))
    beyond = (range(n - REACH, n + REACH + 1) for n in numbers if abs(n) > span - REACH)
    tried = sorted({*range(-span, span + 1), *(x for near in beyond for x in near)})
    true = 0
    for x in tried:
        true += holds(x)
        if true > PINNED:
            return False
    return True


def predicate(condition: ast.AST) -> Callable[[int], bool] | None:
    """The condition as a function of its one integer unknown (an error is False), or None when
    it is not a condition `pins` runs."""
    try:
        unknown = _the_unknown(condition)
        if unknown is None:
            return None
        compiled = _compiled(condition, unknown)
    except _Unknown:
        return None

    def holds(x: int) -> bool:
        try:
            return bool(compiled(x))
        except (ArithmeticError, ValueError, TypeError):
            return False

    return holds


def _is_int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _atoms(node: ast.AST) -> Iterator[ast.AST]:
    """The sub-expressions the interpreter does not compute: the unknown's occurrences."""
    if _is_int(node):
        return
    if isinstance(node, ast.BinOp | ast.UnaryOp | ast.Compare | ast.BoolOp):
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.operator | ast.unaryop | ast.cmpop | ast.boolop):
                yield from _atoms(child)
        return
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        if not all(_is_int(e) for e in node.elts):
            raise _Unknown
        return
    if any(isinstance(n, ast.Constant) for n in ast.walk(node)):
        raise _Unknown  # `f(111)`, `s == "abc"`, `x == 0.5`: not an integer unknown
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
        yield node
        return
    raise _Unknown


def _the_unknown(condition: ast.AST) -> str | None:
    """The one unknown's dump, or None when the condition has none (a constant)."""
    seen = {ast.dump(atom) for atom in _atoms(condition)}
    if len(seen) > 1:
        raise _Unknown
    return seen.pop() if seen else None


def unknown_of(condition: ast.AST) -> str | None:
    """The one unknown of a condition `pins` runs (its AST dumped), or None."""
    try:
        return _the_unknown(condition)
    except _Unknown:
        return None


def _compiled(node: ast.AST, unknown: str) -> Callable[[int], object]:
    """The condition as a function of its unknown, built once from the AST's own operations."""
    if _is_int(node):
        value = node.value  # type: ignore[attr-defined]
        return lambda x: value
    if isinstance(node, ast.BinOp):
        if type(node.op) not in BINARY:
            raise _Unknown  # `**` and `<<` could be made to take forever
        binary = BINARY[type(node.op)]
        left, right = _compiled(node.left, unknown), _compiled(node.right, unknown)
        return lambda x: binary(left(x), right(x))
    if isinstance(node, ast.UnaryOp):
        unary, operand = UNARY[type(node.op)], _compiled(node.operand, unknown)
        return lambda x: unary(operand(x))
    if isinstance(node, ast.BoolOp):
        values = [_compiled(v, unknown) for v in node.values]
        if isinstance(node.op, ast.And):
            return lambda x: all(v(x) for v in values)
        return lambda x: any(v(x) for v in values)
    if isinstance(node, ast.Compare):
        if any(type(op) not in COMPARE for op in node.ops):
            raise _Unknown  # `is`: identity, not a value
        ops = [COMPARE[type(op)] for op in node.ops]
        sides = [_compiled(s, unknown) for s in (node.left, *node.comparators)]
        return lambda x: all(
            op(a(x), b(x)) for op, a, b in zip(ops, sides, sides[1:], strict=False)
        )
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        members = frozenset(e.value for e in node.elts if isinstance(e, ast.Constant))
        return lambda x: members
    if ast.dump(node) == unknown:
        return lambda x: x
    raise _Unknown
