"""The layering rules catch what they are for: each bad import, injected into a temporary copy
of the package, is reported (and the copy without it is clean)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.layering import (
    LAYERS,
    face_violations,
    foundation_order_violations,
    layer_violations,
    order_problems,
    relative_imports,
)

PACKAGE = Path(__file__).resolve().parent.parent / "fixbot"
Rule = Callable[[Path], list[str]]


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("layering") / "fixbot"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def inject(copy: Path, rel: str, line: str) -> Callable[[], None]:
    """Append `line` to the module at `rel` in the copy; returns the undo."""
    path = copy / rel
    before = path.read_text()
    path.write_text(f"{before}\n{line}\n")
    return lambda: path.write_text(before)


CASES: list[tuple[str, str, str, Rule, str]] = [
    # (id, module, injected line, rule, what the finding names)
    ("relative", "runs/fork.py", "from .session import thread_id", relative_imports, "relatively"),
    (
        "relative-parent",
        "checks/pytest/harness.py",
        "from .. import verdict",
        relative_imports,
        "relatively",
    ),
    (
        "foundation-order",
        "errors.py",
        "from fixbot.config import Config",
        foundation_order_violations,
        "after errors",
    ),
    (
        "foundation-order-packaged",
        "commands/words.py",
        "from fixbot.model import Model",
        foundation_order_violations,
        "after commands",
    ),
    (
        "module-through-face",
        "runs/fork.py",
        "from fixbot.loop import nodes",
        face_violations,
        "the module nodes",
    ),
    (
        "subpackage-module-through-face",
        "loop/nodes.py",
        "from fixbot.checks.pytest import channel",
        face_violations,
        "the module channel",
    ),
    (
        "reach-into",
        "runs/fork.py",
        "from fixbot.loop.nodes import generate",
        face_violations,
        "reaches into",
    ),
    (
        "parent-reaches-into-subpackage",
        "checks/trial.py",
        "from fixbot.checks.pytest.channel import stage_plugin",
        face_violations,
        "reaches into",
    ),
    (
        "upward",
        "forge/publish.py",
        "from fixbot.loop import build_graph",
        layer_violations,
        "imports fixbot.loop",
    ),
    (
        "upward-by-root",
        "sandbox/host.py",
        "from fixbot import checks",
        layer_violations,
        "imports fixbot.checks",
    ),
]


@pytest.mark.parametrize(
    ("module", "line", "rule", "named"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_bad_import_is_found(
    copy: Path, module: str, line: str, rule: Rule, named: str
) -> None:
    assert rule(copy) == []
    undo = inject(copy, module, line)
    try:
        found = rule(copy)
    finally:
        undo()
    assert len(found) == 1, found
    assert found[0].startswith(f"{module}:") and named in found[0], found


def test_a_module_the_face_lists_may_be_imported_through_it(copy: Path) -> None:
    """`lessons` is in fixbot.loop's __all__: a deliberate namespace, not a private module."""
    undo = inject(copy, "runs/fork.py", "from fixbot.loop import lessons")
    try:
        assert face_violations(copy) == []
    finally:
        undo()


def test_a_table_with_a_cycle_is_not_an_order() -> None:
    table = {**LAYERS, "sandbox": LAYERS["sandbox"] | {"checks"}}
    assert any("sandbox and checks may import each other" in p for p in order_problems(table))


def test_a_table_that_hides_a_reach_is_not_an_order() -> None:
    """screen may import snapshot, which may import edits: a screen row without edits would
    let screen reach edits through snapshot while the table says it cannot."""
    table = {**LAYERS, "screen": LAYERS["screen"] - {"edits"}}
    problems = order_problems(table)
    assert any(p.startswith("screen may import snapshot") and "edits" in p for p in problems)
