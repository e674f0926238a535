"""Who and where a command seems to run: the host's own facts, for the second judgement.

Every sandboxed run shares facts no developer's machine has: HOME is /tmp, the tree is at
/workspace, the user is `sandbox`, the host is `sandbox`, CI is set, files are capped in size.
Code that is right only under those facts passes the first judgement and fails the user. The
second judgement therefore runs under the host's own: its user name and home folder's path (an
empty folder there), the repository's own path as the working folder, the host's name, CI as the
host has it, and, where the attempt's scratch is capped as a whole, the host's own per-file
limit. Code that is right only where fixbot runs it fails one of the two judgements, whichever
way its test goes; code that tells them apart from the host itself needs a fact that neither
gives (no network, an empty home): security.md names them.

Nothing here is secret: a name, paths, a hostname, whether CI is set.
"""

from __future__ import annotations

import getpass
import os
import resource
import socket
from pathlib import Path

from fixbot.sandbox.host import SYSTEM_DIRS, python_prefixes
from fixbot.sandbox.protocol import BASE_ENV, OUTPUTS, PREPARED, WORKSPACE, Persona

# Where the sandbox mounts its own; a host path under one of them is never used as a persona's.
_RESERVED = ("/proc", "/dev", "/etc", "/tmp", "/sys", "/run", OUTPUTS, PREPARED, WORKSPACE)


def host_persona(repo: Path, *, scratch_capped: bool, file_size: int) -> Persona:
    """The host's facts for a run over a copy of `repo` (`file_size`: fixbot's per-file cap,
    kept where the scratch folder is not capped as a whole)."""
    user = _plain(getpass.getuser()) or "user"
    home = _usable(str(Path.home()), holds_interpreters=True) or f"/home/{user}"
    workspace = _usable(str(repo.resolve())) or f"{home}/{_plain(repo.name) or 'project'}"
    if workspace == home or home.startswith(workspace + "/"):
        workspace = f"{home}/{_plain(repo.name) or 'project'}"
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    host_limit = None if soft == resource.RLIM_INFINITY else soft
    return Persona(
        user=user,
        home=home,
        workspace=workspace,
        hostname=_plain(socket.gethostname()) or "localhost",
        ci=os.environ.get("CI"),
        file_size=host_limit if scratch_capped else min(file_size, host_limit or file_size),
        kept=tuple((name, _kept(name)) for name in BASE_ENV if name not in ("HOME", "CI")),
    )


def _kept(name: str) -> str | None:
    """The host's value of one of BASE_ENV's names, where the sandbox can honour it."""
    value = os.environ.get(name)
    if name == "TMPDIR":
        return value if value == "/tmp" else None  # the sandbox's /tmp is its only scratch
    if name in ("LANG", "LC_ALL") and value is not None and "\n" in value:
        return None
    return value


def _plain(text: str) -> str:
    """`text` if it is a plain name (letters, digits, . _ -), else ""."""
    ok = text and len(text) <= 64 and all(c.isalnum() or c in "._-" for c in text)
    return text if ok and not text.startswith(("-", ".")) else ""


def _usable(path: str, *, holds_interpreters: bool = False) -> str:
    """`path` if the sandbox can mount a folder there: absolute, plain, neither in nor over the
    system's folders, the interpreters' (a home may hold them: they are bound over it) and the
    sandbox's own mounts."""
    parts = path.split("/")
    if not path.startswith("/") or path == "/" or not all(_plain(p) for p in parts[1:]):
        return ""
    for taken in (*SYSTEM_DIRS, *_RESERVED, *python_prefixes()):
        inside = path == taken or path.startswith(taken + "/")
        over = taken.startswith(path + "/") and not (
            holds_interpreters and taken in python_prefixes()
        )
        if inside or over:
            return ""
    return path
