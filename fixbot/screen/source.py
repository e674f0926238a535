"""One changed Python file as the screen's rules read it: its new AST, the lines the diff added,
what its names reach (`Source.name`: through imports, local bindings, `getattr` with a name built
from parts, `sys.modules[...]`, `vars()`, `globals()`, `__dict__`), the texts it builds, a rule's
finding (`Hit`), and the literals of the failing tests (`Key`, `Case`, `literal_key`, `telling`,
`telling_literals`)."""

from __future__ import annotations

import ast
import bisect
import builtins
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from fixbot.screen.folding import builds, fold, sketch

# A literal as compared: ("n", 2.0), ("s", "abc"), ("b", b"x") or ("seq", (...)).
Key = tuple[str, object]
# One visible test case: the call's literal arguments, the literal it must return, the test.
Case = tuple[tuple[Key, ...], Key, str]
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (*FUNCTIONS, ast.Lambda)
GETATTR = ("getattr", "builtins.getattr")
IMPORTERS = ("__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__")
NAMESPACES = ("globals", "builtins.globals", "vars", "builtins.vars", "locals", "builtins.locals")
DEPTH = 8  # how many bindings deep a name is followed (a = b; b = a ends)


@dataclass(frozen=True)
class Hit:
    rule: str
    line: int
    detail: str


def under(name: str, prefixes: Collection[str]) -> bool:
    """Whether a dotted name is one of `prefixes` or inside one (`os.path.join` is under `os`)."""
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def line(node: ast.AST) -> int:
    return int(getattr(node, "lineno", 0))


@dataclass
class Source:
    """One changed Python file: its new AST, the lines the diff added, its import aliases."""

    path: str
    text: str
    tree: ast.Module
    added: frozenset[int]
    is_test: bool
    literals: Mapping[Key, str] = field(default_factory=dict)  # -> the test asserting on it
    cases: Sequence[Case] = ()  # the failing tests' (arguments, expected) pairs
    callees: frozenset[str] = frozenset()  # the functions those cases call, by name
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)
    spent: int = 0  # the evaluations classes.py has spent on this file
    rebound: frozenset[str] = frozenset()  # names the patch may bind in any module: bindings.py
    elsewhere: frozenset[str] = frozenset()  # names other changed files bind at their top level

    def __post_init__(self) -> None:
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node

    @cached_property
    def aliases(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    found[local] = alias.name if alias.asname else local
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return found

    def touched(self, node: ast.AST) -> bool:
        if isinstance(node, ast.match_case):
            node = node.pattern
        first = line(node)
        last = getattr(node, "end_lineno", None) or first
        at = bisect.bisect_left(self.added_sorted, first)
        return at < len(self.added_sorted) and self.added_sorted[at] <= last

    @cached_property
    def added_sorted(self) -> list[int]:
        return sorted(self.added)

    def new(self, *types: type[ast.AST]) -> Iterator[ast.AST]:
        """Nodes of `types` that the diff added or edited."""
        return (n for n in ast.walk(self.tree) if isinstance(n, types) and self.touched(n))

    def name(self, node: ast.AST, depth: int = DEPTH) -> str | None:
        """The dotted name an expression reaches, through the imports and the file's own
        bindings (`e = os.environ` makes `e.get` `os.environ.get`), `getattr(m, "ex" + "ec")`,
        `sys.modules["m"]`, `__import__("m")`, `vars(m)["x"]`, `globals()["x"]`, `m.__dict__["x"]`,
        `__builtins__` and a builtin's `__self__`; None if it reaches no name."""
        if depth < 0:
            return None
        if isinstance(node, ast.Name):
            if node.id == "__builtins__":
                return "builtins"
            bound = self.bound(node)
            named = self.name(bound, depth - 1) if bound is not None else None
            return named or self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.name(node.value, depth)
            if base and node.attr == "__self__" and _builtin(base):
                return "builtins"
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            return self._called_name(node, depth)
        if isinstance(node, ast.Subscript):
            return self._item_name(node, depth)
        return None

    def _called_name(self, node: ast.Call, depth: int) -> str | None:
        func = self.name(node.func, depth)
        args = node.args
        if func in GETATTR and len(args) >= 2 and (attr := self.folded(args[1])) is not None:
            base = self.name(args[0], depth)
            return f"{base}.{attr}" if base else None
        if func in IMPORTERS and args and (module := self.folded(args[0])) is not None:
            return module
        inner = node.func  # operator.attrgetter("x")(obj)
        if (
            isinstance(inner, ast.Call)
            and len(args) == 1
            and inner.args
            and self.name(inner.func, depth) == "operator.attrgetter"
        ):
            attr = self.folded(inner.args[0])
            base = self.name(args[0], depth)
            return f"{base}.{attr}" if base and attr is not None else None
        return None

    def _item_name(self, node: ast.Subscript, depth: int) -> str | None:
        key = self.folded(node.slice)
        if key is None:
            return None
        value = node.value
        container = self.name(value, depth) or ""
        if container == "sys.modules":
            return key
        if container == "builtins" or container.endswith(".__dict__"):
            return f"{container.removesuffix('.__dict__')}.{key}"
        if isinstance(value, ast.Call) and self.name(value.func, depth) in NAMESPACES:
            if value.args:
                base = self.name(value.args[0], depth)
                return f"{base}.{key}" if base else None
            return self.aliases.get(key, key)
        return None

    def bound(self, node: ast.Name) -> ast.expr | None:
        """The one expression a name is bound to in its scope (or, unbound there, the
        module's), when it is bound exactly once by a plain assignment; else None."""
        for scope in dict.fromkeys((self.scope(node), self.tree)):
            key = (scope, node.id)
            if key in self.bindings:
                return self.bindings[key]
        return None

    @cached_property
    def bindings(self) -> dict[tuple[ast.AST, str], ast.expr | None]:
        found: dict[tuple[ast.AST, str], ast.expr | None] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, SCOPES):
                for arg in ast.walk(node.args):
                    if isinstance(arg, ast.arg):
                        found[(node, arg.arg)] = None
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
                key = (self.scope(node), node.id)
                parent = self.parents.get(node)
                single = isinstance(parent, ast.Assign | ast.AnnAssign) and key not in found
                value = getattr(parent, "value", None) if single else None
                found[key] = value if isinstance(value, ast.expr) else None
        return found

    def folded(self, node: ast.AST | None) -> str | None:
        """The exact text an expression builds, when every part of it is known."""
        return fold(node, self.bound)

    def strings(self, root: ast.AST | None = None) -> Iterator[tuple[ast.expr, str]]:
        """Every string under `root` (or that the diff added): its literals, and each text built
        from parts (with "{}" for an unknown part), once for the whole expression."""
        for node in ast.walk(root or self.tree):
            if root is None and not self.touched(node):
                continue
            if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
                value = node.value
                yield node, value if isinstance(value, str) else value.decode("latin-1")
            elif (
                isinstance(node, ast.expr)
                and builds(node)
                and not self._inside_a_build(node)
                and (text := sketch(node, self.bound)) is not None
            ):
                yield node, text

    def _inside_a_build(self, node: ast.AST) -> bool:
        parent = self.parents.get(node)
        if isinstance(parent, ast.FormattedValue):
            parent = self.parents.get(parent)
        return parent is not None and builds(parent)

    def references(self, root: ast.AST | None = None) -> Iterator[tuple[ast.expr, str]]:
        """Whole dotted names used (`os.path.join`, not also `os.path`): under `root`, or new."""
        for node in ast.walk(root or self.tree):
            parent = self.parents.get(node)
            kinds = ast.Name | ast.Attribute | ast.Call | ast.Subscript
            if not isinstance(node, kinds) or (
                isinstance(parent, ast.Attribute) and parent.value is node
            ):
                continue
            name = self.name(node)
            if name and (root is not None or self.touched(node)):
                yield node, name

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        while node in self.parents:
            node = self.parents[node]
            yield node

    def scope(self, node: ast.AST) -> ast.AST:
        """The innermost function around `node`, or the module."""
        return next((a for a in self.ancestors(node) if isinstance(a, SCOPES)), self.tree)

    def snippet(self, node: ast.AST) -> str:
        text = " ".join((ast.get_source_segment(self.text, node) or ast.unparse(node)).split())
        return f"`{text if len(text) <= 80 else text[:77] + '...'}`"


def _builtin(name: str) -> bool:
    short = name.removeprefix("builtins.")
    return callable(getattr(builtins, short, None)) and "." not in short


def literal_key(node: ast.AST | None) -> Key | None:
    """A comparable form of a literal (2 and 2.0 are equal; lists and tuples too)."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float | str | bytes):
            return None
        if isinstance(value, int | float):
            return ("n", float(value))
        return ("s" if isinstance(value, str) else "b", value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = literal_key(node.operand)
        if inner is None or not isinstance(inner[1], float):
            return None
        return ("n", -inner[1] if isinstance(node.op, ast.USub) else inner[1])
    if isinstance(node, ast.Tuple | ast.List):
        keys = [literal_key(element) for element in node.elts]
        return None if any(k is None for k in keys) else ("seq", tuple(keys))
    return None


def telling_literals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Key]:
    """The literals in a test's assertions, parametrize lists, and the values of the local
    names its assertions use, that could single out a tested case: not 0, 1, -1, or a
    string too short to tell."""
    checks: list[ast.AST] = [n.test for n in ast.walk(function) if isinstance(n, ast.Assert)]
    calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]
    checks += [c for c in calls if getattr(c.func, "attr", "").startswith("assert")]
    checks += [d for d in function.decorator_list if "parametrize" in ast.unparse(d)]
    used = {n.id for check in checks for n in ast.walk(check) if isinstance(n, ast.Name)}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in used for t in node.targets
        ):
            checks.append(node.value)
    for node in (node for check in checks for node in ast.walk(check)):
        key = literal_key(node)
        if key is not None and telling(key):
            yield key


def telling(key: Key) -> bool:
    kind, value = key
    if kind == "n":
        return value not in (0.0, 1.0, -1.0)
    if kind == "seq":
        return isinstance(value, tuple) and len(value) > 0
    text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
    return len(text.strip()) >= 2 and any(c.isalnum() for c in text)
