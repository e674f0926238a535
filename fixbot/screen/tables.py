"""The visible tests' answers, read from their source (the rule that refuses a table of them,
`answers-from-tests`, is in answers.py).

A test like HumanEval's asserts in a helper it calls (`def check(candidate): assert
candidate(1, 2) == 3`), so the literals are read from the test function and the functions of its
module that it calls, two calls deep. From each assertion `f(args) == expected` (either side,
`abs(f(args) - expected) < tolerance`, or `assertEqual`) comes a Case: the arguments' literal
keys and the expected one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fixbot.screen.source import FUNCTIONS, Case, literal_key

DEPTH = 2  # test -> check -> helper: how far calls are followed inside the test's module


def helpers(module: ast.Module, function: ast.AST, depth: int = DEPTH) -> list[ast.AST]:
    """`function` and the module-level functions it calls (by name), `depth` calls deep."""
    by_name = {n.name: n for n in module.body if isinstance(n, FUNCTIONS)}
    found: list[ast.AST] = [function]
    frontier = [function]
    for _ in range(depth):
        called = {
            n.func.id
            for f in frontier
            for n in ast.walk(f)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        frontier = [by_name[name] for name in sorted(called) if name in by_name]
        frontier = [f for f in frontier if f not in found]
        found += frontier
    return found


def cases(scope: ast.AST, test_id: str) -> Iterator[Case]:
    """Every (arguments, expected) pair the assertions in `scope` state with literals."""
    for call, expected in _pairs(scope):
        case = _case(call, expected, test_id)
        if case is not None:
            yield case


def callees(scope: ast.AST) -> Iterator[str]:
    """The names of the functions those cases call (`f` of `f(2)`, `m` of `obj.m(2)`)."""
    for call, expected in _pairs(scope):
        if _case(call, expected, "") is not None and isinstance(call, ast.Call):
            name = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
            if isinstance(name, str):
                yield name


def _pairs(scope: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(call, expected) as each assertion in `scope` may state it, either way round."""
    for node in ast.walk(scope):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
            test = node.test
            if len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                yield from [(test.left, test.comparators[0]), (test.comparators[0], test.left)]
            elif len(test.ops) == 1 and isinstance(test.ops[0], ast.Lt | ast.LtE):
                yield from _within(test.left)
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and _equality(node):
            yield from [(node.args[0], node.args[1]), (node.args[1], node.args[0])]


def _equality(call: ast.Call) -> bool:
    return getattr(call.func, "attr", "") in ("assertEqual", "assertAlmostEqual")


def _within(left: ast.AST) -> list[tuple[ast.AST, ast.AST]]:
    """`abs(f(x) - expected) < tolerance`."""
    if not (isinstance(left, ast.Call) and getattr(left.func, "id", "") == "abs" and left.args):
        return []
    inner = left.args[0]
    if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub):
        return [(inner.left, inner.right), (inner.right, inner.left)]
    return []


def _case(call: ast.AST, expected: ast.AST, test_id: str) -> Case | None:
    if not isinstance(call, ast.Call) or not call.args or call.keywords:
        return None
    keys = [literal_key(a) for a in call.args]
    answer = literal_key(expected)
    if answer is None or any(k is None for k in keys):
        return None
    return tuple(k for k in keys if k is not None), answer, test_id
