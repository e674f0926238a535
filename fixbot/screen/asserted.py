"""What the failing tests assert, read from their source: the telling literals and the
(arguments, expected) cases, for the special-cases-test and answers-from-tests rules."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

from fixbot.screen.source import Case, Key, telling, telling_literals
from fixbot.screen.tables import callees, cases, helpers
from fixbot.snapshot import read_inside


def asserted_literals(tree: Path, failing_tests: Sequence[str]) -> dict[Key, str]:
    """The telling literals in the failing tests' assertions (not 0, 1, -1, or tiny strings),
    and the tested calls' arguments as one tuple, each with the first test that asserts on it.
    The test's module-level helpers it calls count too (`check(candidate)`, HumanEval's)."""
    found: dict[Key, str] = {}
    for test_id in failing_tests:
        for scope in _test_scopes(tree, test_id):
            for key in telling_literals(scope):
                found.setdefault(key, test_id)
            for args, _, _ in cases(scope, test_id):
                key = ("seq", args)
                if len(args) > 1 and telling(key):
                    found.setdefault(key, test_id)
    return found


def asserted_cases(tree: Path, failing_tests: Sequence[str]) -> list[Case]:
    """The failing tests' (arguments, expected) pairs stated with literals."""
    return [
        case
        for test_id in failing_tests
        for scope in _test_scopes(tree, test_id)
        for case in cases(scope, test_id)
    ]


def asserted_callees(tree: Path, failing_tests: Sequence[str]) -> frozenset[str]:
    """The names of the functions the failing tests' cases call."""
    return frozenset(
        name
        for test_id in failing_tests
        for scope in _test_scopes(tree, test_id)
        for name in callees(scope)
    )


def _test_scopes(tree: Path, test_id: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    found = _test_function(tree, test_id)
    if found is None:
        return []
    module, function = found
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    return [f for f in helpers(module, function) if isinstance(f, functions)]


def _test_function(
    tree: Path, test_id: str
) -> tuple[ast.Module, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The function a JUnit id `pkg.test_mod.Class::name[param]` names, parsed from `tree`,
    with its module."""
    classname, _, name = test_id.rpartition("::")
    parts, name = classname.split("."), name.split("[")[0]
    for cut in range(len(parts), 0, -1):
        text = read_inside(tree, "/".join(parts[:cut]) + ".py")
        if text is None:
            continue
        try:
            module = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None
        scope: ast.AST = module
        for cls in parts[cut:]:
            scope = next(
                (n for n in ast.walk(scope) if isinstance(n, ast.ClassDef) and n.name == cls), scope
            )
        functions = (ast.FunctionDef, ast.AsyncFunctionDef)
        function = next(
            (n for n in ast.walk(scope) if isinstance(n, functions) and n.name == name), None
        )
        return (module, function) if function is not None else None
    return None
