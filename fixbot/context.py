"""What the model is shown: the failing tests, the files their tracebacks name, the repo map.

Everything here is bounded: messages and tracebacks arrive capped from checks.py, source files
are included while they fit the character budget, and the rest are named, not shown.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypedDict

from fixbot.checks import CheckResult, failing_tests
from fixbot.snapshot import read_inside

SOURCE_BUDGET_CHARS = 24_000
TREE_LIMIT = 200
_PATH_IN_TRACE = re.compile(r"(?:^|[\s\"'(])(?:/workspace/)?([\w./-]+\.py)(?::\d+|\", line \d+)")


class FailingTest(TypedDict):
    id: str
    message: str
    detail: str


class SourceFile(TypedDict):
    path: str
    text: str


def failing(check: CheckResult, limit: int = 30) -> list[FailingTest]:
    return [
        FailingTest(id=t, message=check["tests"][t]["message"], detail=check["tests"][t]["detail"])
        for t in failing_tests(check)[:limit]
    ]


def _test_module(test_id: str) -> str | None:
    """'tests.test_calc::test_add' -> 'tests/test_calc.py' (pytest's JUnit classname)."""
    classname = test_id.split("::", 1)[0]
    if not classname or classname.startswith("command: "):
        return None
    parts = classname.split(".")
    # classname may end in a test class: try the longest prefix that names a module file.
    return "/".join(parts) + ".py" if parts else None


def relevant_files(check: CheckResult, files: Sequence[str], tree: Path | None = None) -> list[str]:
    """Files named by failing tests and their tracebacks, and the repository modules the
    failing test files import, in order of first mention; code before tests."""
    known = set(files)
    found: dict[str, None] = {}
    for test in failing(check):
        module = _test_module(test["id"])
        candidates = [module] if module else []
        if module:
            parts = module[:-3].split("/")
            candidates += ["/".join(parts[:i]) + ".py" for i in range(len(parts) - 1, 0, -1)]
        candidates += _PATH_IN_TRACE.findall(test["detail"] + "\n" + test["message"])
        for path in candidates:
            path = path.removeprefix("./")
            if path in known:
                found.setdefault(path)
    if tree is not None:
        for path in [p for p in found if "test" in Path(p).name]:
            for module in imported_modules(read_inside(tree, path) or ""):
                for candidate in module_files(module, known):
                    found.setdefault(candidate)
    # Tracebacks name the code under test; put it before the tests themselves.
    return sorted(found, key=lambda p: ("test" in Path(p).name, list(found).index(p)))


def imported_modules(source: str) -> list[str]:
    """Dotted names a Python file imports (`from a.b import c` gives a.b and a.b.c)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def module_files(module: str, known: set[str]) -> list[str]:
    """The repository files a dotted module name may live in (flat or src/ layout)."""
    rel = module.replace(".", "/")
    options = [f"{rel}.py", f"{rel}/__init__.py", f"src/{rel}.py", f"src/{rel}/__init__.py"]
    return [path for path in options if path in known]


def prompt_values(
    check: CheckResult, tree: Path, files: Sequence[str], *, protected: Mapping[str, str]
) -> dict[str, object]:
    chosen = relevant_files(check, files, tree)
    if not chosen:
        chosen = [f for f in files if f.endswith(".py")]
    shown: list[SourceFile] = []
    omitted: list[str] = []
    used = 0
    for path in chosen:
        text = read_inside(tree, path)
        if text is None:
            continue
        if used + len(text) > SOURCE_BUDGET_CHARS:
            omitted.append(path)
            continue
        used += len(text)
        shown.append(SourceFile(path=path, text=text.rstrip("\n")))
    listing = [f + ("  (protected)" if f in protected else "") for f in files[:TREE_LIMIT]]
    if len(files) > TREE_LIMIT:
        listing.append(f"... and {len(files) - TREE_LIMIT} more files")
    return {"failing": failing(check), "files": shown, "omitted": omitted, "tree": listing}
