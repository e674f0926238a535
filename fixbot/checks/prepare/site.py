"""What an environment holds, read on the host as data: its site-packages folders, the
distributions installed there and their versions. Nothing of it is imported or run."""

from __future__ import annotations

import re
from pathlib import Path

INSTALLED_BY_FIXBOT = "fixbot-installed"  # in a distribution's .dist-info: fixbot put it there
_DIST_INFO = re.compile(r"(?P<name>[A-Za-z0-9_.]+)-(?P<version>[A-Za-z0-9_.!+]+)\.dist-info")


def site_packages(env: Path) -> list[Path]:
    """The environment's own site-packages folders (never one that is a link)."""
    found = sorted(env.glob("lib/python*/site-packages"))
    return [site for site in found if not site.is_symlink() and site.is_dir()]


def normalized(name: str) -> str:
    """A distribution's name as PEP 503 compares names."""
    return re.sub(r"[-_.]+", "-", name).lower()


def distributions(env: Path) -> dict[str, tuple[str, Path]]:
    """normalized name -> (version, its .dist-info folder), for every distribution there."""
    found: dict[str, tuple[str, Path]] = {}
    for site in site_packages(env):
        for folder in sorted(site.glob("*.dist-info")):
            match = _DIST_INFO.fullmatch(folder.name)
            if match and folder.is_dir() and not folder.is_symlink():
                found[normalized(match["name"])] = (match["version"], folder)
    return found


def distribution(env: Path, name: str) -> Path | None:
    """The .dist-info folder of one distribution, or None when it is not installed there."""
    found = distributions(env).get(normalized(name))
    return found[1] if found else None


def version(env: Path, name: str) -> str:
    """The installed version of one distribution ("" when it is not installed there)."""
    found = distributions(env).get(normalized(name))
    return found[0] if found else ""
