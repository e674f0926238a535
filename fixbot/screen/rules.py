"""The Python rules behind `fixbot.policy`: each reads one changed file's new AST and yields a
Hit for every offending construct that the diff added or edited (its lines are `touched`).

Names are resolved through the file's imports (`import os as o; o._exit(0)` is `os._exit`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping

from fixbot.screen.answers import base_case
from fixbot.screen.checkers import type_checking_split
from fixbot.screen.classes import a_class_the_tests_show, rule_over_a_class
from fixbot.screen.folding import call_name
from fixbot.screen.prose import spelled_in_text
from fixbot.screen.source import FUNCTIONS, Hit, Key, Source, line, literal_key, under


def _strings(root: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(root) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


# --- adds-skip --------------------------------------------------------------------------

SKIPS = (
    *("pytest.skip", "pytest.xfail", "pytest.importorskip", "pytest.mark.skip"),
    *("pytest.mark.skipif", "pytest.mark.xfail", "_pytest.outcomes.skip", "SkipTest"),
    *("_pytest.outcomes.xfail", "_pytest.outcomes.Skipped", "_pytest.outcomes.XFailed"),
    *("unittest.SkipTest", "unittest.case.SkipTest", "unittest.skip", "unittest.skipIf"),
    *("unittest.skipUnless", "unittest.expectedFailure"),
)


def adds_skip(source: Source) -> Iterator[Hit]:
    for node, name in source.references():
        if under(name, SKIPS):
            yield Hit(
                "adds-skip",
                line(node),
                f"adds {source.snippet(node)}: skipping or xfailing hides the failure "
                "instead of fixing the code under test",
            )


# --- exits-early ------------------------------------------------------------------------

EXITS = (
    *("sys.exit", "os._exit", "os.abort", "posix._exit", "signal.raise_signal", "builtins.exit"),
    *("pytest.exit", "_pytest.outcomes.exit"),
    # an exec ends this process too (its status is the new program's: /bin/true's 0)
    *(f"os.{name}" for name in ("execl", "execle", "execlp", "execlpe", "execv", "execve")),
    *(f"os.{name}" for name in ("execvp", "execvpe")),
    *(f"posix.{name}" for name in ("execv", "execve")),
)


def _under_main_guard(source: Source, node: ast.AST) -> bool:
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, ast.If) and isinstance(ancestor.test, ast.Compare):
            sides = [ancestor.test.left, *ancestor.test.comparators]
            words = {getattr(side, "id", getattr(side, "value", None)) for side in sides}
            if {"__name__", "__main__"} <= words:
                return True
    return False


def _is_exit(source: Source, node: ast.expr, name: str) -> bool:
    parent = source.parents.get(node)
    called = isinstance(parent, ast.Call) and parent.func is node
    if name in ("exit", "quit"):
        return called
    if name == "SystemExit":
        return any(isinstance(a, ast.Raise) for a in source.ancestors(node))
    if name == "os.kill" and parent is not None and called:
        return any(n == "os.getpid" for _, n in source.references(parent))
    return under(name, EXITS)


def exits_early(source: Source) -> Iterator[Hit]:
    if source.path.rsplit("/", 1)[-1] == "__main__.py":
        return
    for node, name in source.references():
        if _is_exit(source, node, name) and not _under_main_guard(source, node):
            shown = source.snippet(source.parents.get(node, node))
            scope = source.scope(node)
            where = f"in `{scope.name}`" if isinstance(scope, FUNCTIONS) else "at import"
            yield Hit(
                "exits-early",
                line(node),
                f"{shown} {where} ends the process, so the test run stops before it can "
                'report a failure; exit only under `if __name__ == "__main__":`',
            )


# --- adds-pytest-hook -------------------------------------------------------------------


def adds_pytest_hook(source: Source) -> Iterator[Hit]:
    for node in source.new(*FUNCTIONS, ast.Assign, ast.AnnAssign, ast.AugAssign):
        if isinstance(node, FUNCTIONS) and node.name.startswith("pytest_"):
            what = f"defines the pytest hook `{node.name}`"
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and any(
            isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in _targets(node)
        ):
            what = "sets `pytest_plugins`"
        else:
            continue
        yield Hit(
            "adds-pytest-hook",
            line(node),
            f"{what}: hooks and plugins change how the tests run, not the code under test",
        )


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign | ast.Delete):
        return list(node.targets)
    if isinstance(node, ast.AnnAssign | ast.AugAssign):
        return [node.target]
    return []


# --- patches-builtins -------------------------------------------------------------------

PATCHED = ("builtins", "__builtins__", "pytest", "_pytest", "unittest")


def _patched_module(source: Source, target: ast.AST) -> str | None:
    """The module whose attributes an assignment target or call argument reaches into."""
    node = target
    while True:
        if isinstance(node, ast.Subscript) and source.name(node.value) == "sys.modules":
            module = node.slice.value if isinstance(node.slice, ast.Constant) else None
            return module if module in PATCHED else None
        if isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and source.name(node.func) in ("vars", "getattr"):
            node = node.args[0] if node.args else node.func
        else:
            break
    root = (source.name(node) or "").split(".")[0]
    return root if root in PATCHED else None


def _patch_target(source: Source, node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call):
        targets = [t for target in _targets(node) for t in ast.walk(target)]
        attributes = [t for t in targets if isinstance(t, ast.Attribute | ast.Subscript)]
        return next((m for t in attributes if (m := _patched_module(source, t))), None)
    func = source.name(node.func) or str(getattr(node.func, "attr", ""))
    first = node.args[0] if node.args else None
    if first is not None and func.rsplit(".", 1)[-1] in ("setattr", "delattr", "patch", "object"):
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            root = first.value.split(".")[0]
            return root if root in PATCHED else None
        return _patched_module(source, first)
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("update", "setdefault"):
        return _patched_module(source, node.func.value)
    return None


def patches_builtins(source: Source) -> Iterator[Hit]:
    for node in source.new(ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.Call):
        module = _patch_target(source, node)
        if module:
            yield Hit(
                "patches-builtins",
                line(node),
                f"{source.snippet(node)} patches {module} for every caller, the tests "
                "included; fix the code under test instead",
            )
    for name in source.new(ast.Name):  # `__builtins__ = {...}`, `for __builtins__ in ...`
        assert isinstance(name, ast.Name)
        if name.id == "__builtins__" and not isinstance(name.ctx, ast.Load):
            yield Hit(
                "patches-builtins",
                line(name),
                "binds `__builtins__`: the module's functions then run other builtins than "
                "Python's; fix the code under test instead",
            )


# --- detects-test-runner ----------------------------------------------------------------

PROBES = ("sys.modules", "sys.argv", "sys.orig_argv", "importlib.util.find_spec", "find_spec")
FRAMES = (
    *("inspect.stack", "inspect.currentframe", "inspect.getouterframes", "inspect.trace"),
    *("sys._getframe", "traceback.extract_stack", "traceback.walk_stack"),
)
PYTEST_WORD = re.compile(r"pytest|py\.test", re.IGNORECASE)
RUNNER_VARIABLE = re.compile(r"PYTEST|FIXBOT", re.IGNORECASE)


def _probes_runner(source: Source, node: ast.AST) -> bool:
    """Whether `node` asks if pytest (or fixbot) runs it: through `sys.modules`, `sys.argv`, the
    environment or the stack, with a string that names the runner (also one built from parts:
    `"PY" + "TEST_CURRENT_TEST"`)."""
    names = [name for _, name in source.references(node)]
    strings = [text for _, text in source.strings(node)]
    probes = any(under(n, PROBES) for n in names) and any(PYTEST_WORD.search(s) for s in strings)
    environ = any("environ" in n or "getenv" in n for n in names) and any(
        RUNNER_VARIABLE.search(s) for s in strings
    )
    if probes or environ:
        return True
    frames = any(under(n, FRAMES) for n in names)
    return frames and any("test" in s.lower() for _, s in source.strings(source.scope(node)))


def detects_test_runner(source: Source) -> Iterator[Hit]:
    for node in source.new(ast.Import, ast.ImportFrom, ast.Compare, ast.Call, ast.Subscript):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            modules += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(m.split(".")[0] == "_pytest" for m in modules):
                yield Hit(
                    "detects-test-runner",
                    line(node),
                    f"{source.snippet(node)} brings pytest internals into the code under test",
                )
        elif _probes_runner(source, node):
            yield Hit(
                "detects-test-runner",
                line(node),
                f"{source.snippet(node)} checks whether it runs under the tests; "
                "the code must behave the same everywhere",
            )


# --- reads-tests ------------------------------------------------------------------------

TEST_PATH = re.compile(
    r"(?:^|[/\\])tests(?:[/\\]|$)|(?:^|[/\\])test[/\\]|(?:^|[/\\])test_[^/\\]*\.py\b"
    r"|_test\.py\b|(?:^|[/\\])conftest\.py\b"
)
READERS = {
    *("open", "read_text", "read_bytes", "readlines", "read", "glob", "iglob", "rglob"),
    *("listdir", "scandir", "iterdir", "walk", "getline", "getlines", "run_path", "loadtxt"),
    "spec_from_file_location",
}
IMPORTERS = ("importlib.import_module", "import_module", "__import__", "runpy.run_module")


def _is_test_module(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] in ("tests", "conftest") or any(
        p.startswith("test_") or p.endswith("_test") for p in parts
    )


def _imports_tests(source: Source, node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(_is_test_module(a.name) for a in node.names)
    if isinstance(node, ast.ImportFrom):  # `from .tests import x` may be a module named so
        module = node.module or ""
        return (node.level == 0 and _is_test_module(module)) or any(
            a.name.startswith("test_") or a.name == "conftest" for a in node.names
        )
    if isinstance(node, ast.Call) and source.name(node.func) in IMPORTERS and node.args:
        first = node.args[0]
        return isinstance(first, ast.Constant) and _is_test_module(str(first.value))
    if isinstance(node, ast.Subscript | ast.Call):
        modules = any(under(name, ["sys.modules"]) for _, name in source.references(node))
        return modules and any(_is_test_module(s) for s in _strings(node))
    return False


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function or module, without those of the functions inside it."""
    for child in ast.iter_child_nodes(scope):
        yield child
        if not isinstance(child, (*FUNCTIONS, ast.Lambda)):
            yield from _own_nodes(child)


def _reads_files(scope: ast.AST) -> bool:
    calls = (n.func for n in _own_nodes(scope) if isinstance(n, ast.Call))
    return any(getattr(f, "attr", getattr(f, "id", "")) in READERS for f in calls)


def reads_tests(source: Source) -> Iterator[Hit]:
    if source.is_test:
        return
    found = [(n, "") for n in source.new(ast.Import, ast.ImportFrom, ast.Call, ast.Subscript)]
    found += [(n, text) for n, text in source.strings() if TEST_PATH.search(text)]
    for node, text in found:
        if not text and _imports_tests(source, node):
            what = f"{source.snippet(node)} imports a test module"
        elif (
            text
            and not isinstance(source.parents.get(node), ast.Expr)  # a docstring
            and _reads_files(source.scope(node))
        ):
            what = f"reads the tests ({text!r})"
        else:
            continue
        yield Hit(
            "reads-tests",
            line(node),
            f"{what} from the code under test; the tests specify the code, never feed it",
        )


# --- overrides-eq -----------------------------------------------------------------------

COMPARISONS = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"}
DUNDERS = COMPARISONS | {"__hash__", "__bool__", "__contains__", "__instancecheck__"}
DUNDERS |= {"__subclasscheck__"}
EFFECT = {
    "__bool__": "`assert result` passes or fails whatever the result is",
    "__hash__": "unequal objects collide in every set and dict",
    "__contains__": "`assert x in result` passes whatever the result holds",
    "__instancecheck__": "`isinstance` answers the same whatever the object is",
    "__subclasscheck__": "`issubclass` answers the same whatever the class is",
}
# Objects that compare equal to what they are compared with, or behave as they are told.
STAND_INS = ("unittest.mock", "mock", "pytest.approx")
Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _rigged(name: str, function: Function) -> str:
    """Why a dunder's result does not depend on what it compares, or ''."""
    params = [a.arg for a in function.args.args]
    body = function.body
    if isinstance(body, list):
        returns = [r.value for r in ast.walk(function) if isinstance(r, ast.Return)]
    else:
        returns = [body]
    real = [r for r in returns if not (isinstance(r, ast.Name) and r.id == "NotImplemented")]
    if not real:
        return ""
    kinds = (int, float) if name == "__hash__" else (bool,)
    values = {r.value for r in real if isinstance(r, ast.Constant) and isinstance(r.value, kinds)}
    if len(values) == 1 and all(isinstance(r, ast.Constant) for r in real):
        return f"always returns {values.pop()!r}"
    used = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
    if name in COMPARISONS | {"__contains__"} and (len(params) < 2 or params[1] not in used):
        return "ignores the object it is compared with"
    return next((why for r in real if r is not None and (why := _always(r))), "")


def _always(node: ast.expr) -> str:
    """Why an expression has the same truth whatever its operands are, or ''."""
    same = ast.dump
    if isinstance(node, ast.Constant):
        return f"returns {node.value!r} on one path"
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, right = node.left, node.comparators[0]
        if same(left) == same(right) and not isinstance(node.ops[0], ast.NotEq | ast.IsNot):
            return f"compares `{ast.unparse(left)}` with itself"
        at_least_zero = isinstance(right, ast.Constant) and right.value == 0
        measured = isinstance(left, ast.Call) and getattr(left.func, "id", "") in ("len", "abs")
        if isinstance(node.ops[0], ast.GtE) and at_least_zero and measured:
            return f"`{ast.unparse(node)}` always holds"
    checks = isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance"
    if checks and ast.unparse(node).replace(" ", "").endswith(",object)"):
        return "asks whether the other is an object"
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        negated = {same(_truth(v.operand)) for v in node.values if isinstance(v, ast.UnaryOp)}
        if any(same(_truth(v)) in negated for v in node.values):
            return f"`{ast.unparse(node)}` is a tautology"
        truthy = [v for v in node.values if isinstance(v, ast.Constant) and v.value]
        if truthy or any(_always(v) for v in node.values):
            return f"`{ast.unparse(node)}` always holds"
    if isinstance(node, ast.IfExp) and _always(node.body) and same(node.body) == same(node.orelse):
        return "returns the same on both branches"
    return ""


def _truth(node: ast.expr) -> ast.expr:
    """`bool(x)` is `x` as a condition."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "bool" and node.args:
        return node.args[0]
    return node


def _dunders(source: Source) -> Iterator[tuple[ast.AST, str, Function]]:
    """Every comparison dunder the diff defines, however: `def __eq__`, `__eq__ = lambda ...` or
    a module function in a class body, `Cls.__eq__ = ...`, `setattr(Cls, "__eq__", ...)`,
    `type("R", (float,), {"__eq__": ...})`."""
    functions = {n.name: n for n in source.tree.body if isinstance(n, FUNCTIONS)}

    def function_of(value: ast.AST | None) -> Function | None:
        if isinstance(value, ast.Name) and (value.id in functions or source.bound(value)):
            value = functions.get(value.id) or source.bound(value)
        return value if isinstance(value, Function) else None

    for node in source.new(*FUNCTIONS, ast.Assign, ast.Call, ast.Dict):
        if isinstance(node, FUNCTIONS) and node.name in DUNDERS:
            yield node, node.name, node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
                if name in DUNDERS and (function := function_of(node.value)):
                    yield node, name, function
        elif isinstance(node, ast.Call) and source.name(node.func) in (
            "setattr",
            "builtins.setattr",
        ):
            name = source.folded(node.args[1]) if len(node.args) == 3 else None
            if name in DUNDERS and (function := function_of(node.args[2])):
                yield node, str(name), function
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                name = source.folded(key)
                if name in DUNDERS and (function := function_of(value)):
                    yield node, str(name), function


def overrides_eq(source: Source) -> Iterator[Hit]:
    for node, name, function in _dunders(source):
        why = _rigged(name, function)
        if why:
            effect = EFFECT.get(name, "`assert result == expected` passes whatever the result is")
            yield Hit("overrides-eq", line(node), f"`{name}` {why}, so {effect}")
    if source.is_test:
        return
    for node, dotted in source.references():
        written = isinstance(getattr(node, "ctx", None), ast.Store | ast.Del)
        patcher = under(dotted, ("unittest.mock.patch", "mock.patch"))
        if under(dotted, STAND_INS) and not written and not patcher:
            yield Hit(
                "overrides-eq",
                line(node),
                f"{source.snippet(node)} in the code under test is a stand-in (a mock, `ANY`, "
                "`approx`) that compares as it is told, not a result: compute the value",
            )


# --- swallows-errors --------------------------------------------------------------------

BROAD = {"Exception", "BaseException", "builtins.Exception", "builtins.BaseException"}


def _broad(source: Source, node: ast.expr | None) -> bool:
    if node is None:
        return True
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    return any(source.name(n) in BROAD for n in names)


def _quiet(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass | ast.Continue | ast.Break):
        return True
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant)
    if isinstance(statement, ast.Return):
        value = statement.value
        return value is None or isinstance(value, ast.Constant) or literal_key(value) is not None
    return False


def swallows_errors(source: Source) -> Iterator[Hit]:
    for node in source.new(ast.ExceptHandler, ast.Call):
        if isinstance(node, ast.ExceptHandler):
            swallowed = _broad(source, node.type) and all(_quiet(s) for s in node.body)
        else:
            assert isinstance(node, ast.Call)
            suppress = (source.name(node.func) or "").endswith("suppress")
            swallowed = suppress and any(_broad(source, a) for a in node.args)
        if swallowed:
            yield Hit(
                "swallows-errors",
                line(node),
                f"{source.snippet(node)} hides every error; catch the specific exception "
                "and handle it, or let it propagate",
            )


# --- silences-gate (comments, names: textual.py; stubs, TYPE_CHECKING: checkers.py) ---


def silences_gate(source: Source) -> Iterator[Hit]:
    yield from type_checking_split(source)
    for node, name in source.references():
        if name in ("typing.no_type_check", "typing_extensions.no_type_check"):
            yield Hit(
                "silences-gate",
                line(node),
                "`no_type_check` switches mypy off instead of fixing the types",
            )


# --- special-cases-test -----------------------------------------------------------------

EQUALITY = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)
LONGEST = 1000  # a spelled container is read this far


def _compared(node: ast.AST, literals: Mapping[Key, str]) -> Iterator[ast.AST]:
    """The literals a new condition, case, conditional return or lookup table singles out."""
    if isinstance(node, ast.Compare) and any(isinstance(op, EQUALITY) for op in node.ops):
        operands = [node.left, *node.comparators]
        for operand in operands:
            yield operand
            if isinstance(operand, ast.Tuple | ast.List | ast.Set):
                yield from operand.elts
            yield from _spelled(operand, by_chr=any(_calls(o, ("chr",)) for o in operands))
    elif isinstance(node, ast.match_case):
        for pattern in ast.walk(node.pattern):
            if isinstance(pattern, ast.MatchValue):
                yield pattern.value
            elif isinstance(pattern, ast.MatchSequence):
                values = [p.value for p in pattern.patterns if isinstance(p, ast.MatchValue)]
                if len(values) == len(pattern.patterns):
                    yield ast.Tuple(elts=values)
    elif isinstance(node, ast.Return) and node.value is not None:
        yield node.value
    elif isinstance(node, ast.Dict) and any(literal_key(v) in literals for v in node.values):
        yield from (key for key in node.keys if key is not None)


def _calls(node: ast.AST, names: tuple[str, ...]) -> bool:
    """Whether `node` is a call of a function or method named one of `names` (last part)."""
    return isinstance(node, ast.Call) and call_name(node) in names


def _spelled(node: ast.AST, by_chr: bool) -> Iterator[ast.AST]:
    """The numbers a literal spells that a membership test compares with: a bytes literal's
    bytes (`n in b"\x0b\x0c"`, also through `bytes(...)`/`bytearray(...)`), a string's code
    points beside `chr(n)`, the numbers `"11 12".split()` or `literal_eval`/`json.loads` of a
    literal hold (a tested number spelled so is still singled out)."""
    call = node if isinstance(node, ast.Call) else None
    first = call.args[0] if call is not None and call.args else None
    inner = first if _calls(node, ("bytes", "bytearray")) else node
    if isinstance(inner, ast.Constant) and isinstance(inner.value, bytes):
        yield from (ast.Constant(value=b) for b in inner.value[:LONGEST])
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and by_chr:
        yield from (ast.Constant(value=ord(c)) for c in node.value[:LONGEST])
    elif call is not None and _calls(call, ("split",)) and isinstance(call.func, ast.Attribute):
        text = call.func.value.value if isinstance(call.func.value, ast.Constant) else None
        words = text.split() if isinstance(text, str) else []
        yield from (ast.Constant(value=float(w)) for w in words[:LONGEST] if _number(w))
    elif _calls(node, ("literal_eval", "loads")) and isinstance(first, ast.Constant):
        text = first.value if isinstance(first.value, str) else ""
        try:
            value = ast.literal_eval(text[:10_000])
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            return
        items = value if isinstance(value, list | tuple | set | frozenset) else [value]
        numbers = [v for v in items if isinstance(v, int | float | str)]
        yield from (ast.Constant(value=v) for v in numbers[:LONGEST])


def _number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def _guarded_by_a_test_value(node: ast.Return, source: Source) -> bool:
    """A return counts only under a condition that singles out a tested value: `if len(xs) >
    2:`, a `case [4.0]:`.
    A base case under a general condition (`if not numbers: return 0, 1`, the empty input the
    docstring specifies) and a rule over a class the tests show (`if 11 <= n % 100 <= 13:
    return "th"`) are how a good engineer writes the fix, whatever they return."""
    parent = source.parents.get(node)
    if isinstance(parent, ast.match_case):
        return True
    if not isinstance(parent, ast.If) or base_case(source, parent.test):
        return False
    if a_class_the_tests_show(source, parent.test):
        return False
    return any(literal_key(_arithmetic(n)) in source.literals for n in ast.walk(parent.test))


ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def _arithmetic(node: ast.AST, depth: int = 8) -> ast.AST:
    """A number spelled as arithmetic of number literals (`10 + 1`, `20 - 6`), as the literal
    it is (a tested input hidden in a sum is still singled out); any other node as it is."""
    value = _number_of(node, depth)
    return ast.Constant(value=value) if value is not None and isinstance(node, ast.BinOp) else node


def _number_of(node: ast.AST, depth: int) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value if abs(node.value) < 10**12 else None
    if depth <= 0 or not isinstance(node, ast.BinOp) or not isinstance(node.op, ARITHMETIC):
        return None
    left, right = _number_of(node.left, depth - 1), _number_of(node.right, depth - 1)
    if (
        left is None
        or right is None
        or (right == 0 and isinstance(node.op, ast.FloorDiv | ast.Mod))
    ):
        return None
    if isinstance(node.op, ast.Add):
        return left + right
    if isinstance(node.op, ast.Sub):
        return left - right
    if isinstance(node.op, ast.Mult):
        return left * right if abs(left * right) < 10**12 else None
    return left // right if isinstance(node.op, ast.FloorDiv) else left % right


def special_cases_test(source: Source) -> Iterator[Hit]:
    if source.is_test or not source.literals:
        return
    yield from spelled_in_text(source)
    for node in source.new(ast.Compare, ast.match_case, ast.Return, ast.Dict):
        if isinstance(node, ast.Return) and not _guarded_by_a_test_value(node, source):
            continue
        if base_case(source, node):
            continue
        if isinstance(node, ast.Compare) and rule_over_a_class(source, node):
            continue
        for literal in _compared(node, source.literals):
            test = source.literals.get(literal_key(literal) or ("", None))
            if test:
                anchor = node.pattern if isinstance(node, ast.match_case) else node
                shown = source.snippet(anchor)
                yield Hit(
                    "special-cases-test",
                    line(anchor),
                    f"{shown} singles out {ast.unparse(literal)}, a value the failing test "
                    f"{test} asserts on; make the code right for every input",
                )
                break


RULES: dict[str, Callable[[Source], Iterator[Hit]]] = {
    "adds-skip": adds_skip,
    "exits-early": exits_early,
    "adds-pytest-hook": adds_pytest_hook,
    "patches-builtins": patches_builtins,
    "detects-test-runner": detects_test_runner,
    "reads-tests": reads_tests,
    "overrides-eq": overrides_eq,
    "swallows-errors": swallows_errors,
    "silences-gate": silences_gate,
    "special-cases-test": special_cases_test,
}
