"""What a CI runs, as fixbot's checks: its `run:` steps (and the repository scripts they call)
-> the checks and the install it can run, and what it cannot, each with where and why.

Shared by `fixbot init` (every step of every workflow, to propose a `.fixbot.yml`) and the
Action (the failed run's failed steps, used as that run's checks). Nothing here is run: each
command is read with fixbot.commands.ci, a check becomes an argv list, never a shell's input.
Scripts are read from the trusted tree (`root`) with snapshot.read_inside: never through a
link, never outside it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from fixbot.commands import (
    PYTHON,
    Check,
    CheckKind,
    CheckSpec,
    Ignored,
    Install,
    Line,
    Script,
    command_lines,
    map_command,
)
from fixbot.forge.github.workflows import Step
from fixbot.snapshot import read_inside

MAX_DEPTH = 3  # scripts calling scripts
TRUSTED_ACTIONS = ("actions/checkout", "actions/setup-python")
SHELLS = ("", "bash", "sh", "bash -e {0}", "bash --noprofile --norc -eo pipefail {0}")
_SHEBANG = re.compile(r"#!\s*(/usr)?/bin/(env\s+)?(ba|da)?sh\b")
TEXT_CAP = 200
_NAMES: dict[str, str] = {
    "pytest": "tests",
    "unittest": "tests",
    "ruff": "lint",
    "ruff-format": "format",
    "mypy": "types",
}


@dataclass(frozen=True)
class Found:
    """A command the CI runs that fixbot can run too: a check, or part of the install."""

    where: str  # "ci.yml, job test, step 'Run tests'" or "... > .ci/run line 27"
    argv: tuple[str, ...]
    kind: CheckKind | None  # None: an install


@dataclass(frozen=True)
class Left:
    """A command (or step) fixbot does not run, with why."""

    where: str
    text: str
    why: str


@dataclass
class Derived:
    checks: list[Found] = field(default_factory=list)
    installs: list[Found] = field(default_factory=list)
    unmapped: list[Left] = field(default_factory=list)  # what the CI runs that fixbot cannot
    ignored: list[Left] = field(default_factory=list)  # checks nothing: set -e, echo, checkout


def derive(steps: Iterable[Step], root: Path, *, label: str = "") -> Derived:
    """The checks and installs in `steps` (of the workflow `label` names), scripts followed."""
    derived = Derived()
    for step in steps:
        where = _where(label, step)
        if not step.run:
            _action(step, where, derived)
        elif step.shell.strip() not in SHELLS:
            why = f"runs in the {step.shell} shell; fixbot runs argv lists, never a shell"
            derived.unmapped.append(Left(where, one_line(step.run), why))
        elif step.working_directory.strip() not in ("", ".", "./"):
            why = f"runs in {step.working_directory}; fixbot runs checks at the repository root"
            derived.unmapped.append(Left(where, one_line(step.run), why))
        else:
            _lines(command_lines(step.run), where, root, derived, chain=())
    return derived


def _where(label: str, step: Step) -> str:
    return ", ".join(p for p in (label, f"job {step.job}", f"step {one_line(step.shown)!r}") if p)


def _action(step: Step, where: str, derived: Derived) -> None:
    action = step.uses.split("@", 1)[0]
    if action in TRUSTED_ACTIONS:
        derived.ignored.append(Left(where, step.uses, "sets up the checkout or Python"))
    else:
        why = f"the action {action}: fixbot runs commands, not actions"
        derived.unmapped.append(Left(where, one_line(step.uses), why))


def _lines(
    lines: Sequence[Line], where: str, root: Path, derived: Derived, chain: tuple[str, ...]
) -> None:
    for line in lines:
        here = f"{where} > {chain[-1]} line {line.number}" if chain else where
        if chain and _to_root(line.text, chain[-1]):
            derived.ignored.append(Left(here, line.text, "goes to the repository root"))
            continue
        mapped = map_command(line)
        if isinstance(mapped, Script):
            _script(mapped, line, here, root, derived, chain)
        elif isinstance(mapped, Check):
            derived.checks.append(Found(here, mapped.argv, mapped.kind))
        elif isinstance(mapped, Install):
            derived.installs.append(Found(here, mapped.argv, None))
        elif isinstance(mapped, Ignored):
            derived.ignored.append(Left(here, one_line(line.text), mapped.why))
        else:
            derived.unmapped.append(Left(here, one_line(line.text), mapped.why))


def _script(
    script: Script, line: Line, where: str, root: Path, derived: Derived, chain: tuple[str, ...]
) -> None:
    """A repository script: a shell script is followed (its lines mapped like `run:` lines);
    any other program (a #! line naming another interpreter) is a command check, as it is."""
    text = read_inside(root, script.path) if ".." not in PurePosixPath(script.path).parts else None
    if text is None:
        why = f"{script.path} is not a file in the repository"
        derived.unmapped.append(Left(where, one_line(line.text), why))
        return
    via_shell = PurePosixPath(script.argv[0]).name in ("bash", "sh", "dash", "zsh")
    # Without a #! line a shell runs the file itself; with one, its interpreter does.
    shell = via_shell or not text.startswith("#!") or _SHEBANG.match(text)
    if not shell:
        derived.checks.append(Found(where, script.argv, "command"))
        return
    if script.path in chain or len(chain) >= MAX_DEPTH:
        why = "calls scripts too deep, or in a circle"
        derived.unmapped.append(Left(where, one_line(line.text), why))
        return
    if len(script.argv) > (2 if via_shell else 1):
        why = "passes arguments to a script fixbot follows line by line"
        derived.unmapped.append(Left(where, one_line(line.text), why))
        return
    inner = Derived()
    _lines(command_lines(text), where, root, inner, (*chain, script.path))
    if inner.checks or inner.installs or not inner.unmapped:
        derived.checks += inner.checks
        derived.installs += inner.installs
        derived.unmapped += inner.unmapped
        derived.ignored += inner.ignored
        return
    # Nothing in it fixbot can run: the call is one entry, not a line per command.
    first = inner.unmapped[0]
    why = f"{script.path} runs nothing fixbot can (not mapped: {len(inner.unmapped)}; the "
    why += f"first, {first.text!r}: {first.why})"
    derived.unmapped.append(Left(where, one_line(line.text), one_line(why)))


def _to_root(text: str, script: str) -> bool:
    """`cd "$(dirname "$0")/.."` and its kin, in a script whose folder's parent is the root."""
    if _TOPLEVEL.fullmatch(text):
        return True
    match = _DIRNAME.fullmatch(text)
    if match is None:
        return False
    parts: list[str] = []
    for part in (PurePosixPath(script).parent / (match.group("rest") or ".").lstrip("/")).parts:
        if part == "..":
            if not parts:
                return False  # above the root
            parts.pop()
        elif part != ".":
            parts.append(part)
    return not parts


_TOPLEVEL = re.compile(r'cd\s+"?\$\(git rev-parse --show-toplevel\)"?')
_DIRNAME = re.compile(
    r'cd\s+"?(\$\(dirname\s+"?(\$0|\$\{BASH_SOURCE\[0\]\}|\$BASH_SOURCE)"?\)|\$\{0%/\*\})'
    r'"?(?P<rest>/[^\s"]*)?"?'
)


def one_line(text: str) -> str:
    """Text from a CI file or the API as one printable line, capped."""
    one = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return one if len(one) <= TEXT_CAP else one[: TEXT_CAP - 3] + "..."


# --- the checks and the install fixbot proposes -------------------------------------------


def proposed_checks(
    found: Sequence[Found], *, gates: Collection[tuple[str, ...]] = ()
) -> tuple[CheckSpec, ...]:
    """Each distinct command once, in the order given, named by its kind (lint, format, types,
    tests; a command by its program), a suffix where two would share a name. A command whose
    argv is in `gates` is a "no new findings" gate (only findings new since the baseline block
    it), not a check that must pass."""
    specs: list[CheckSpec] = []
    seen: set[tuple[str, ...]] = set()
    for item in found:
        if item.argv in seen or item.kind is None:
            continue
        seen.add(item.argv)
        name = _unique(_name(item.argv, item.kind), {spec.name for spec in specs})
        gate = item.argv in gates
        specs.append(CheckSpec(name=name, run=shlex.join(item.argv), kind=item.kind, gate=gate))
    return tuple(specs)


def _name(argv: tuple[str, ...], kind: CheckKind) -> str:
    if kind in _NAMES:
        return _NAMES[kind]
    words = [w for w in argv if not w.startswith("-")]
    program = PurePosixPath(words[0]).name if words else "check"
    if PYTHON.fullmatch(program) and "-m" in argv[:-1]:
        program = argv[argv.index("-m") + 1]  # python -m build -> build
    elif PYTHON.fullmatch(program) and len(words) > 1:
        program = PurePosixPath(words[1]).stem  # python scripts/check.py -> check
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", program).strip("-.") or "check"
    return slug[:60]


def _unique(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}-{number}", number + 1
    return candidate


def proposed_setup(installs: Sequence[Found]) -> str | None:
    """The installs as one setup_command: their arguments gathered in one `python -m pip
    install`, each requirement and option once (uv's --system dropped: the prepared
    environment is the target)."""
    units: list[tuple[str, ...]] = []
    for item in installs:
        words = item.argv[3:] if item.argv[:3] == ("uv", "pip", "install") else item.argv[4:]
        index = 0
        while index < len(words):
            takes = words[index] in _VALUE_OPTIONS and index + 1 < len(words)
            unit = words[index : index + 2] if takes else words[index : index + 1]
            index += len(unit)
            if unit not in units and unit != ("--system",):
                units.append(unit)
    args = [word for unit in units for word in unit]
    return shlex.join(["python", "-m", "pip", "install", *args]) if args else None


_VALUE_OPTIONS = frozenset(
    {"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url"}
    | {"--extra-index-url", "-f", "--find-links", "--python", "-p", "--target", "-t"}
)
