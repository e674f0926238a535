"""The shape of the house: imports run one way down the layers, each package is used through
its face, third-party clients stay at the edge, nothing runs at import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "fixbot"

# What each part of the package may import of fixbot (besides itself): the pipeline, top down.
# Foundation modules import only one another; a package sees the layers above it in this table.
FOUNDATION = {
    "errors", "log", "proc", "secrets", "config", "llm", "window", "paths", "records", "inert",
    "checkspec", "commandline", "shellsyntax",
}  # fmt: skip
LAYERS: dict[str, set[str]] = {
    # L0 foundation: the exception tree, logging, the subprocess helper, secrets, the config,
    # the model client and its context window, the .fixbot/ layout, the records kept in
    # checkpoints and evidence
    **{name: FOUNDATION for name in FOUNDATION},
    # L1 material: the commit and its copies, the sandboxes, a reply made a patch
    "snapshot": FOUNDATION | {"edits"},
    "sandbox": FOUNDATION,
    "edits": {"errors"},
    # L2 judgement: the checks and the pass definition, the screening, the prompts
    "checks": FOUNDATION | {"snapshot", "sandbox", "edits"},
    "screen": FOUNDATION | {"snapshot", "edits"},
    "prompts": FOUNDATION | {"snapshot"},
    # L3 the loop
    "loop": FOUNDATION | {"snapshot", "sandbox", "edits", "checks", "screen", "prompts"},
    # L4 the outcome: the result (never the loop), and the runs that drive the loop
    "report": FOUNDATION,
    "runs": FOUNDATION
    | {"snapshot", "sandbox", "edits", "checks", "screen", "prompts", "loop"}
    | {"report"},
    # L5 the forge: decide, then publish; it never runs repository code
    "forge": FOUNDATION | {"report", "edits", "screen", "snapshot"},
    # L6 the roots: anything; nothing imports them
    "cli": {"*"},
    "server": {"*"},
    "__main__": {"cli"},
    "__init__": set(),
}


def part_of(path: Path) -> str:
    """`loop` for fixbot/loop/nodes.py, `config` for fixbot/config.py."""
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def fixbot_imports(path: Path) -> list[tuple[str, int]]:
    """(fixbot.a.b, line) for every import of fixbot in the file; `from fixbot import x`
    gives fixbot.x."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.startswith("fixbot")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "fixbot":
                found += [(f"fixbot.{a.name}", node.lineno) for a in node.names]
            elif node.module.startswith("fixbot."):
                found.append((node.module, node.lineno))
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))

# The one module under fixbot/ that imports nothing of fixbot: package data, copied into each
# check's sandbox and loaded there by the repository's own pytest (`-p fixbot_harness_<hex>`),
# never imported by fixbot itself.
STAGED_PLUGIN = PACKAGE / "checks" / "pytest_plugin.py"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_one_way_down_the_layers(path: Path) -> None:
    part = part_of(path)
    allowed = LAYERS[part]
    for module, line in fixbot_imports(path):
        target = module.split(".")[1]
        if target == "__version__" or target == part or "*" in allowed:
            continue
        assert target in allowed, f"{path.relative_to(PACKAGE)}:{line} imports {module}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_packages_are_used_through_their_faces(path: Path) -> None:
    """Outside a package, only its __init__ (or a subpackage's) is imported: its modules are
    its own business."""
    part = part_of(path)
    for module, line in fixbot_imports(path):
        names = module.split(".")
        target = names[1]
        if target == part or not (PACKAGE / target).is_dir() or len(names) == 2:
            continue
        face = PACKAGE.joinpath(*names[1:])
        assert face.is_dir(), f"{path.relative_to(PACKAGE)}:{line} reaches into {module}"


def test_the_staged_pytest_plugin_imports_only_the_stdlib_and_pytest() -> None:
    allowed = set(sys.stdlib_module_names) | {"__future__", "pytest", "_pytest", "pluggy"}
    assert fixbot_imports(STAGED_PLUGIN) == []
    assert imports(STAGED_PLUGIN) <= allowed, imports(STAGED_PLUGIN) - allowed


def test_nothing_in_fixbot_imports_the_staged_plugin() -> None:
    """fixbot copies the file (channel.PLUGIN_SOURCE); importing it would run its hooks' setup
    (the channel, the snapshot of pytest) in fixbot's own process."""
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names]
                names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                assert not any(n.split(".")[-1] == "pytest_plugin" for n in names), path


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {part_of(p) for p in SOURCES} - {"schema", "prompts/templates"}
    assert parts <= set(LAYERS), parts - set(LAYERS)


def test_the_publish_path_loads_no_sandbox_loop_or_langgraph() -> None:
    """The publish job runs no repository code: nothing it imports could run any."""
    code = (
        "import sys, fixbot.forge.github.run; "
        "bad = sorted(m for m in sys.modules if m.split('.')[:2] in (['fixbot', 'sandbox'], "
        "['fixbot', 'loop'], ['fixbot', 'checks'], ['fixbot', 'runs']) "
        "or m.startswith('langgraph')); print(bad); raise SystemExit(bool(bad))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_edits_package_loads_nothing_but_the_exception_tree() -> None:
    code = (
        "import sys, fixbot.edits; "
        "bad = sorted(m for m in sys.modules if m.startswith('fixbot.') "
        "and not m.startswith('fixbot.edits') and m != 'fixbot.errors'); "
        "print(bad); raise SystemExit(bool(bad))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# Each third-party client is imported by exactly one module.
OWNERS = {
    "openai": {"llm.py"},
    "docker": {"sandbox/docker.py"},
    "github": {"forge/github/client.py"},
    "detect_secrets": {"secrets.py"},
}


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("client", sorted(OWNERS))
def test_each_client_is_imported_by_its_one_module(client: str) -> None:
    users = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if client in imports(p)}
    assert users <= OWNERS[client]


def test_importing_the_graph_pulls_in_no_github_docker_or_cli() -> None:
    code = (
        "import sys, fixbot.loop.graph; "
        "bad = [m for m in ('github', 'docker', 'fixbot.cli') if m in sys.modules]; "
        "print(bad); raise SystemExit(bool(bad))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_shell_true_anywhere_in_the_package() -> None:
    for path in PACKAGE.rglob("*.py"):
        assert "shell=True" not in path.read_text(), path


def test_version_and_help() -> None:
    from fixbot import __version__

    out = subprocess.run(
        [sys.executable, "-m", "fixbot", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == f"fixbot {__version__}"
    helptext = subprocess.run(
        [sys.executable, "-m", "fixbot", "fix", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for option in (
        "--config",
        "--model",
        "--base-url",
        "--max-iterations",
        "--sandbox",
        "--out",
        "--apply",
        "--json",
    ):
        assert option in helptext


def test_bad_option_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fixbot", "fix", "--max-iterations", "many"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "--max-iterations" in result.stderr
