"""The pytest plugins of the prepared environment, loaded as the repository's CI loads them.

fixbot runs pytest with PYTEST_DISABLE_PLUGIN_AUTOLOAD=1: nothing merely installed somewhere
(fixbot's own environment, the host's Python) is loaded. The plugins the project's own
setup_command installed into its prepared environment are what its CI autoloads, so each gets a
`-p NAME`: pytest loads a plugin by its `pytest11` entry-point name even with autoload off. The
names are read on the host, as data, from the environment's own site-packages
(`*.dist-info/entry_points.txt`, `*.egg-info/entry_points.txt`); nothing of it is imported or
run, and a name that is not a plain dotted word is ignored.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}")
_METADATA = ("*.dist-info/entry_points.txt", "*.egg-info/entry_points.txt")
ENTRY_POINTS_CAP = 256 * 1024  # bytes of one entry_points.txt read at most


def plugin_options(prepared: Path | None) -> list[str]:
    """`-p NAME` for every pytest11 entry point of the prepared environment's own packages."""
    return [option for name in plugin_names(prepared) for option in ("-p", name)]


def plugin_names(prepared: Path | None) -> list[str]:
    if prepared is None:
        return []
    names: set[str] = set()
    for site in sorted(prepared.glob("lib/python*/site-packages")):
        if site.is_symlink() or not site.is_dir():
            continue
        for pattern in _METADATA:
            for path in sorted(site.glob(pattern)):
                names.update(_pytest11(path))
    return sorted(names)


def _pytest11(path: Path) -> list[str]:
    if path.is_symlink() or not path.is_file() or path.stat().st_size > ENTRY_POINTS_CAP:
        return []
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # names keep their case
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except configparser.Error:
        return []
    if not parser.has_section("pytest11"):
        return []
    return [name.strip() for name in parser.options("pytest11") if _NAME.fullmatch(name.strip())]
