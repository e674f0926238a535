"""The pytest a project asks for, read from its files as data: lock files first, then its
requirements files, then its metadata; anything that is not plainly a version of pytest is not
a request, and a project that asks for none gets fixbot's pin."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixbot.checks.prepare.pins import PINNED, PYTEST_PIN, Wanted, specifier, wanted_pytest

UV_LOCK = """\
version = 1

[[package]]
name = "pluggy"
version = "1.5.0"

[[package]]
name = "pytest"
version = "8.3.4"
"""


def lay(tree: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    return tree


@pytest.mark.parametrize(
    ("files", "wanted"),
    [
        ({"uv.lock": UV_LOCK}, Wanted("pytest==8.3.4", "uv.lock")),
        (
            {"poetry.lock": UV_LOCK.replace("8.3.4", "7.4.4")},
            Wanted("pytest==7.4.4", "poetry.lock"),
        ),
        (
            {"Pipfile.lock": '{"develop": {"pytest": {"version": "==8.1.1"}}}'},
            Wanted("pytest==8.1.1", "Pipfile.lock"),
        ),
        (
            {"requirements-dev.txt": "freezegun\npytest==8.4.2  # the last 8\n"},
            Wanted("pytest==8.4.2", "requirements-dev.txt"),
        ),
        (
            {"requirements/test.txt": "pytest >= 7.0, < 9 ; python_version >= '3.8'\n"},
            Wanted("pytest>=7.0,<9", "requirements/test.txt"),
        ),
        (
            {"pyproject.toml": '[project.optional-dependencies]\ntests = ["pytest>=8,<9"]\n'},
            Wanted("pytest>=8,<9", "pyproject.toml"),
        ),
        (
            {"pyproject.toml": '[dependency-groups]\ndev = ["pytest[testing]~=8.2"]\n'},
            Wanted("pytest~=8.2", "pyproject.toml"),
        ),
        (
            {"setup.cfg": "[options.extras_require]\ntest =\n    pytest>=7.4\n    mock\n"},
            Wanted("pytest>=7.4", "setup.cfg"),
        ),
        (  # the lock file wins over what the metadata allows
            {"uv.lock": UV_LOCK, "pyproject.toml": '[dependency-groups]\ndev = ["pytest>=8"]\n'},
            Wanted("pytest==8.3.4", "uv.lock"),
        ),
    ],
    ids=[
        "uv.lock",
        "poetry.lock",
        "Pipfile.lock",
        "requirements pin",
        "requirements range",
        "extras",
        "dependency group",
        "setup.cfg",
        "lock first",
    ],
)
def test_the_pytest_a_project_asks_for(
    tmp_path: Path, files: dict[str, str], wanted: Wanted
) -> None:
    assert wanted_pytest(lay(tmp_path, files)) == wanted


def test_what_is_not_plainly_a_version_of_pytest_is_no_request(tmp_path: Path) -> None:
    lay(
        tmp_path,
        {
            "requirements.txt": (
                "pytest\n"  # any version: the pin
                "pytest-cov>=4\n"
                "pytest_mock==3.0\n"
                "pytest @ https://example.invalid/pytest-9.9.9-py3-none-any.whl\n"
                "-e ./vendored/pytest\n"
            ),
            "pyproject.toml": "[project\nbroken toml",
            "uv.lock": '[[package]]\nname = "pytest"\nversion = "$(touch /tmp/x)"\n',
        },
    )
    assert wanted_pytest(tmp_path) == PINNED
    assert PINNED.requirement == PYTEST_PIN and PINNED.says() == "fixbot's pin"
    assert specifier("pytest==8.0; os.system('x')") == "==8.0"  # a marker is dropped, not run
    assert specifier("Pytest == 8.0.*") == "==8.0.*"
    assert specifier("pytest==8.0 or other") is None


def test_a_linked_requirements_file_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("pytest==6.2.5\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "requirements.txt").symlink_to(outside)
    assert wanted_pytest(tree) == PINNED


def test_the_docs_name_the_pin() -> None:
    checks = Path(__file__).resolve().parents[3] / "docs" / "checks.md"
    assert f"`{PYTEST_PIN}`" in checks.read_text()
