"""ruff, ruff format and mypy checks: how fixbot runs them (its own tools, the root config only,
never a fix) and how it reads them (a tool that cannot run is an error, never "no findings")."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from fixbot import proc
from fixbot.checks.findings import (
    parse_mypy,
    parse_ruff,
    parse_ruff_format,
    read_mypy,
    read_ruff,
    read_ruff_format,
)
from fixbot.checks.suite import run_suite
from fixbot.checks.tools import mypy_config, ruff_config, tool_argv
from fixbot.commands.spec import CheckSpec
from fixbot.proc import Completed
from fixbot.sandbox import PREPARED, WORKSPACE, BwrapSandbox, Limits

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
FAST = Limits(timeout_seconds=120, memory_mb=2048)
LINT = CheckSpec("lint", "ruff check .", "ruff")
FORMAT = CheckSpec("format", "ruff format --check .", "ruff-format")
TYPES = CheckSpec("types", "mypy .", "mypy")


def files(mapping: dict[str, str]):  # type: ignore[no-untyped-def]
    return lambda rel: mapping.get(rel)


def done(returncode: int, output: str = "") -> Completed:
    return Completed(("x",), returncode, output, 0.1, False, len(output))


# ---- how fixbot runs them


def test_ruff_runs_isolated_from_the_workspace_with_the_root_config_and_never_fixes() -> None:
    spec = CheckSpec("lint", "uv run ruff check src --fix --diff -o out.txt --select E,F", "ruff")
    root = files({"pyproject.toml": "[tool.ruff]\nfix = true\n", "ruff.toml": "line-length = 80\n"})
    argv = tool_argv(spec, python="/py", read=root)
    assert argv[:5] == ["/py", "-I", "-m", "ruff", "check"]
    assert "--no-fix" in argv and "--no-cache" in argv and "--fix" not in argv
    assert "--diff" not in argv and "out.txt" not in argv and "-o" not in argv
    assert "--config=ruff.toml" in argv  # ruff.toml comes before pyproject.toml, as in ruff
    assert argv[-3:] == ["src", "--select", "E,F"]  # what the check asks for is kept


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        ({".ruff.toml": "", "ruff.toml": ""}, ".ruff.toml"),
        ({"pyproject.toml": "[tool.ruff]\n"}, "pyproject.toml"),
        ({"pyproject.toml": "[tool.black]\n"}, None),  # no [tool.ruff]: not ruff's
        ({}, None),
    ],
)
def test_the_root_ruff_config_is_found_in_ruffs_order(
    root: dict[str, str], expected: str | None
) -> None:
    assert ruff_config(files(root)) == expected
    argv = tool_argv(LINT, python="p", read=files(root))
    assert (f"--config={expected}" if expected else "--isolated") in argv


def test_a_config_the_check_names_itself_is_kept() -> None:
    spec = CheckSpec("lint", "ruff check --config ci/ruff.toml .", "ruff")
    argv = tool_argv(spec, python="p", read=files({"ruff.toml": ""}))
    assert "--isolated" not in argv and "--config=ruff.toml" not in argv
    assert argv[-3:] == ["--config", "ci/ruff.toml", "."]
    inline = CheckSpec("lint", "ruff check --config 'lint.select=[\"E\"]' .", "ruff")
    assert "--config=ruff.toml" in tool_argv(inline, python="p", read=files({"ruff.toml": ""}))


@pytest.mark.parametrize("spec", [LINT, FORMAT])
def test_ruff_never_skips_what_an_ignore_file_names(spec: CheckSpec) -> None:
    """ruff honours `.gitignore`, `.ignore` and git's excludes even with --isolated or a
    --config; fixbot turns that off, whatever the check asks."""
    asked = CheckSpec(spec.name, f"{spec.run} --respect-gitignore", spec.kind)
    for argv in (tool_argv(spec, python="p", read=files({})), tool_argv(asked, python="p",
                 read=files({"ruff.toml": ""}))):  # fmt: skip
        assert "--no-respect-gitignore" in argv and "--respect-gitignore" not in argv


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        ({"mypy.ini": "[mypy]\n", "pyproject.toml": "[tool.mypy]\n"}, "mypy.ini"),
        ({"pyproject.toml": "[tool.mypy]\nstrict = true\n"}, "pyproject.toml"),
        ({"setup.cfg": "[metadata]\n\n[mypy]\nstrict = True\n"}, "setup.cfg"),
        ({"setup.cfg": "[metadata]\n", "pyproject.toml": "[tool.ruff]\n"}, None),
    ],
)
def test_mypy_reads_only_the_root_config(root: dict[str, str], expected: str | None) -> None:
    assert mypy_config(files(root)) == expected
    argv = tool_argv(TYPES, python="p", read=files(root))
    assert argv[:4] == ["p", "-I", "-m", "mypy"]
    assert f"--config-file={expected or ''}" in argv  # an empty one: no config file at all


def test_mypy_reads_the_prepared_environments_packages_and_drops_what_writes() -> None:
    spec = CheckSpec(
        "types", "mypy --pretty --junit-xml r.xml --html-report h --strict src", "mypy"
    )
    argv = tool_argv(spec, python="p", read=files({}), prepared=True)
    assert f"--python-executable={PREPARED}/bin/python" in argv
    assert "--pretty" not in argv and "r.xml" not in argv and "h" not in argv
    assert argv[-2:] == ["--strict", "src"]


def test_the_formatter_check_only_checks() -> None:
    argv = tool_argv(CheckSpec("fmt", "ruff format --diff -q src", "ruff-format"), python="p",
                     read=files({}))  # fmt: skip
    assert argv[:6] == ["p", "-I", "-m", "ruff", "format", "--check"]
    assert "--diff" not in argv and "-q" not in argv and argv[-1] == "src"
    fix = tool_argv(FORMAT, python="p", read=files({}), fix=True)
    assert "--check" not in fix


# ---- how fixbot reads them


def test_a_missing_tool_is_an_error_of_the_check_never_no_findings(tmp_path: Path) -> None:
    missing = done(1, "/usr/bin/python: No module named ruff\n")
    part = read_ruff(LINT, missing, tmp_path / "none.json", "ruff check .")
    assert part.run["status"] == "error"
    assert "ruff is not installed in fixbot's environment" in part.run["summary"]
    assert part.tests == {} and part.findings == []
    typed = read_mypy(TYPES, done(1, "/venv/bin/python: No module named mypy\n"), "mypy .")
    assert typed.run["status"] == "error" and "mypy is not installed" in typed.run["summary"]
    absent = read_ruff(LINT, done(127, "env: '/py': No such file or directory"), tmp_path, "r")
    assert absent.run["status"] == "error" and "interpreter was not found" in absent.run["summary"]


def test_output_that_disagrees_with_the_exit_status_is_an_error(tmp_path: Path) -> None:
    report = tmp_path / "lint.json"
    report.write_text("[]")
    assert read_ruff(LINT, done(1), report, "r").run["status"] == "error"  # red, but no finding
    assert read_ruff(LINT, done(2, "error: ruff failed"), report, "r").run["status"] == "error"
    report.write_text("not json at all")
    assert read_ruff(LINT, done(0), report, "r").run["status"] == "error"
    report.write_text("[]")
    assert read_ruff(LINT, done(0), report, "r").run["status"] == "passed"
    crashed = read_mypy(TYPES, done(2, "mypy: error: Cannot find config file 'nope.ini'\n"), "m")
    assert crashed.run["status"] == "error"
    dup = 'b/conftest.py: error: Duplicate module named "conftest" (also at "a/conftest.py")\n'
    assert read_mypy(TYPES, done(2, dup), "m").run["status"] == "error"  # checked nothing
    assert read_mypy(TYPES, done(1, "Found 1 error"), "m").run["status"] == "error"
    assert read_ruff_format(FORMAT, done(2, "error: boom"), "f").run["status"] == "error"


def test_a_red_check_is_one_entry_and_a_gate_is_none(tmp_path: Path) -> None:
    report = tmp_path / "lint.json"
    report.write_text(
        '[{"filename": "/workspace/a.py", "location": {"row": 1}, "code": "F401",'
        ' "message": "`os` imported but unused"}]'
    )
    part = read_ruff(LINT, done(1), report, "r")
    assert part.run["status"] == "failed"
    [(test, case)] = part.tests.items()
    assert test == "check: lint" and case["outcome"] == "failed"
    assert "a.py:1 F401" in case["message"] and "a.py:1: F401" in case["detail"]
    assert part.findings[0]["check"] == "lint"
    gate = CheckSpec("lint", "ruff check .", "ruff", gate=True)
    as_gate = read_ruff(gate, done(1), report, "r")
    assert as_gate.run["status"] == "passed" and as_gate.tests == {}  # only new findings block
    assert len(as_gate.findings) == 1


def test_mypy_stopping_at_a_syntax_error_is_a_finding_of_the_code() -> None:
    output = "calc.py:3: error: Invalid syntax  [syntax]\n"
    part = read_mypy(TYPES, done(2, output), "m")
    assert part.run["status"] == "failed"
    assert [(f["path"], f["code"]) for f in part.findings] == [("calc.py", "syntax")]


def test_parse_ruff_format_reads_both_spellings() -> None:
    old = "Would reformat: pkg/a.py\nerror: Failed to parse pkg/b.py:2:3: Unexpected token\n"
    assert [(f["path"], f["line"], f["code"]) for f in parse_ruff_format(old)] == [
        ("pkg/a.py", 0, "unformatted"),
        ("pkg/b.py", 2, "syntax"),
    ]
    new = (
        "unformatted: File would be reformatted\n --> c.py:1:6\n  |\n\n"
        "invalid-syntax: Expected a parameter\n --> d.py:1:7\n"
    )
    assert [(f["path"], f["code"]) for f in parse_ruff_format(new)] == [
        ("c.py", "unformatted"),
        ("d.py", "syntax"),
    ]


def _real(tmp: Path, argv: list[str]) -> Completed:
    return proc.run(argv, cwd=tmp, timeout=120)


def test_the_parsers_read_the_real_tools(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("import os\nx = {  'a':1}\n")
    (tmp_path / "typed.py").write_text("def f(x: int) -> str:\n    return x\n\n\nreveal_type(f)\n")
    report = tmp_path / "r.json"
    ruff = [sys.executable, "-I", "-m", "ruff"]
    _real(tmp_path, [*ruff, "check", "--isolated", "--output-format=json",
                     f"--output-file={report}", "--no-cache", "calc.py"])  # fmt: skip
    findings = parse_ruff(report.read_text().replace(str(tmp_path), WORKSPACE))
    assert findings is not None
    assert ("calc.py", 1, "F401") in [(f["path"], f["line"], f["code"]) for f in findings]
    assert parse_ruff("[]") == [] and parse_ruff("error: panic") is None
    formatted = _real(tmp_path, [*ruff, "format", "--check", "--isolated", "--no-cache", "."])
    assert formatted.returncode == 1
    assert {f["path"] for f in parse_ruff_format(formatted.output)} == {"calc.py"}
    typed = _real(tmp_path, [sys.executable, "-I", "-m", "mypy", "--config-file=",
                             "--no-incremental", "--cache-dir=/dev/null", "typed.py"])  # fmt: skip
    assert ": note: " in typed.output  # the note the parser must ignore is really there
    assert [(f["path"], f["line"], f["code"]) for f in parse_mypy(typed.output)] == [
        ("typed.py", 2, "return-value")
    ]


# ---- in the real sandbox: nothing the workspace holds changes what the tools see


HOSTILE = {
    "pyproject.toml": "[tool.ruff]\nfix = true\n[tool.mypy]\nstrict = false\n",
    "pkg/__init__.py": "",
    "pkg/pyproject.toml": '[tool.ruff.lint]\nignore = ["ALL"]\n',  # a nested config
    "pkg/.ignore": "mod.py\n",  # ruff honours it even with --isolated or --config
    "pkg/mod.py": "import os\n\n\ndef f() -> int:\n    return 'no'\n",
    # mypy imports psutil when it can: a top-level one in the workspace would run inside it
    "psutil.py": "import sys\nsys.stderr.write('PSUTIL RAN\\n')\nraise SystemExit(0)\n",
    "ruff/__init__.py": "",
    "ruff/__main__.py": "print('[]')\n",  # a ruff that finds nothing
    "mypy/__init__.py": "",
    "mypy/__main__.py": "",  # a mypy that finds nothing
}


@needs_bwrap
def test_the_gates_see_through_a_hostile_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    for rel, text in HOSTILE.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    lint = CheckSpec("lint", "python -m ruff check pkg", "ruff")
    types = CheckSpec("types", "python -m mypy pkg", "mypy")
    parts = run_suite(BwrapSandbox(), workspace, [lint, types], limits=FAST)
    by_name = {p.run["name"]: p for p in parts}
    assert by_name["lint"].run["status"] == "failed", by_name["lint"].log_tail
    # the nested config is unread, and the .ignore file hides nothing
    assert "F401" in [f["code"] for f in by_name["lint"].findings]
    assert by_name["types"].run["status"] == "failed", by_name["types"].log_tail
    assert [f["code"] for f in by_name["types"].findings] == ["return-value"]
    assert "PSUTIL RAN" not in by_name["types"].log_tail
    for part in parts:
        assert shlex.split(part.run["command"])[:2] == [sys.executable, "-I"]
    # `fix = true` in the root config: ruff still never wrote the workspace
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == before
