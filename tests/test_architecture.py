"""The shape of the house: third-party clients stay at the edge, nothing runs at import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "fixbot"

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


def test_every_action_input_and_output_is_documented_in_the_readme() -> None:
    import yaml

    root = PACKAGE.parent
    action = yaml.safe_load((root / "action.yml").read_text())
    readme = (root / "README.md").read_text()
    for name in [*action["inputs"], *action["outputs"]]:
        assert f"| `{name}` |" in readme, name


def test_the_readme_shows_the_workflow_exactly_as_shipped() -> None:
    root = PACKAGE.parent
    workflow = (root / ".github" / "workflows" / "fixbot.yml").read_text()
    readme = (root / "README.md").read_text()
    assert f"```yaml\n{workflow}```" in readme
