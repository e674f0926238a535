"""The rules that need no parse: a file's name (a startup file, a runner's module, a gate's
config), the comments it adds (silencers), and line patterns for code that does not parse."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator

from fixbot.edits import FileChange
from fixbot.screen.lines import split_lines
from fixbot.screen.source import Hit

STARTUP_FILES = ("conftest.py", "sitecustomize.py", "usercustomize.py")
GATE_CONFIGS = ("mypy.ini", ".mypy.ini", "ruff.toml", ".ruff.toml", ".ignore")
# Comments that silence a finding of the code: mypy's and ruff's silencers, mypy's inline
# configuration. Layout switches (`# fmt: skip`, `# isort: skip`) only choose a layout; a fix
# may use them as the project does.
SILENCERS = re.compile(
    r"#.*\b(type:\s*ignore|noqa|pyright:\s*ignore|mypy:\s*[\w-]+|ruff:\s*noqa)",
    re.IGNORECASE,
)
# Code Python runs that is not source: bytecode (an unchecked-hash .pyc is loaded whatever the
# .py says), extension modules (imported before a .py of the same name).
COMPILED = (".pyc", ".pyo", ".so", ".pyd", ".dll", ".dylib")


# Modules that would stand in for the test runner, its plugin system or fixbot's own plugin.
RUNNER_MODULE = re.compile(r"(?:_?pytest|pluggy|fixbot_harness\w*)(?:\.pyi?)?")


def name_hits(change: FileChange) -> Iterator[Hit]:
    name = change.path.rsplit("/", 1)[-1]
    runner = next((p for p in change.path.split("/") if RUNNER_MODULE.fullmatch(p)), None)
    if runner is not None and change.new is not None:
        yield Hit(
            "adds-pytest-hook",
            0,
            f"writes a module named {runner}, which would be imported instead of pytest, "
            "pluggy or fixbot's test plugin: it changes how tests run, not the code under test",
        )
    if name in STARTUP_FILES or name.endswith(".pth"):
        verb = "adds" if change.old is None else "changes"
        yield Hit(
            "adds-pytest-hook",
            0,
            f"{verb} {name}, which Python or pytest runs before the "
            "tests; it changes how tests run, not the code under test",
        )
    if name in GATE_CONFIGS:
        yield Hit(
            "silences-gate",
            0,
            f"writes {name}, which configures the ruff or mypy gate (or tells it which files "
            "to skip); fix the findings instead of reconfiguring the checker",
        )
    if change.new is not None and (
        name.lower().endswith(COMPILED) or "__pycache__" in change.path.split("/")
    ):
        yield Hit(
            "runs-dynamic-code",
            0,
            f"writes {change.path}, compiled code Python would run instead of (or beside) the "
            "source, which no check can read; change the source",
        )


def comment_hits(text: str, added: frozenset[int]) -> Iterator[Hit]:
    try:
        comments = [
            (t.start[0], t.string)
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):
        comments = [(n, line) for n, line in enumerate(split_lines(text), 1) if "#" in line]
    for number, comment in comments:
        match = SILENCERS.search(comment)
        if match and number in added:
            yield Hit(
                "silences-gate",
                number,
                f"adds `# {match.group(1)}`: a silenced ruff or "
                "mypy finding is still a defect; fix the code the checker points at",
            )


FALLBACK = {  # rule: (line pattern, what it means)
    "adds-skip": (
        r"\bpytest\.(skip|xfail|importorskip|mark\.(skip|skipif|xfail))\b|\bSkipTest\b",
        "skips or xfails tests",
    ),
    "exits-early": (
        r"\b(sys\.exit|os\._exit|os\.abort|os\.kill)\b|(^|[^.\w])(exit|quit)\s*\(",
        "ends the process",
    ),
    "adds-pytest-hook": (
        r"^\s*(async\s+)?def\s+pytest_\w+|^\s*pytest_plugins\s*=",
        "hooks into pytest",
    ),
    "patches-builtins": (
        r"\b(builtins|__builtins__)\b.*=|^\s*(_?pytest|unittest)(\.\w+)+\s*=[^=]",
        "patches builtins or the test framework",
    ),
    "detects-test-runner": (
        r"PYTEST_[A-Z_]+|\b_pytest\b|sys\.(modules|argv).*pytest|inspect\.stack",
        "checks whether it runs under the tests",
    ),
    "reads-tests": (
        r"(open|read_text|import).*(tests/|test_\w*\.py|conftest)|import\s+tests\b",
        "reads the tests",
    ),
}


def fallback_hits(lines: list[str], added: frozenset[int]) -> Iterator[Hit]:
    """Line patterns for code that does not parse (it fails anyway, but say why)."""
    for number in sorted(added):
        text = lines[number - 1].strip()
        for rule, (pattern, meaning) in FALLBACK.items():
            if re.search(pattern, text):
                shown = text if len(text) <= 80 else text[:77] + "..."
                yield Hit(rule, number, f"`{shown}` {meaning}, which does not fix the code")
