"""The pytest a project asks for, read from its lock files and metadata as data.

A project whose setup_command installs no pytest gets one from the package index: the version
its own files ask for, else fixbot's pin (PYTEST_PIN). Looked for in this order, the first one
found wins:

    lock files      uv.lock, poetry.lock, pdm.lock (a `[[package]]` named pytest: its exact
                    version), Pipfile.lock (its `develop` or `default` entry)
    requirements    requirements*.txt, *requirements*.txt and requirements/*.txt at the root
                    (a `pytest...` line; markers and options dropped)
    metadata        pyproject.toml's `[dependency-groups]` and `[project.optional-dependencies]`,
                    setup.cfg's `[options.extras_require]`

Nothing of the repository is run or imported. A requirement is kept only when it is plainly a
version of pytest (`pytest==8.3.4`, `pytest>=7,<9`): a URL, a path or anything else is not a
version and is ignored, as is a bare `pytest` (any version: the pin).
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PYTEST_PIN = "pytest==9.0.3"  # the pytest fixbot installs when the project asks for none
FILE_CAP = 4 * 1024 * 1024  # bytes of one file read at most
_LOCKS = ("uv.lock", "poetry.lock", "pdm.lock")
_VERSION = r"[0-9][0-9A-Za-z.*+!_-]*"
_CLAUSE = re.compile(rf"(===|==|!=|~=|<=|>=|<|>)\s*({_VERSION})")
_SPECIFIER = re.compile(rf"{_CLAUSE.pattern}(?:,{_CLAUSE.pattern})*")
_REQUIREMENT = re.compile(
    r"pytest\s*(?:\[[\w,\s-]*\])?\s*\(?\s*([^;#()]*?)\s*\)?\s*(?:;.*)?", re.IGNORECASE
)


@dataclass(frozen=True)
class Wanted:
    """The pytest requirement fixbot installs (`pytest==9.0.3`), and why that one."""

    requirement: str
    source: str  # "uv.lock", "pyproject.toml", ...; "" for fixbot's pin

    def says(self) -> str:
        """Where the requirement comes from, for the evidence."""
        return f"{self.source} asks for it" if self.source else "fixbot's pin"


PINNED = Wanted(PYTEST_PIN, "")


def wanted_pytest(tree: Path) -> Wanted:
    """The pytest the project's files ask for, else fixbot's pin."""
    for source, requirement in _asked(tree):
        return Wanted(requirement, source)
    return PINNED


def specifier(text: str) -> str | None:
    """The version part of one requirement on pytest (`>=7,<9`), or None when the text is not
    plainly one: another package, a URL, a path, no version at all."""
    match = _REQUIREMENT.fullmatch(text.strip())
    if match is None or not match.group(1):
        return None
    clauses = [_CLAUSE.fullmatch(clause.strip()) for clause in match.group(1).split(",")]
    if not all(clauses):
        return None
    return ",".join(f"{c[1]}{c[2]}" for c in clauses if c)


def _asked(tree: Path) -> Iterator[tuple[str, str]]:
    for name in _LOCKS:
        version = _locked(_toml(tree / name))
        if version:
            yield name, f"pytest=={version}"
    if version := _pipfile(_text(tree / "Pipfile.lock")):
        yield "Pipfile.lock", f"pytest{version}"
    for path in _requirement_files(tree):
        for line in (_text(path) or "").splitlines():
            if spec := specifier(line.split(" #", 1)[0].split(" --", 1)[0]):
                yield path.relative_to(tree).as_posix(), f"pytest{spec}"
    project = _toml(tree / "pyproject.toml")
    for listed in _pyproject_lists(project):
        for item in listed:
            if isinstance(item, str) and (spec := specifier(item)):
                yield "pyproject.toml", f"pytest{spec}"
    for item in _extras_require(_text(tree / "setup.cfg")):
        if spec := specifier(item):
            yield "setup.cfg", f"pytest{spec}"


def _text(path: Path) -> str | None:
    if path.is_symlink() or not path.is_file() or path.stat().st_size > FILE_CAP:
        return None
    return path.read_text(encoding="utf-8", errors="replace")


def _toml(path: Path) -> dict[str, Any]:
    text = _text(path)
    if text is None:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _locked(lock: dict[str, Any]) -> str | None:
    packages = lock.get("package", [])
    for package in packages if isinstance(packages, list) else []:
        if isinstance(package, dict) and str(package.get("name", "")).lower() == "pytest":
            version = package.get("version")
            if isinstance(version, str) and re.fullmatch(_VERSION, version):
                return version
    return None


def _pipfile(text: str | None) -> str | None:
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return None
    for section in ("develop", "default"):
        entry = data.get(section, {}).get("pytest") if isinstance(data, dict) else None
        version = entry.get("version") if isinstance(entry, dict) else None
        if isinstance(version, str) and _SPECIFIER.fullmatch(version):
            return version
    return None


def _requirement_files(tree: Path) -> list[Path]:
    found = {*tree.glob("*requirements*.txt"), *tree.glob("requirements/*.txt")}
    return sorted(p for p in found if not p.is_symlink() and p.is_file())


def _pyproject_lists(project: dict[str, Any]) -> Iterator[list[Any]]:
    for table in (
        project.get("dependency-groups"),
        project.get("project", {}).get("optional-dependencies"),
    ):
        if isinstance(table, dict):
            for value in table.values():
                if isinstance(value, list):
                    yield value


def _extras_require(text: str | None) -> Iterator[str]:
    if not text:
        return
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            yield from (line for line in value.splitlines() if line.strip())
