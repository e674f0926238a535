"""The checks a CI runs, as data: `CheckSpec`, the kinds fixbot reads, and the kind a command is.

Pure and in the foundation: config.py validates `checks:` with it when it loads a file, and the
forge maps a workflow's `run:` lines with it (ci.py), so it may import nothing that runs
anything (the sandbox above all: the publish path must not load it, and config sits below it).

    kind_of(argv)       the kind a command is: pytest, unittest, ruff, ruff-format, mypy,
                        else command; raises ValueError for a command that rewrites files
    resolve_checks      the parsed `checks:` items -> CheckSpecs (kinds inferred, names unique)
    legacy_checks       `test_command` + `gates` as CheckSpecs that keep their meaning
    tool_arguments      the words a ruff or mypy command passes to the tool itself
    is_ruff             a check that runs ruff (its kind, or a legacy test command that is ruff)
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal, get_args

from fixbot.commands.words import split_words

CheckKind = Literal["pytest", "unittest", "ruff", "ruff-format", "mypy", "command"]
CHECK_KINDS: tuple[str, ...] = get_args(CheckKind)
DEFAULT_TEST_TIMEOUT = 60
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
LEGACY_LINT = "python -m ruff check ."
LEGACY_TYPES = "python -m mypy ."
PYTHON = re.compile(r"python(\d+(\.\d+)?)?")  # an interpreter's name: python, python3.11
_PYTHON_OPTIONS_WITH_VALUE = {"-X", "-W"}
_MODULE_KINDS: dict[str, CheckKind] = {"pytest": "pytest", "unittest": "unittest", "mypy": "mypy"}


@dataclass(frozen=True)
class CheckSpec:
    """One check, as the CI runs it. `kind` says how its result is read: per test (pytest,
    unittest), per finding (ruff, ruff-format, mypy), or by exit code and output (command)."""

    name: str = field(metadata={"pattern": NAME.pattern})  # unique; a row in the report
    run: str = field(metadata={"shell_words": True})  # split like a shell command, no shell
    kind: CheckKind = field(metadata={"inferred": True})  # from `run` when the file omits it
    test_timeout_seconds: int = field(
        default=DEFAULT_TEST_TIMEOUT, metadata={"minimum": 1, "maximum": 86400}
    )  # pytest only: the per-test timeout
    # The legacy `gates` only: a "no new findings" gate, not a check that must pass; its
    # baseline findings never make the build red, only findings new since then block.
    gate: bool = field(default=False, metadata={"internal": True})

    @property
    def argv(self) -> tuple[str, ...]:
        """The command's words (words.split_words); () for one with none."""
        try:
            return tuple(split_words(self.run))
        except ValueError:
            return ()


class InvalidCheck(ValueError):
    """A `checks:` item that cannot be a check: `index` and `key` say where."""

    def __init__(self, index: int, key: str, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.key = key


def kind_of(argv: Sequence[str]) -> CheckKind:
    """The kind a command is, read from its words (never run). ValueError for a command that
    would rewrite the files it checks (`ruff format` without --check or --diff, `ruff check
    --fix`): a check reads the tree, it never changes it."""
    words = unwrapped(argv)
    if not words:
        return "command"
    program = PurePosixPath(words[0]).name
    rest = words[1:]
    if program in ("pytest", "py.test"):
        return "pytest"
    if program == "ruff":
        return _ruff(rest)
    if program == "mypy" or (program == "dmypy" and rest[:1] == ["run"]):
        return "mypy"
    module = _module_option(rest) if PYTHON.fullmatch(program) else None
    if module is None and program == "coverage" and rest[:1] == ["run"]:
        module = _module_option(rest[1:])  # `coverage run -m pytest`
    if module is None:
        return "command"
    name, args = module
    return _ruff(args) if name == "ruff" else _MODULE_KINDS.get(name, "command")


def tool_arguments(argv: Sequence[str]) -> list[str]:
    """The words after the tool in a ruff or mypy command line (`python -m ruff check src` ->
    `check src`, `uv run mypy --strict .` -> `--strict .`, `dmypy run -- src` -> `src`): fixbot
    runs the tool itself, from its own environment, with these. [] when it is neither."""
    words = unwrapped(argv)
    if not words:
        return []
    program = PurePosixPath(words[0]).name
    rest = words[1:]
    if program in ("ruff", "mypy"):
        return rest
    if program == "dmypy" and rest[:1] == ["run"]:
        after = rest[1:]
        return after[after.index("--") + 1 :] if "--" in after else after
    module = _module_option(rest) if PYTHON.fullmatch(program) else None
    if module is not None and module[0] in ("ruff", "mypy"):
        return module[1]
    return []


def is_ruff(spec: CheckSpec) -> bool:
    """A check that runs ruff: its kind, or a legacy test command (kind `command`) that is
    `ruff check` or `ruff format --check`. ruff's own fixes apply to it."""
    if spec.kind in ("ruff", "ruff-format"):
        return True
    try:
        return kind_of(spec.argv) in ("ruff", "ruff-format")
    except ValueError:
        return False


def unwrapped(argv: Sequence[str]) -> list[str]:
    """The command a runner wrapper runs: `uv run X`, `poetry run X`, `pdm run X`, `exec X`
    (in fixbot's prepared environment the wrapper has nothing left to do)."""
    words = list(argv)
    while True:
        program = PurePosixPath(words[0]).name if words else ""
        if program in ("uv", "poetry", "pdm") and words[1:2] == ["run"]:
            words = [w for w in words[2:] if w != "--"] if len(words) > 2 else []
            while words and words[0].startswith("-"):  # uv run --frozen pytest
                words = words[1:]
        elif program == "exec":
            words = words[1:]
        else:
            return words


def _module_option(words: list[str]) -> tuple[str, list[str]] | None:
    """`[-X opt ...] -m MODULE ARGS` (a python's arguments) -> (MODULE, ARGS); None for a
    script or `-c CODE`."""
    index = 0
    while index < len(words):
        word = words[index]
        if word == "-m" and index + 1 < len(words):
            return words[index + 1], words[index + 2 :]
        if word.startswith("-m") and len(word) > 2:
            return word[2:], words[index + 1 :]
        if word == "-c" or not word.startswith("-"):
            return None  # -c CODE, or a script path: not a module
        index += 2 if word in _PYTHON_OPTIONS_WITH_VALUE else 1
    return None


def _ruff(args: list[str]) -> CheckKind:
    if args[:1] == ["format"]:
        if "--check" in args or "--diff" in args:
            return "ruff-format"
        raise ValueError(
            "`ruff format` without --check rewrites the files it would check: "
            "use `ruff format --check` (or --diff)"
        )
    if "--fix" in args and "--diff" not in args:
        raise ValueError(
            "`ruff check --fix` rewrites the files it would check: use `ruff check` without --fix"
        )
    return "ruff"


def resolve_checks(items: Sequence[Mapping[str, Any]]) -> tuple[CheckSpec, ...]:
    """The parsed `checks:` items (types already checked by the config loader) as CheckSpecs:
    `name` and `run` present, the kind inferred from `run` when omitted (or refused),
    `test_timeout_seconds` only on pytest checks, names unique. Raises InvalidCheck."""
    specs: list[CheckSpec] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        for key in ("name", "run"):
            if key not in item:
                raise InvalidCheck(index, key, "missing: every check needs a name and a run")
        name = str(item["name"])
        if not NAME.fullmatch(name):
            message = "must be 1-64 letters, digits, '.', '_' or '-', the first a letter or digit"
            raise InvalidCheck(index, "name", f"{message}; got {name!r}")
        if name in seen:
            message = f"{name!r} is already the name of checks[{seen[name]}]"
            raise InvalidCheck(index, "name", message)
        seen[name] = index
        specs.append(_spec(index, item))
    return tuple(specs)


def _spec(index: int, item: Mapping[str, Any]) -> CheckSpec:
    try:
        inferred = kind_of(shlex.split(str(item["run"])))
    except ValueError as exc:  # whatever kind it is called, a check may not rewrite the tree
        raise InvalidCheck(index, "run", str(exc)) from None
    kind: CheckKind = item.get("kind", inferred)
    if kind not in ("command", inferred):
        # fixbot runs pytest, unittest, ruff and mypy itself, from the command's own words.
        raise InvalidCheck(
            index,
            "kind",
            f"`{item['run']}` is not a {kind} command (it reads as {inferred}): fixbot runs "
            f"{kind} itself from the command's own arguments; give it kind: command, or run "
            f"{kind} directly",
        )
    if "test_timeout_seconds" in item and kind != "pytest":
        where = "is" if "kind" in item else "is inferred as"
        raise InvalidCheck(
            index, "test_timeout_seconds", f"applies to pytest checks only; this one {where} {kind}"
        )
    return CheckSpec(
        name=str(item["name"]),
        run=str(item["run"]),
        kind=kind,
        test_timeout_seconds=int(item.get("test_timeout_seconds", DEFAULT_TEST_TIMEOUT)),
    )


def legacy_checks(
    test_command: str, *, lint: bool, types: bool, test_timeout: int = DEFAULT_TEST_TIMEOUT
) -> tuple[CheckSpec, ...]:
    """A config without `checks:`, as checks that mean what it means: the enabled gates first
    (ruff, mypy over the whole tree; "no new findings" gates, never checks that must pass),
    then the test command (per test when it is pytest, else by its exit code, as today), its
    tests each under the per-test timeout."""
    specs = []
    if lint:
        specs.append(CheckSpec("lint", LEGACY_LINT, "ruff", gate=True))
    if types:
        specs.append(CheckSpec("types", LEGACY_TYPES, "mypy", gate=True))
    try:
        pytest = kind_of(shlex.split(test_command)) == "pytest"
    except ValueError:  # `ruff format` as a test command: today it runs as a command
        pytest = False
    kind: CheckKind = "pytest" if pytest else "command"
    specs.append(CheckSpec("tests", test_command, kind, test_timeout_seconds=test_timeout))
    return tuple(specs)
