"""One changed Python file as the screen's rules read it: its new AST, the lines the diff added,
its import aliases (`Source`), a rule's finding (`Hit`), and the literals of the failing tests
(`Key`, `Case`, `literal_key`, `telling`, `telling_literals`)."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

# A literal as compared: ("n", 2.0), ("s", "abc"), ("b", b"x") or ("seq", (...)).
Key = tuple[str, object]
# One visible test case: the call's literal arguments, the literal it must return, the test.
Case = tuple[tuple[Key, ...], Key, str]
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Hit:
    rule: str
    line: int
    detail: str


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
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)

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

    def name(self, node: ast.AST) -> str | None:
        """The dotted name an expression refers to, through the imports; None if not a name."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.name(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def references(self, root: ast.AST | None = None) -> Iterator[tuple[ast.expr, str]]:
        """Whole dotted names used (`os.path.join`, not also `os.path`): under `root`, or new."""
        for node in ast.walk(root or self.tree):
            parent = self.parents.get(node)
            if not isinstance(node, ast.Name | ast.Attribute) or (
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
        scopes = (*FUNCTIONS, ast.Lambda)
        return next((a for a in self.ancestors(node) if isinstance(a, scopes)), self.tree)

    def snippet(self, node: ast.AST) -> str:
        text = " ".join((ast.get_source_segment(self.text, node) or ast.unparse(node)).split())
        return f"`{text if len(text) <= 80 else text[:77] + '...'}`"


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
