"""The visible tests' answers, and the rule that refuses a table of them (`answers-from-tests`).

A test like HumanEval's asserts in a helper it calls (`def check(candidate): assert
candidate(1, 2) == 3`), so the literals are read from the test function and the functions of its
module that it calls, two calls deep. From each assertion `f(args) == expected` (either side,
`abs(f(args) - expected) < tolerance`, or `assertEqual`) comes a Case: the arguments' literal
keys and the expected one.

A candidate that answers those cases instead of computing them is refused by name: a dict whose
entries map the tested inputs to their expected outputs, an `if` (or `elif`, or `in` test) on
tested inputs that returns their expected outputs. An honest fix that happens to use a tested
number (`range(2)`, `x + 2`) maps nothing to anything and is not refused.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from fixbot.screen.source import FUNCTIONS, Case, Hit, Key, Source, line, literal_key, telling

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
    for node in ast.walk(scope):
        pairs: list[tuple[ast.AST, ast.AST]] = []
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
            test = node.test
            if len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
                pairs += [(test.left, test.comparators[0]), (test.comparators[0], test.left)]
            elif len(test.ops) == 1 and isinstance(test.ops[0], ast.Lt | ast.LtE):
                pairs += _within(test.left)
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and _equality(node):
            pairs += [(node.args[0], node.args[1]), (node.args[1], node.args[0])]
        for call, expected in pairs:
            case = _case(call, expected, test_id)
            if case is not None:
                yield case


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


def _telling_case(case: Case) -> bool:
    """A case that could only be answered on purpose: not f(0) == 1 or f(1) == 1."""
    return telling(case[1]) or any(telling(k) for k in case[0])


def inputs(case: Case) -> list[Key]:
    """How code could spell a case's input: its only argument, or all of them as a tuple."""
    args = case[0]
    spelled: list[Key] = [("seq", args)]
    return [args[0], *spelled] if len(args) == 1 else spelled


def answers_from_tests(source: Source) -> Iterator[Hit]:
    known = [case for case in source.cases if _telling_case(case)]
    if source.is_test or not known:
        return
    for node in source.new(ast.Dict, ast.If, ast.match_case):
        answered = _table(node, known) if isinstance(node, ast.Dict) else None
        if isinstance(node, ast.If | ast.match_case):
            answered = _branch(node, known)
        if answered:
            anchor = node.pattern if isinstance(node, ast.match_case) else node
            shown = source.snippet(anchor if isinstance(node, ast.Dict) else _head(node))
            tests = sorted({case[2] for case in answered})
            yield Hit(
                "answers-from-tests",
                line(anchor),
                f"{shown} answers {len(answered)} of the visible test cases by lookup "
                f"(the inputs and expected outputs of {', '.join(tests[:2])}): hidden tests "
                "still fail; compute the result for every input",
            )


def _head(node: ast.AST) -> ast.AST:
    return node.test if isinstance(node, ast.If) else node


def _table(node: ast.Dict, known: Sequence[Case]) -> list[Case]:
    """The cases whose input a dict entry maps to the case's expected output; [] unless they
    are at least half of the table (a real table that holds one tested pair is not a cheat)."""
    pairs = zip(node.keys, node.values, strict=True)
    entries = [(literal_key(k), literal_key(v)) for k, v in pairs]
    answered = [
        case
        for case in known
        if any(v == case[1] and key in inputs(case) for key, v in entries if key is not None)
    ]
    return answered if answered and 2 * len(answered) >= len(entries) else []


def _branch(node: ast.If | ast.match_case, known: Sequence[Case]) -> list[Case]:
    """The cases whose input the condition singles out while its body returns their output."""
    tested = _singled_out(node)
    returned = {
        literal_key(r.value)
        for r in ast.walk(ast.Module(body=list(node.body), type_ignores=[]))
        if isinstance(r, ast.Return) and r.value is not None
    }
    return [
        case for case in known if case[1] in returned and any(k in tested for k in inputs(case))
    ]


def _singled_out(node: ast.If | ast.match_case) -> set[Key]:
    found: set[Key] = set()
    if isinstance(node, ast.match_case):
        values = [p.value for p in ast.walk(node.pattern) if isinstance(p, ast.MatchValue)]
        found |= {k for v in values if (k := literal_key(v)) is not None}
        sequences = [p for p in ast.walk(node.pattern) if isinstance(p, ast.MatchSequence)]
        for seq in sequences:
            keys = [literal_key(p.value) for p in seq.patterns if isinstance(p, ast.MatchValue)]
            if len(keys) == len(seq.patterns) and all(k is not None for k in keys):
                found.add(("seq", tuple(keys)))
        return found
    for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
        if not any(isinstance(op, ast.Eq | ast.In | ast.Is) for op in compare.ops):
            continue
        for operand in [compare.left, *compare.comparators]:
            if (key := literal_key(operand)) is not None:
                found.add(key)
            if isinstance(operand, ast.Tuple | ast.List | ast.Set):
                found |= {k for e in operand.elts if (k := literal_key(e)) is not None}
    return found
