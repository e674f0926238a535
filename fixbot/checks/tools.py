"""How fixbot runs ruff and mypy: its own tools, the root configuration only, never a fix.

A check of kind ruff, ruff-format or mypy names the tool and its arguments (`ruff check src`,
`uv run mypy --strict .`); fixbot runs that tool itself, so that the gate always sees and runs
no candidate code:

- **fixbot's own tool.** `PYTHON -I -m ruff|mypy`, where PYTHON is fixbot's own interpreter
  (mounted read-only in the sandbox; a user-named Docker image without the host toolchain uses
  its own `python`). `-I` (isolated mode) keeps the working folder off `sys.path` and ignores
  PYTHON* variables, so a `psutil.py` or `ruff/` a candidate adds to the workspace is never
  imported, and the prepared environment (which may lack ruff or mypy, or carry its own) plays
  no part. mypy still reads the project's installed dependencies for their types:
  `--python-executable` names the prepared environment's interpreter.
- **The root configuration only.** ruff gets `--config` the root `.ruff.toml`, `ruff.toml` or
  `pyproject.toml` with `[tool.ruff]` (ruff's own order; with `--config` it reads no other
  file, so a nested `pkg/pyproject.toml` with `ignore = ["ALL"]` is never read), else
  `--isolated` (its defaults). mypy gets `--config-file` the root `mypy.ini`, `.mypy.ini`,
  `pyproject.toml` with `[tool.mypy]` or `setup.cfg` with `[mypy]` (mypy's order), else
  `--config-file=` (none). These root files are protected, and so is every file of the
  repository they name (ruff's `extend`, mypy's `plugins`: `commands.gate_files`). A `--config`/
  `--config-file` the check names itself is kept: the maintainer chose it (protect it too).
- **No file hidden from ruff.** ruff skips what ignore files name (`.gitignore`, `.ignore`,
  git's excludes), even with `--isolated` or `--config`: `--no-respect-gitignore` always, so
  an ignore file cannot hide a changed file (its `exclude` settings still apply; `.ignore` is
  protected too). mypy reads a stub (`.pyi`) instead of the module beside it; the screen
  refuses a new one (`silences-gate`).
- **Never a fix.** ruff runs with `--no-fix` and `--no-cache` whatever the configuration says
  (`fix = true`); mypy with no cache. The check's own options that would fix, write reports,
  change the output's shape or hide the exit status are dropped.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from fixbot.commands import CheckSpec, gate_config, tool_arguments
from fixbot.sandbox import OUTPUTS, PREPARED

Reader = Callable[[str], "str | None"]
# ruff skips what `.gitignore`, `.ignore` and git's excludes name, even with --isolated or a
# --config: an ignore file would hide a changed file from the gate. fixbot names the files.
RUFF_OWN = ("--no-cache", "--no-respect-gitignore")
# Options of the check's own command line that fixbot drops: (flags, options taking a value).
_RUFF_CHECK_DROPPED = (
    {
        "--fix", "--no-fix", "--unsafe-fixes", "--no-unsafe-fixes", "--fix-only",
        "--no-fix-only", "--diff", "--watch", "-w", "--exit-zero", "-e",
        "--exit-non-zero-on-fix", "--statistics", "--show-fixes", "--no-show-fixes",
        "--show-files", "--show-settings", "--add-noqa", "-q", "--quiet", "-s", "--silent",
        "-v", "--verbose", "--no-cache", "-n", "--respect-gitignore", "--no-respect-gitignore",
    },
    {"--output-format", "-o", "--output-file", "--cache-dir"},
)  # fmt: skip
_RUFF_FORMAT_DROPPED = (
    {
        "--check", "--diff", "-q", "--quiet", "-s", "--silent", "-v", "--verbose",
        "--no-cache", "-n", "--exit-non-zero-on-format", "--respect-gitignore",
        "--no-respect-gitignore",
    },
    {"--cache-dir", "--output-format"},
)  # fmt: skip
_MYPY_DROPPED = (
    {
        "--pretty", "--color-output", "--error-summary", "--show-error-context",
        "--incremental", "--sqlite-cache", "--install-types", "--non-interactive",
        "--hide-error-codes", "--show-absolute-path",
    },
    {"--cache-dir", "-O", "--output", "--junit-xml", "--junit-format"},
)  # fmt: skip
MYPY_OPTIONS = (
    "--no-incremental",
    "--cache-dir=/dev/null",
    "--show-error-codes",
    "--no-color-output",
    "--no-error-summary",
    "--hide-error-context",
    "--no-pretty",
)


def interpreter(host_toolchain: bool) -> str:
    """The Python the tools run with: fixbot's own where the sandbox mounts it."""
    return sys.executable if host_toolchain else "python"


def ruff_config(read: Reader) -> str | None:
    """The root file ruff would read first, or None (then ruff runs --isolated)."""
    return gate_config("ruff", read)


def mypy_config(read: Reader) -> str | None:
    """The root file mypy would read first, or None (then it reads none)."""
    return gate_config("mypy", read)


def report_file(name: str) -> str:
    """Where ruff writes its JSON report in the sandbox: fixbot's output folder, never the
    workspace; nothing but ruff itself runs in that sandbox."""
    return f"{OUTPUTS}/{name}.ruff.json"


def tool_argv(
    spec: CheckSpec,
    *,
    python: str,
    read: Reader,
    prepared: bool = False,
    fix: bool = False,
) -> list[str]:
    """The command fixbot runs for a ruff, ruff-format or mypy check (`fix`: ruff's own safe
    fixes or formatter instead, for the zero-token autofix; never for a check)."""
    args = tool_arguments(spec.argv)  # a legacy test command that is ruff has kind `command`
    if spec.kind == "mypy":
        return [python, "-I", "-m", "mypy", *_mypy_args(args, read, prepared)]
    if args[:1] == ["format"]:
        kept = _without(args[1:], _RUFF_FORMAT_DROPPED)
        mode = [] if fix else ["--check"]
        config = _ruff_config(kept, read)
        return [python, "-I", "-m", "ruff", "format", *mode, *RUFF_OWN, *config, *kept]
    kept = _without(args[1:] if args[:1] == ["check"] else args, _RUFF_CHECK_DROPPED)
    mode = ["--fix", "--exit-zero"] if fix else ["--no-fix", "--output-format=json"]
    output = [] if fix else [f"--output-file={report_file(spec.name)}"]
    return [
        python, "-I", "-m", "ruff", "check", *mode, *output, *RUFF_OWN,
        *_ruff_config(kept, read), *kept,
    ]  # fmt: skip


def _ruff_config(args: Sequence[str], read: Reader) -> list[str]:
    if "--isolated" in args or any(_names_a_file(args, i) for i in range(len(args))):
        return []  # the check chose its configuration itself
    found = ruff_config(read)
    return [f"--config={found}"] if found else ["--isolated"]


def _names_a_file(args: Sequence[str], index: int) -> bool:
    """`--config FILE` or `--config=FILE` (a TOML `KEY=VALUE` override is not a file)."""
    word = args[index]
    if word.startswith("--config="):
        return "=" not in word.removeprefix("--config=")
    return word == "--config" and index + 1 < len(args) and "=" not in args[index + 1]


def _mypy_args(args: Sequence[str], read: Reader, prepared: bool) -> list[str]:
    kept = _without(args, _MYPY_DROPPED, dropped_suffix="-report")
    own = list(MYPY_OPTIONS)
    if not any(w == "--config-file" or w.startswith("--config-file=") for w in kept):
        found = mypy_config(read)
        own.append(f"--config-file={found or ''}")
    named = ("--python-executable", "--no-site-packages")
    if prepared and not any(w.split("=", 1)[0] in named for w in kept):
        own.append(f"--python-executable={PREPARED}/bin/python")
    return [*own, *kept]


def _without(
    args: Sequence[str], dropped: tuple[set[str], set[str]], dropped_suffix: str = ""
) -> list[str]:
    flags, valued = dropped
    kept: list[str] = []
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        option = word.split("=", 1)[0]
        with_value = option in valued or bool(dropped_suffix and option.endswith(dropped_suffix))
        if word in flags:
            continue
        if with_value:
            skip = "=" not in word  # `--output-format github`: the value goes too
            continue
        kept.append(word)
    return kept
