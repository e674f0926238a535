"""Code the gates would read differently from what runs (`silences-gate`): mypy reads a stub
(`.pyi`) instead of the module beside it, and never checks the branch of `if TYPE_CHECKING:`
that runs. A candidate that adds either shows mypy one program and runs another.

    stub_hits(patch, tree)  a new `.pyi` for a module the repository implements: beside it
                            (`calc.pyi`, `pkg/__init__.pyi`) or in a stub folder
                            (`stubs/pkg/calc.pyi` for `src/pkg/calc.py`)
    type_checking_split     an `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`, `MYPY`, `not
                            ...`) whose running branch defines functions, classes or lambdas, or
                            rebinds what the checked branch defines; imports for the checker
                            only (`if TYPE_CHECKING: from x import Y`) are what it is for
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from fixbot.edits import Patch
from fixbot.screen.source import FUNCTIONS, Hit, Source, line

CHECKING = ("typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING", "TYPE_CHECKING", "MYPY")
DEFINITIONS = (*FUNCTIONS, ast.ClassDef, ast.Lambda)
SOURCE_ROOTS = ("", "src", "lib")  # where a one-part stub name is a top-level module


def stub_hits(patch: Patch, tree: Path) -> Iterator[tuple[str, Hit]]:
    """(path, Hit) for each new stub that stands in for a module of the repository."""
    stubs = [
        c.path
        for c in patch.changes
        if c.path.endswith(".pyi") and c.old is None and c.new is not None
    ]
    if not stubs:
        return
    modules = {p.relative_to(tree).as_posix() for p in tree.rglob("*.py") if p.is_file()}
    modules |= {c.path for c in patch.changes if c.path.endswith(".py") and c.new is not None}
    for stub in stubs:
        implemented = _implementation(stub, modules)
        if implemented:
            yield (
                stub,
                Hit(
                    "silences-gate",
                    0,
                    f"adds the stub {stub}, which mypy reads instead of {implemented}: the types "
                    "it states are never checked against the code that runs; fix the module itself",
                ),
            )


def _implementation(stub: str, modules: set[str]) -> str | None:
    """The repository module a stub describes, or None."""
    parts = list(PurePosixPath(stub.removesuffix(".pyi")).parts)
    beside = [stub.removesuffix("i")]
    if parts[-1] == "__init__":
        beside.append("/".join(parts[:-1]) + ".py")
    found = next((m for m in beside if m in modules), None)
    if found:
        return found
    for count in range(len(parts), 0, -1):
        tail = "/".join(parts[-count:])
        for module in sorted(modules):
            for spelled in (f"{tail}.py", f"{tail}/__init__.py"):
                if module == spelled or module.endswith("/" + spelled):
                    root = module[: -len(spelled)].rstrip("/")
                    if count >= 2 or root in SOURCE_ROOTS:
                        return module
    return None


def type_checking_split(source: Source) -> Iterator[Hit]:
    for node in source.new(ast.If):
        assert isinstance(node, ast.If)
        positive = _checking(source, node.test)
        if positive is None:
            continue
        checked, running = (node.body, node.orelse) if positive else (node.orelse, node.body)
        why = _runs_unchecked(checked, running)
        if why:
            yield Hit(
                "silences-gate",
                line(node),
                f"{source.snippet(node.test)}: {why}, which mypy never checks (it reads only "
                "the TYPE_CHECKING side); keep that branch for imports and write one definition",
            )


def _checking(source: Source, test: ast.expr) -> bool | None:
    """True for `TYPE_CHECKING`, False for `not TYPE_CHECKING`, None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _checking(source, test.operand)
        return None if inner is None else not inner
    name = source.name(test) if isinstance(test, ast.Name | ast.Attribute) else None
    return True if name in CHECKING else None


def _runs_unchecked(checked: list[ast.stmt], running: list[ast.stmt]) -> str:
    body = ast.Module(body=running, type_ignores=[])
    defined = [n for n in ast.walk(body) if isinstance(n, DEFINITIONS)]
    if defined:
        first = defined[0]
        what = "a lambda" if isinstance(first, ast.Lambda) else f"`{first.name}`"
        return f"the branch that runs defines {what}"
    typed = {
        n.name
        for n in ast.walk(ast.Module(body=checked, type_ignores=[]))
        if isinstance(n, DEFINITIONS[:-1])
    }
    rebound = sorted(typed & _bound(running))
    return f"the branch that runs rebinds `{rebound[0]}`" if rebound else ""


def _bound(statements: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.Module(body=statements, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names
