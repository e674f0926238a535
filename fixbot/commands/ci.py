"""One command line of a CI as fixbot reads it, never run: a check, an install, a script to
follow, nothing to check, or something fixbot cannot run (with why).

    map_command(line)   a Check (argv and kind), an Install (part of the setup_command), a
                        Script (a repository file, to follow when it is a shell script),
                        Ignored (a comment, `set -e`, a version print), or Unmapped

fixbot runs a check as an argv list, never through a shell, so a line that needs one (a pipe,
`&&`, `$VAR`, a redirection, a glob, a `${{ }}` expression: shell.py) is Unmapped, as are
installs of system packages, services, containers, the network, other languages' tools. In the
foundation beside spec.py, importing nothing that runs anything: the forge (which must not
load the sandbox) and `fixbot init` both read CI files with it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath

from fixbot.commands.shell import Line, shell_construct
from fixbot.commands.spec import PYTHON, CheckKind, kind_of, unwrapped


@dataclass(frozen=True)
class Check:
    argv: tuple[str, ...]
    kind: CheckKind


@dataclass(frozen=True)
class Install:
    argv: tuple[str, ...]  # normalised to `python -m pip install ...` where it was pip


@dataclass(frozen=True)
class Script:
    path: str  # a repository file, relative to the root (not yet known to exist)
    argv: tuple[str, ...]


@dataclass(frozen=True)
class Ignored:
    why: str  # nothing to check: a comment, `set -e`, a version print


@dataclass(frozen=True)
class Unmapped:
    why: str


Mapped = Check | Install | Script | Ignored | Unmapped

_EXPRESSION = "${{"
_VERSION = (("--version",), ("-V",), ("version",))
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_FIRST_WORD = re.compile(r"\s*([^\s;&|<>()'\"]*)")


def map_command(line: Line | str) -> Mapped:
    """What one command line is to fixbot; never run."""
    if isinstance(line, Line) and line.why:
        return Unmapped(f"{line.why}: fixbot cannot split it into commands safely")
    text = line.text if isinstance(line, Line) else line
    if _EXPRESSION in text:
        return Unmapped("a ${{ }} expression: only the runner knows its value")
    construct = shell_construct(text)
    if construct:
        known = _unmapped_program(_FIRST_WORD.match(text).group(1))  # type: ignore[union-attr]
        return known or Unmapped(f"needs a shell ({construct}); fixbot runs argv lists, never one")
    words = shlex.split(text, comments=True)
    if not words:
        return Ignored("a comment")
    if _ASSIGNMENT.match(words[0]):
        return Unmapped("sets environment variables for the command; the sandbox has its own")
    return _by_program(tuple(words))


def _by_program(argv: tuple[str, ...]) -> Mapped:
    words = tuple(unwrapped(argv))  # `uv run pytest` runs pytest in the prepared environment
    if not words:
        return Unmapped("a runner with no command")
    install = _install(words)
    if install is not None:
        return install
    program = _program(words)
    rest = words[1:]
    if program in ("source", "."):
        if rest and PurePosixPath(rest[0]).name == "activate":
            return Ignored("activates a virtualenv; fixbot's prepared environment is on PATH")
        return Unmapped("a shell builtin (source): it changes the shell, which fixbot does not run")
    if program == "set":
        return Ignored("shell options")
    if program in _INFORMATIONAL or rest in _VERSION or _pip_info(words):
        return Ignored("prints information; checks nothing")
    known = _unmapped_program(program)
    if known is not None:
        return known
    if program in ("bash", "sh", "zsh", "dash"):
        scripts = [w for w in rest if not w.startswith("-")]
        if scripts and "-c" not in rest:
            return Script(_relative(scripts[0]), words)
        return Unmapped(f"runs {program} itself; fixbot runs argv lists, never a shell")
    if "/" in words[0] and not words[0].startswith("/"):
        return Script(_relative(words[0]), words)
    try:
        return Check(words, kind_of(words))
    except ValueError as exc:
        return Unmapped(str(exc))


def _program(words: tuple[str, ...]) -> str:
    """The program's name; for `python -m tox|nox|pre_commit`, the module's."""
    name = PurePosixPath(words[0]).name if words[0] != "." else "."
    if PYTHON.fullmatch(name) and words[1:2] == ("-m",) and len(words) > 2:
        module = words[2].replace("_", "-")
        return module if module in ("tox", "nox", "pre-commit") else name
    return name


def _unmapped_program(program: str) -> Unmapped | None:
    name = PurePosixPath(program).name
    for programs, why in _UNMAPPED:
        if name in programs:
            return Unmapped(why.format(program=name))
    return None


def _relative(path: str) -> str:
    return str(PurePosixPath(path.removeprefix("./")))


def _install(words: tuple[str, ...]) -> Mapped | None:
    """`pip install`, `python -m pip install`, `uv pip install`: the setup_command's part."""
    program = PurePosixPath(words[0]).name
    if program in ("pip", "pip3") and words[1:2] == ("install",):
        args = words[2:]
    elif PYTHON.fullmatch(program) and words[1:4] == ("-m", "pip", "install"):
        args = words[4:]
    elif program == "uv" and words[1:3] == ("pip", "install"):
        targets = [w for w in words[3:] if not w.startswith("-")]
        return _installer_only(targets) or Install(words)
    else:
        return None
    targets = [w for w in args if not w.startswith("-")]
    return _installer_only(targets) or Install(("python", "-m", "pip", "install", *args))


def _pip_info(words: tuple[str, ...]) -> bool:
    """`pip list`, `python -m pip freeze`, `uv pip show X`: what is installed, printed."""
    program = PurePosixPath(words[0]).name
    if PYTHON.fullmatch(program) and words[1:3] == ("-m", "pip"):
        sub = words[3:4]
    elif program == "uv" and words[1:2] == ("pip",):
        sub = words[2:3]
    elif program in ("pip", "pip3"):
        sub = words[1:2]
    else:
        return False
    return sub in (("list",), ("freeze",), ("show",), ("--version",))


def _installer_only(targets: list[str]) -> Ignored | None:
    if targets and set(targets) <= {"pip", "setuptools", "wheel", "uv"}:
        return Ignored("upgrades the installer itself; the prepared environment has its own")
    return None


_UNMAPPED: tuple[tuple[frozenset[str], str], ...] = tuple(
    (frozenset(programs.split()), why)
    for programs, why in (
        ("apt-get apt yum dnf apk brew choco snap port zypper",
         "installs system packages ({program}): fixbot's sandbox has no network; install them "
         "where fixbot runs (or in the sandbox image)"),
        ("docker docker-compose podman kubectl kind helm",
         "runs containers ({program}): fixbot's sandbox has no Docker and no services"),
        ("service systemctl pg_ctl pg_ctlcluster pg_isready redis-server mysqld mongod sleep",
         "starts or waits for a service ({program}): fixbot's sandbox has no services"),
        ("sudo su doas", "runs as another user ({program}): fixbot's sandbox runs as nobody"),
        ("curl wget ssh scp rsync gh codecov twine",
         "needs the network ({program}): fixbot's sandbox has none"),
        ("git", "runs git: the sandbox's copy of the tree is not a git repository"),
        ("npm npx yarn pnpm node deno bun cargo rustc rustup go mvn gradle gradlew dotnet "
         "bundle rake ruby gem composer php java swift",
         "another language's tool ({program}): fixbot fixes Python checks"),
        ("tox nox hatch",
         "runs {program} sessions, which build their own environments with the network: "
         "fixbot does not run them; list the commands they run as checks"),
        ("make", "runs make targets, each through a shell: fixbot does not run make; list the "
         "commands the target runs as checks"),
        ("pre-commit", "runs pre-commit hooks, which install their own environments with the "
         "network: list the checks they run (e.g. ruff check .) as checks"),
        ("uv poetry pdm pipenv conda mamba micromamba",
         "manages its own environment ({program}); fixbot installs with setup_command (e.g. "
         "python -m pip install -e .) into its prepared environment"),
        ("export unset",
         "sets environment variables ({program}): the checks run with the sandbox's own"),
        ("source . alias shopt trap ulimit umask eval exit return local declare readonly read "
         "wait pushd popd cd",
         "a shell builtin ({program}): it changes the shell, which fixbot does not run"),
    )
)  # fmt: skip
_INFORMATIONAL = frozenset(
    {"echo", "printf", "true", ":", "which", "type", "pwd", "ls", "cat", "env", "printenv"}
    | {"uname", "date", "df", "free", "nproc", "id", "whoami", "tree"}
)
