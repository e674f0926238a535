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
# Modules Python imports at start-up whatever runs: a package of the name as much as a file.
STARTUP_MODULES = ("sitecustomize", "usercustomize")
# Folders ruff and mypy skip by default wherever they are (ruff's default `exclude`, mypy's
# discovery): a changed file there is read by neither gate.
GATE_SKIPPED = frozenset(
    {
        *("node_modules", "site-packages", "dist-packages", "__pypackages__", "venv", ".venv"),
        *(".tox", ".nox", ".eggs", ".git", ".hg", ".svn", ".direnv", "buck-out", ".pytype"),
        *(".mypy_cache", ".ruff_cache", ".pytest_cache", "dist", "_build"),
    }
)


def _gate_skipped(part: str) -> bool:
    """A folder ruff or mypy skips by default: a listed name, or any dot folder (mypy's)."""
    return part in GATE_SKIPPED or (part.startswith(".") and part not in (".", ".."))


GATE_CONFIGS = ("mypy.ini", ".mypy.ini", "ruff.toml", ".ruff.toml", ".ignore")
# Comments that silence a finding of the code: mypy's and ruff's silencers, mypy's inline
# configuration, ruff's range suppressions (its disable and enable comments), isort's
# whole-file and range switches (they hide an import-order finding). Layout switches
# (`# fmt: skip`, `# isort: skip` on one line) only choose a layout; a fix may use them as the
# project does.
SILENCERS = re.compile(
    r"#.*\b(type:\s*ignore|noqa|pyright:\s*ignore|mypy:\s*[\w-]+|ruff:\s*noqa"
    r"|ruff:\s*(?:disable|enable)|isort:\s*(?:skip_file|off|on)\b)",
    re.IGNORECASE,
)
# PEP 263: a coding declaration in a file's first two lines. Python decodes the file by it;
# the screen, ruff and mypy read UTF-8, so any other codec (UTF-7 turns a comment of letters
# into code) hides what runs from every one of them.
CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
READ_AS_UTF8 = {"utf-8", "utf8", "utf_8", "utf-8-sig", "ascii", "us-ascii"}
ZIP_END = "PK\x05\x06"  # a zip's end-of-central-directory record: zipimport reads from it
# Code Python runs that is not source: bytecode (an unchecked-hash .pyc is loaded whatever the
# .py says), extension modules (imported before a .py of the same name).
COMPILED = (".pyc", ".pyo", ".so", ".pyd", ".dll", ".dylib")


# Modules that would stand in for the test runner, its plugin system or fixbot's own plugin.
RUNNER_MODULE = re.compile(r"(?:_?pytest|pluggy|fixbot_harness\w*)(?:\.pyi?)?")


def _codings(text: str) -> dict[int, str]:
    """line number -> the encoding a PEP 263 declaration makes Python decode the file by, read
    as Python reads it (`tokenize.detect_encoding` after the tokenizer's newlines: a lone `\r`
    ends a line, a form feed or U+2028 does not push a declaration out of reach)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # the tokenizer's newlines
    raw = io.BytesIO(text.encode("utf-8", "surrogatepass"))
    try:
        encoding, _ = tokenize.detect_encoding(raw.readline)
    except (SyntaxError, LookupError):  # Python cannot import it either
        return {}
    first = text.split("\n", 2)[:2]
    number = next((n for n, line in enumerate(first, 1) if CODING.match(line)), 0)
    return {number or 1: encoding} if number or encoding not in ("utf-8", "utf-8-sig") else {}


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
    startup = next((p for p in change.path.split("/")[:-1] if p in STARTUP_MODULES), None)
    if startup is not None and change.new is not None:
        yield Hit(
            "adds-pytest-hook",
            0,
            f"writes into a package named {startup}, which Python imports at start-up before "
            "anything runs: it changes how every process starts, not the code under test",
        )
    skipped = next((p for p in change.path.split("/")[:-1] if _gate_skipped(p)), None)
    if skipped is not None and change.new is not None and name.endswith((".py", ".pyi")):
        yield Hit(
            "hides-code",
            0,
            f"writes Python under {skipped}/, a folder ruff and mypy skip: the gates would "
            "never read it; put the code where the project's own code is",
        )
    if change.new is not None and name.endswith((".py", ".pyi")):
        before = _codings(change.old or "")
        for number, found in _codings(change.new).items():
            if found not in before.values() and found.lower().replace("_", "-") not in READ_AS_UTF8:
                yield Hit(
                    "hides-code",
                    number,
                    f"declares the source encoding {found!r}: Python would decode the "
                    "file by it while the screen, ruff and mypy read it as UTF-8, so what runs "
                    "is not what they read; write the file in UTF-8",
                )
    if change.new is not None and ZIP_END in change.new:
        yield Hit(
            "hides-code",
            0,
            "is a zip archive (it holds a zip end record): Python imports code from one on "
            "its path (zipimport) that no rule and no gate reads; write the code as source",
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
