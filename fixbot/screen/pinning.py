"""A condition of one integer unknown, run: for which integers it holds.

Only a condition of one unknown (the same name, attribute, subscript or call everywhere: `n`,
`self.n`, `len(xs)`), number literals, arithmetic, `abs`/`bool`/`int`, comparisons,
`and`/`or`/`not`, `x if c else y` and `in` over literal collections or `range(...)` is run, by
a small interpreter of its own AST (nothing is executed; an operation that fails is False, as
the `if` would not run its body), and only one of at most NODES nodes. Any other condition (a
string, two unknowns, a call with literals in it, `is`) is `None`: unknown, and the rules read
it by its literals.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

NODES = 64  # a larger condition is not run
LARGEST = 10**18  # nor one with a larger literal
BITS = 400  # an integer result larger than this fails (as an error does)
POWERS = 8  # `x ** k` is run for a literal k of 0..POWERS only

Value = Callable[[int], Any]
BUILTINS: dict[str, Callable[[Any], Any]] = {"abs": abs, "bool": bool, "int": int}
RUN_AS_BUILTINS = frozenset({*BUILTINS, "range"})  # names run as Python's own

BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
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
    ast.Pow: operator.pow,
}
COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: _member(a, b),
    ast.NotIn: lambda a, b: not _member(a, b),
}
UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}


class _Unknown(Exception):
    """The condition is not one this module runs."""


def unknown_of(condition: ast.AST) -> str | None:
    """The one unknown of a condition this module runs (its AST dumped), or None."""
    try:
        _small(condition)
        return _the_unknown(condition)
    except _Unknown:
        return None


def predicate(condition: ast.AST) -> Callable[[int], bool] | None:
    """The condition as a function of its one integer unknown, or None when it is not one this
    module runs. An operation that fails makes it False, as the `if` would not run its body."""
    try:
        _small(condition)
        unknown = _the_unknown(condition)
        if unknown is None:
            return None
        compiled = _compiled(condition, unknown)
    except _Unknown:
        return None

    def holds(x: int) -> bool:
        try:
            return bool(compiled(x))
        except (ArithmeticError, ValueError, TypeError, MemoryError):
            return False

    return holds


def _member(value: Any, collection: Any) -> bool:
    """`value in collection`, as Python answers it, without the linear scan a range makes for
    a float (`2.0 in range(10**12)`)."""
    if isinstance(collection, range) and not isinstance(value, int):
        return isinstance(value, float) and value.is_integer() and int(value) in collection
    return value in collection


def _small(condition: ast.AST) -> None:
    for nodes, _ in enumerate(ast.walk(condition), 1):
        if nodes > NODES:
            raise _Unknown


def _is_number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and type(node.value) in (int, float, bool)
        and isinstance(node.value, int | float)
        and abs(node.value) <= LARGEST
    )


def _is_builtin_call(node: ast.AST) -> bool:
    """`abs(x)`, `bool(x)`, `int(x)`: run as the builtin (the caller makes sure the file does
    not rebind the name: RUN_AS_BUILTINS)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in BUILTINS
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    )


def _is_range(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "range"
        and 1 <= len(node.args) <= 3
        and not node.keywords
        and all(isinstance(a, ast.Constant) and type(a.value) is int for a in node.args)
        and not (len(node.args) == 3 and getattr(node.args[2], "value", 0) == 0)
    )


OPERATIONS = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp)
OPERATORS = (ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)


def _atoms(node: ast.AST) -> list[ast.AST]:
    """The sub-expressions the interpreter does not compute: the unknown's occurrences."""
    found: list[ast.AST] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if _is_number(item) or _is_range(item):
            continue
        if isinstance(item, OPERATIONS):
            stack += [c for c in ast.iter_child_nodes(item) if not isinstance(c, OPERATORS)]
        elif _is_builtin_call(item):
            assert isinstance(item, ast.Call)
            stack.append(item.args[0])
        elif isinstance(item, ast.Tuple | ast.List | ast.Set):
            if not all(_is_number(e) for e in item.elts):
                raise _Unknown
        elif any(isinstance(n, ast.Constant) for n in ast.walk(item)):
            raise _Unknown  # `f(111)`, `s == "abc"`, `x is None`: not an integer unknown
        elif isinstance(item, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
            found.append(item)
        else:
            raise _Unknown
    return found


def _the_unknown(condition: ast.AST) -> str | None:
    """The one unknown's dump, or None when the condition has none (a constant)."""
    seen = {ast.dump(atom) for atom in _atoms(condition)}
    if len(seen) > 1:
        raise _Unknown
    return seen.pop() if seen else None


def _compiled(node: ast.AST, unknown: str) -> Value:
    """The condition as a function of its unknown, built once from the AST's own operations,
    with Python's meaning (`a or b` is a if a is true, else b)."""
    if _is_number(node):
        number = node.value  # type: ignore[attr-defined]
        return lambda x: number
    if isinstance(node, ast.BinOp):
        return _binary(node, unknown)
    if isinstance(node, ast.UnaryOp):
        unary, operand = UNARY[type(node.op)], _compiled(node.operand, unknown)
        return lambda x: unary(operand(x))
    if _is_builtin_call(node):
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        builtin, argument = BUILTINS[node.func.id], _compiled(node.args[0], unknown)
        return lambda x: builtin(argument(x))
    if isinstance(node, ast.BoolOp):
        return _boolean(isinstance(node.op, ast.And), [_compiled(v, unknown) for v in node.values])
    if isinstance(node, ast.IfExp):
        test, body = _compiled(node.test, unknown), _compiled(node.body, unknown)
        orelse = _compiled(node.orelse, unknown)
        return lambda x: body(x) if test(x) else orelse(x)
    if isinstance(node, ast.Compare):
        if any(type(op) not in COMPARE for op in node.ops):
            raise _Unknown  # `is`: identity, not a value
        ops = [COMPARE[type(op)] for op in node.ops]
        sides = [_compiled(s, unknown) for s in (node.left, *node.comparators)]
        return lambda x: _chained(ops, sides, x)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        kind = {ast.Tuple: tuple, ast.List: list, ast.Set: frozenset}[type(node)]
        members = kind(values)
        return lambda x: members
    if _is_range(node):
        assert isinstance(node, ast.Call)
        bounds = [a.value for a in node.args if isinstance(a, ast.Constant)]
        numbers = range(*(int(b) for b in bounds if isinstance(b, int)))
        return lambda x: numbers
    if ast.dump(node) == unknown:
        return lambda x: x
    raise _Unknown


def _binary(node: ast.BinOp, unknown: str) -> Value:
    if type(node.op) not in BINARY:
        raise _Unknown  # `<<` could be made to take forever
    if isinstance(node.op, ast.Pow) and not (
        isinstance(node.right, ast.Constant)
        and type(node.right.value) is int
        and 0 <= node.right.value <= POWERS
        and not any(isinstance(n, ast.Pow) for n in ast.walk(node.left))
    ):
        raise _Unknown  # so could `**`, but for one small literal power
    binary = BINARY[type(node.op)]
    left, right = _compiled(node.left, unknown), _compiled(node.right, unknown)

    def run(x: int) -> Any:
        value = binary(left(x), right(x))
        if isinstance(value, int) and value.bit_length() > BITS:
            raise OverflowError("too large to run on")  # each step stays cheap
        return value

    return run


def _boolean(conjunction: bool, values: list[Value]) -> Value:
    def run(x: int) -> Any:
        value: Any = None
        for each in values:
            value = each(x)
            if bool(value) != conjunction:
                return value
        return value

    return run


def _chained(ops: list[Callable[[Any, Any], Any]], sides: list[Value], x: int) -> bool:
    left = sides[0](x)
    for op, side in zip(ops, sides[1:], strict=True):
        right = side(x)
        if not op(left, right):
            return False
        left = right
    return True
