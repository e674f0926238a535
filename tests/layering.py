"""The shape of the house as data and rules: which part of the package may import which, and how
a package is entered. Pure functions over a package folder, so the tests can run them on the
real package and on a temporary copy with a bad import injected (tests/test_layering.py).

The parts run in one order, top to bottom: the foundation's modules first (each may import only
those before it), then the stage packages, then the roots. LAYERS says what each part may import
besides itself; `order_problems` holds the table to being an order (no part may reach a part
that reaches it back, and what a part's imports may import, it may import too).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

# The foundation, in order: each module may import only those before it.
FOUNDATION: tuple[str, ...] = (
    "errors", "log", "proc", "secrets", "paths", "records", "inert", "commands", "config",
    "model",
)  # fmt: skip

_F = set(FOUNDATION)
LAYERS: dict[str, set[str]] = {
    # L0 the foundation: the exception tree, logging, the subprocess helper, secrets, the
    # .fixbot/ layout, the records kept in checkpoints and evidence, inert Markdown, a CI's
    # commands as data, the config, the model seam
    **{name: set(FOUNDATION[:at]) for at, name in enumerate(FOUNDATION)},
    # L1 material: a reply made a patch, the commit and its copies, the sandboxes
    "edits": {"errors"},
    "snapshot": _F | {"edits"},
    "sandbox": _F,
    # L2 judgement: the checks and the pass definition, the screening, the prompts
    "checks": _F | {"snapshot", "sandbox", "edits"},
    "screen": _F | {"snapshot", "edits"},
    "prompts": _F | {"snapshot", "edits"},
    # L3 the loop
    "loop": _F | {"snapshot", "sandbox", "edits", "checks", "screen", "prompts"},
    # L4 the outcome: the result (never the loop), and the runs that drive the loop
    "report": _F,
    "runs": _F | {"snapshot", "sandbox", "edits", "checks", "screen", "prompts", "loop", "report"},
    # L5 the forge: decide, then publish; it never runs repository code
    "forge": _F | {"report", "edits", "screen", "snapshot"},
    # L6 the roots: anything; nothing imports them
    "cli": {"*"},
    "server": {"*"},
    "__main__": {"cli"},
    "__init__": set(),
}
# Folders under the package that hold data, not code.
DATA = {"schema", "prompts/templates"}
# The modules under fixbot/ that import nothing of fixbot: package data, copied into a sandbox
# and run there by the repository's own Python, never imported by fixbot itself: the pytest
# plugin (loaded by the repository's pytest as `-p fixbot_harness_<hex>`) and the second
# judgement's runner (`python -I runner.py`).
STAGED = (Path("checks") / "pytest" / "plugin.py", Path("checks") / "rejudge" / "runner.py")


@dataclass(frozen=True)
class Import:
    module: str  # `fixbot.a.b` (absolute), or the dots and name as written (relative)
    names: tuple[str, ...]  # for `from M import a, b`; () for `import M`
    line: int
    level: int = 0


def imports_of(path: Path) -> Iterator[Import]:
    """Every import statement of fixbot in the file (and every relative one)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "fixbot" or alias.name.startswith("fixbot."):
                    yield Import(alias.name, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            if node.level:
                yield Import("." * node.level + (node.module or ""), names, node.lineno, node.level)
            elif node.module == "fixbot" or (node.module or "").startswith("fixbot."):
                yield Import(node.module or "", names, node.lineno)


def part_of(package: Path, path: Path) -> str:
    """`loop` for fixbot/loop/nodes.py, `config` for fixbot/config.py."""
    return path.relative_to(package).parts[0].removesuffix(".py")


def targets(found: Import) -> list[str]:
    """The dotted modules an import reaches: `from fixbot import x, y` reaches fixbot.x and
    fixbot.y; `from fixbot.a import b` reaches fixbot.a."""
    if found.module == "fixbot":
        return [f"fixbot.{name}" for name in found.names]
    return [found.module]


def sources(package: Path) -> list[Path]:
    return sorted(package.rglob("*.py"))


def where(package: Path, path: Path, line: int) -> str:
    return f"{path.relative_to(package)}:{line}"


def relative_imports(package: Path) -> list[str]:
    """Every import written relative to its module: the layer rules read absolute names only,
    so a relative import would pass them unseen."""
    return [
        f"{where(package, path, found.line)} imports {found.module} relatively"
        for path in sources(package)
        for found in imports_of(path)
        if found.level
    ]


def layer_violations(package: Path, layers: Mapping[str, set[str]] = LAYERS) -> list[str]:
    """Every import of a part its layer may not import."""
    problems = []
    for path in sources(package):
        part = part_of(package, path)
        allowed = layers.get(part, set())
        for found in imports_of(path):
            if found.level:
                continue
            for module in targets(found):
                target = module.split(".")[1] if "." in module else "__init__"
                if target in ("__version__", part) or "*" in allowed or target in allowed:
                    continue
                problems.append(f"{where(package, path, found.line)} imports {module}")
    return problems


def face_violations(package: Path) -> list[str]:
    """Outside a package, only its face (its __init__, or a subpackage's) is imported, and
    through the face only what it binds: a module of the package reached through the face
    (`from fixbot.loop import nodes`) is refused unless the face lists it in __all__."""
    problems = []
    for path in sources(package):
        inside = path.parent
        for found in imports_of(path):
            if found.level:
                continue
            names = found.module.split(".")
            folder = package.joinpath(*names[1:])
            if len(names) > 2 and not folder.is_dir() and not _is_inside(path, folder.parent):
                problems.append(f"{where(package, path, found.line)} reaches into {found.module}")
                continue
            if found.module == "fixbot" or not folder.is_dir() or _is_inside(inside, folder):
                continue
            face = Face.read(folder)
            for name in found.names:
                if face.is_module(name) and name not in face.listed:
                    problems.append(
                        f"{where(package, path, found.line)} imports the module {name} through "
                        f"{found.module}'s face, which does not list it"
                    )
    return problems


def _is_inside(path: Path, folder: Path) -> bool:
    """`path` is `folder` or below it: a package's own modules may use one another."""
    return path == folder or folder in path.parents


@dataclass(frozen=True)
class Face:
    """A package's __init__.py as data: the names it binds to objects, and its __all__."""

    folder: Path
    objects: frozenset[str]
    listed: tuple[str, ...]

    @classmethod
    def read(cls, folder: Path) -> Face:
        tree = ast.parse((folder / "__init__.py").read_text())
        objects: set[str] = set()
        listed: tuple[str, ...] = ()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module:
                source = Path(*node.module.split(".")[1:])
                for alias in node.names:
                    module = (folder.parent / source / alias.name).with_suffix(".py")
                    bound = alias.asname or alias.name
                    if not module.exists() and not (folder.parent / source / alias.name).is_dir():
                        objects.add(bound)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                listed = tuple(ast.literal_eval(node.value))
            elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.Assign):
                names = [node.name] if not isinstance(node, ast.Assign) else []
                names += [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
                objects.update(names)
        return cls(folder, frozenset(objects), listed)

    def is_module(self, name: str) -> bool:
        exists = (self.folder / f"{name}.py").exists() or (self.folder / name).is_dir()
        return exists and name not in self.objects


def foundation_order_violations(package: Path, order: tuple[str, ...] = FOUNDATION) -> list[str]:
    """A foundation module imports only the foundation modules before it in `order`."""
    problems = []
    for path in sources(package):
        part = part_of(package, path)
        if part not in order:
            continue
        before = set(order[: order.index(part)])
        for found in imports_of(path):
            for module in targets(found) if not found.level else []:
                target = module.split(".")[1] if "." in module else ""
                if target in order and target != part and target not in before:
                    problems.append(
                        f"{where(package, path, found.line)} imports {module}, which comes "
                        f"after {part} in the foundation's order"
                    )
    return problems


def order_problems(layers: Mapping[str, set[str]] = LAYERS) -> list[str]:
    """The table must be a strict order: no part may import itself through another, and what
    a part's allowed imports may import, it may import too (else the table hides a reach)."""
    problems = []
    concrete = {part: allowed for part, allowed in layers.items() if "*" not in allowed}
    for part, allowed in concrete.items():
        for other in sorted(allowed):
            if part in concrete.get(other, set()):
                problems.append(f"{part} and {other} may import each other")
            missing = concrete.get(other, set()) - allowed - {part}
            if missing:
                problems.append(
                    f"{part} may import {other}, which may import {', '.join(sorted(missing))}: "
                    f"{part} reaches them too, so its row must say so"
                )
    return problems


def unlayered_parts(package: Path, layers: Mapping[str, set[str]] = LAYERS) -> set[str]:
    parts = {part_of(package, p) for p in sources(package)}
    return parts - set(layers) - {d.split("/")[0] for d in DATA if "/" not in d}
