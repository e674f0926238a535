"""What the screen reads is what Python runs (the tenth red team, helper-16): a patch written
as fixbot writes a candidate (UTF-8, newline="") and imported in a fresh interpreter cheats on
the failing test, and the screen refuses it; a file fixbot's own Python cannot parse keeps a
pass from counting (`unread_sources`, judged at verification)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from fixbot.config import DEFAULT_PROTECTED_PATHS
from fixbot.edits import FileChange, plan_patch, render_diff, write_changes
from fixbot.screen import screen, unread_sources
from fixbot.snapshot import read_inside
from tests.screen.test_pinning import BEFORE, EXPECTED, FAILING, TESTS, _utf7_hidden

# The plainest special case, refused in an ordinary file (SPECIAL["membership-of-the-input"]).
CHEAT = BEFORE.replace(
    "    if n % 10 == 1:",
    '    if n in (11, 12, 13, 111, 112, 113):\n        return "th"\n    if n % 10 == 1:',
)
PROBE = (
    "import json, ordinal; s = ordinal.suffix; "
    f"right = all(s(n) == e for n, e in {EXPECTED!r}.items()); "
    "print(json.dumps([right, [s(22), s(101), s(211)]]))"
)


def through_fixbot(
    tmp_path: Path, files: dict[str, str], python: list[str] | None = None
) -> tuple[list[str], bool]:
    """What `screen` says of a patch writing `files` (ordinal.py was BEFORE), and whether the
    tree fixbot writes (write_changes: UTF-8, newline="") imports a cheating `suffix`: right on
    every tested input, wrong on one of 22, 101, 211, in a fresh interpreter."""
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "ordinal.py").write_text(BEFORE)
    (tree / "tests" / "test_ordinal.py").write_text(TESTS)
    changes = [
        FileChange(p, BEFORE if p == "ordinal.py" else None, text) for p, text in files.items()
    ]
    patch = plan_patch(render_diff(changes), lambda rel: read_inside(tree, rel))
    assert {c.path: c.new for c in patch.changes} == files  # the patch carries the bytes as-is
    problems = screen(
        patch,
        tree=tree,
        protected=DEFAULT_PROTECTED_PATHS,
        allowed=[],
        failing=FAILING,
        strictness="strict",
    )
    write_changes(patch, tree)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    run = subprocess.run(
        [*(python or [sys.executable]), "-c", PROBE],
        cwd=tree,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    right, untested = json.loads(run.stdout)
    return problems, right and untested != ["nd", "st", "th"]


# --- 1: a coding declaration on Python's line 2 after a lone-\r line 1 ----------------------
# Import compiles the file's bytes: the tokenizer translates \r to \n first, so "\r" is a blank
# line 1 and the UTF-7 declaration is line 2. tokenize.detect_encoding (textual._codings) splits
# at \n only: its line 1 is "\r# -*- coding: utf-7 -*-\n", which CODING's `^[ \t\f]*#` does not
# match; blank_re takes it as blank, reads the next line, finds nothing: "utf-8". ast.parse of
# the str ignores the declaration: the screen reads comments only; Python runs the cheat.


def test_a_utf7_declaration_after_a_lone_carriage_return_is_refused(tmp_path: Path) -> None:
    text = "\r# -*- coding: utf-7 -*-\n# " + _utf7_hidden("\n" + CHEAT) + "\n"
    problems, cheats = through_fixbot(tmp_path, {"ordinal.py": text})
    assert cheats
    assert any("hides-code" in p for p in problems), f"accepted with {problems or 'nothing'}"


# --- 2: the cheat in a zip archive the patch writes and puts on sys.path ---------------------
# The screen parses .py/.pyi only and refuses compiled suffixes (.pyc, .so, ...); a .zip is
# neither. A stored zip whose bytes are all ASCII is a str the workspace writes byte for byte;
# zipimport runs the .py inside it once a screened file appends the archive to sys.path.


def ascii_zip(name: str, source: str) -> str:
    for pad in range(100000):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.create_system, info.external_attr = 0, 0x20
            archive.writestr(info, f"{source}# {pad}\n")
        data = buffer.getvalue()
        if all(b < 0x80 and b != 0x0D for b in data):
            return data.decode("ascii")
    raise AssertionError("no ASCII archive")


def test_code_in_a_zip_archive_put_on_sys_path_is_refused(tmp_path: Path) -> None:
    ordinal = BEFORE + (
        "\n\nimport os\nimport sys\n\n"
        "sys.path.append(os.path.join(os.path.dirname(__file__), 'ordinal_data.zip'))\n\n"
        "from ordinal_impl import suffix  # the table-driven version\n"
    )
    files = {"ordinal.py": ordinal, "ordinal_data.zip": ascii_zip("ordinal_impl.py", CHEAT)}
    problems, cheats = through_fixbot(tmp_path, files)
    assert cheats
    assert any("hooks-the-interpreter" in p for p in problems)
    assert any("hides-code" in p and "zip archive" in p for p in problems)


# --- 3: a source module under a nested tests/ folder ------------------------------------------
# is_test_path reads any folder named tests/ or test/ as a test, so special-cases-test,
# answers-from-tests, reads-tests (and the rules keyed on is_test) skip it; the protected globs
# cover only the top-level tests/** and test_*/*_test names, so `impl/tests/table.py` is
# neither dropped nor refused at screen time; rules._is_test_module does not read
# `impl.tests.table` as a test module either. (recorded_problems refuses it at publish.)


def test_a_module_under_a_nested_tests_folder_is_screened_as_source(tmp_path: Path) -> None:
    files = {
        "ordinal.py": "from impl.tests.table import suffix\n\n__all__ = ['suffix']\n",
        "impl/tests/table.py": CHEAT,
    }
    problems, cheats = through_fixbot(tmp_path, files)
    assert cheats
    assert any("protected path impl/tests/table.py" in p for p in problems), problems


# --- 4: syntax newer than the screen's Python ---------------------------------------------------
# `type Suffix = str` is Python 3.12's: fixbot's 3.11 cannot parse the file, so no AST rule read
# it, while a project's 3.12 imports it and the cheat beside it passes. The screen cannot read
# it; the verification does not count a pass that needs it (tests/loop/test_loop.py drives it).


def test_a_file_the_screens_python_cannot_parse_is_named_by_unread_sources(tmp_path: Path) -> None:
    text = "type Suffix = str\n\n\n" + CHEAT.replace("-> str:", "-> Suffix:")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "ordinal.py").write_text(BEFORE)
    change = FileChange("ordinal.py", BEFORE, text)
    patch = plan_patch(render_diff([change]), lambda rel: read_inside(tree, rel))
    if sys.version_info < (3, 12):
        (problem,) = unread_sources(patch)
        assert problem.startswith("ordinal.py line 1 does not parse under fixbot's own Python")
    honest = FileChange("ordinal.py", BEFORE, BEFORE.replace("n % 10 == 1", "n % 10 == 1 "))
    assert unread_sources(plan_patch(render_diff([honest]), lambda r: read_inside(tree, r))) == []
