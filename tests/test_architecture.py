"""The shape of the house: imports run one way down the layers (tests/layering.py), each package
is used through its face, third-party clients stay at the edge, nothing runs at import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.layering import (
    STAGED,
    face_violations,
    foundation_order_violations,
    imports_of,
    layer_violations,
    order_problems,
    relative_imports,
    unlayered_parts,
)

PACKAGE = Path(__file__).resolve().parent.parent / "fixbot"


def test_imports_run_one_way_down_the_layers() -> None:
    assert layer_violations(PACKAGE) == []


def test_the_foundation_imports_only_what_comes_before_it() -> None:
    assert foundation_order_violations(PACKAGE) == []


def test_the_layer_table_is_an_order() -> None:
    assert order_problems() == []


def test_no_import_is_relative() -> None:
    assert relative_imports(PACKAGE) == []


def test_packages_are_used_through_their_faces() -> None:
    assert face_violations(PACKAGE) == []


@pytest.mark.parametrize("staged", STAGED, ids=str)
def test_what_is_staged_into_a_sandbox_imports_only_the_stdlib_and_pytest(staged: Path) -> None:
    allowed = set(sys.stdlib_module_names) | {"__future__", "pytest", "_pytest", "pluggy"}
    found = imports(PACKAGE / staged)
    assert found <= allowed, found - allowed
    assert list(imports_of(PACKAGE / staged)) == [], staged


@pytest.mark.parametrize("staged", STAGED, ids=str)
def test_nothing_in_fixbot_imports_what_is_staged(staged: Path) -> None:
    """fixbot copies these files (channel.PLUGIN_SOURCE, rejudge RUNNER_SOURCE); importing one
    would run its setup (the channel, the snapshot of pytest) in fixbot's own process."""
    dotted = "fixbot." + ".".join(staged.with_suffix("").parts)
    package, _, module = dotted.rpartition(".")
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                assert all(a.name != dotted for a in node.names), path
            elif isinstance(node, ast.ImportFrom):
                assert node.module != dotted, path
                names = [a.name for a in node.names]
                assert not (node.module == package and module in names), path


def test_every_part_of_the_package_has_a_layer() -> None:
    assert unlayered_parts(PACKAGE) == set()


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
    "openai": {"model/client.py"},
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
