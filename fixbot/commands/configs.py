"""The files the gates read for configuration, as data: the root configuration each tool reads
first (`gate_config`: ruff's `.ruff.toml`, `ruff.toml`, `pyproject.toml` with `[tool.ruff]`;
mypy's `mypy.ini`, `.mypy.ini`, `pyproject.toml` with `[tool.mypy]`, `setup.cfg` with
`[mypy]`), and the repository's files that configuration names (`gate_files`: the chain of
ruff's `extend`, mypy's `plugins`). fixbot hands the tools the root file explicitly
(checks/tools.py) and protects all of them (snapshot/protected.py, the screen).
"""

from __future__ import annotations

import configparser
import tomllib
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath
from typing import Literal

Reader = Callable[[str], "str | None"]
RUFF_CONFIGS = (".ruff.toml", "ruff.toml", "pyproject.toml")
MYPY_CONFIGS = ("mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg")
EXTENDS = 8  # how long a chain of ruff `extend`s is followed


def gate_config(tool: Literal["ruff", "mypy"], read: Reader) -> str | None:
    """The root file `tool` would read first, or None."""
    if tool == "ruff":
        return _first(RUFF_CONFIGS, read, lambda name, text: _has_table(name, text, "ruff"))
    return _first(MYPY_CONFIGS, read, _names_mypy)


def gate_files(read: Reader) -> list[str]:
    """The repository's files the gates' root configurations name: the chain of ruff's
    `extend`, the modules and paths of mypy's `plugins` (those that exist)."""
    found: list[str] = []
    config = gate_config("ruff", read)
    for _ in range(EXTENDS):
        extended = _ruff_extend(config, read) if config else None
        if extended is None or extended in found or read(extended) is None:
            break
        found.append(extended)
        config = extended
    mypy = gate_config("mypy", read)
    for plugin in _mypy_plugins(mypy, read) if mypy else []:
        path = plugin.split(":")[0].strip()
        spelled = [path] if path.endswith(".py") else _module_files(path)
        found += [rel for rel in spelled if read(rel) is not None and rel not in found]
    return found


def _relative(base: str, target: str) -> str | None:
    """`target` as a repository path, relative to the folder of `base`; None outside."""
    if target.startswith(("/", "~", "$")):
        return None
    parts: list[str] = []
    for part in (*PurePosixPath(base).parent.parts, *PurePosixPath(target).parts):
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts) or None


def _ruff_extend(config: str, read: Reader) -> str | None:
    try:
        data = tomllib.loads(read(config) or "")
    except tomllib.TOMLDecodeError:
        return None
    table = data.get("tool", {}).get("ruff", {}) if config.endswith("pyproject.toml") else data
    extend = table.get("extend") if isinstance(table, dict) else None
    return _relative(config, extend) if isinstance(extend, str) else None


def _mypy_plugins(config: str, read: Reader) -> list[str]:
    text = read(config) or ""
    if config.endswith(".toml"):
        try:
            plugins = tomllib.loads(text).get("tool", {}).get("mypy", {}).get("plugins", [])
        except tomllib.TOMLDecodeError:
            return []
        plugins = [plugins] if isinstance(plugins, str) else plugins
        named = [p for p in plugins if isinstance(p, str)] if isinstance(plugins, list) else []
    else:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            return []
        named = parser.get("mypy", "plugins", fallback="").replace("\n", ",").split(",")
    entries = [entry.strip() for entry in named if entry.strip()]
    # a path is relative to the config's folder; a module is found where Python would find it
    return [(_relative(config, e) or "") if e.split(":")[0].endswith(".py") else e for e in entries]


def _module_files(module: str) -> list[str]:
    path = module.replace(".", "/")
    return [f"{root}{path}{end}" for root in ("", "src/") for end in (".py", "/__init__.py")]


def _first(names: Sequence[str], read: Reader, names_it: Callable[[str, str], bool]) -> str | None:
    for name in names:
        text = read(name)
        if text is not None and names_it(name, text):
            return name
    return None


def _has_table(name: str, text: str, tool: str) -> bool:
    """A ruff.toml is ruff's whatever it holds; a pyproject.toml only with [tool.TOOL]. An
    unreadable pyproject.toml is named anyway: the tool then says what is wrong with it."""
    if name != "pyproject.toml":
        return True
    try:
        return tool in tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError:
        return True


def _names_mypy(name: str, text: str) -> bool:
    if name == "pyproject.toml":
        return _has_table(name, text, "mypy")
    if name == "setup.cfg":  # read as mypy reads it: a [mypy] section of an INI file
        parser = configparser.RawConfigParser()
        try:
            parser.read_string(text, source=name)
        except configparser.Error:
            return True  # named anyway: mypy then says what is wrong with it
        return parser.has_section("mypy")
    return True
