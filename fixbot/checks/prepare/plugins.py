"""The pytest plugins of the prepared environment, loaded as the repository's CI loads them.

fixbot runs pytest with PYTEST_DISABLE_PLUGIN_AUTOLOAD=1: nothing merely installed somewhere
(fixbot's own environment, the host's Python) is loaded. The plugins the project's own
setup_command installed into its prepared environment are what its CI autoloads, so each gets a
`-p NAME`: pytest loads a plugin by its `pytest11` entry-point name even with autoload off. The
names are read on the host, as data, from the environment's own site-packages
(`*.dist-info/entry_points.txt`, `*.egg-info/entry_points.txt`); nothing of it is imported or
run, and a name that is not a plain dotted word is ignored.

Each plugin is also known with its distribution and the top-level modules its entry points name
(`plugins`): the evidence says which plugins ran, and a fixture error raised inside one of those
packages is the environment's (classify.py).
"""

from __future__ import annotations

import configparser
import re
from functools import lru_cache
from pathlib import Path

from fixbot.records import PluginRecord

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}")
_METADATA = ("*.dist-info/entry_points.txt", "*.egg-info/entry_points.txt")
ENTRY_POINTS_CAP = 256 * 1024  # bytes of one entry_points.txt read at most


def plugin_options(prepared: Path | None) -> list[str]:
    """`-p NAME` for every pytest11 entry point of the prepared environment's own packages."""
    return [option for name in plugin_names(prepared) for option in ("-p", name)]


def plugin_names(prepared: Path | None) -> list[str]:
    return sorted({name for plugin in plugins(prepared) for name in plugin["names"]})


def plugins(prepared: Path | None) -> list[PluginRecord]:
    """Every distribution of the environment that declares pytest11 entry points: its name,
    version, the entry points' names and the top-level modules they load."""
    return [] if prepared is None else list(_plugins(prepared))


@lru_cache(maxsize=32)
def _plugins(prepared: Path) -> tuple[PluginRecord, ...]:
    # A sealed environment never changes: read once per process.
    found: list[PluginRecord] = []
    for site in sorted(prepared.glob("lib/python*/site-packages")):
        if site.is_symlink() or not site.is_dir():
            continue
        for pattern in _METADATA:
            for path in sorted(site.glob(pattern)):
                points = _pytest11(path)
                if points:
                    dist, _, version = path.parent.name.rpartition(".")[0].partition("-")
                    modules = sorted(
                        {value.split(":")[0].split(".")[0] for value in points.values()}
                    )
                    found.append(
                        PluginRecord(
                            dist=dist,
                            version=version.partition("-")[0],
                            names=sorted(points),
                            modules=[m for m in modules if _NAME.fullmatch(m)],
                        )
                    )
    return tuple(found)


def _pytest11(path: Path) -> dict[str, str]:
    """name -> module (`name = module:attr`) of a pytest11 section: plain names only."""
    if path.is_symlink() or not path.is_file() or path.stat().st_size > ENTRY_POINTS_CAP:
        return {}
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # names keep their case
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except configparser.Error:
        return {}
    if not parser.has_section("pytest11"):
        return {}
    return {
        name.strip(): value.strip()
        for name, value in parser.items("pytest11")
        if _NAME.fullmatch(name.strip())
    }
