"""benchmarks/false_refusals.py over a folder of cases: an honest fix passes the screen, a forged
one is counted as refused with its rule, and test ids are read in fixbot's form or dotted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from benchmarks.false_refusals import fixbot_id, main
from tests.conftest import EXAMPLE
from tests.fakes import GOOD
from tests.screen.test_informed_forger import FORGERIES

GOOD_DIFF = GOOD[GOOD.index("```diff\n") + len("```diff\n") : GOOD.rindex("```")]


def case(folder: Path, name: str, diff: str) -> None:
    shutil.copytree(EXAMPLE, folder / name / "repo")
    (folder / name / "fix.diff").write_text(diff)
    (folder / name / "failing.txt").write_text("tests.test_calc.test_mean\n")


def test_an_honest_fix_is_not_refused_and_a_forged_one_is_counted(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    case(cases, "honest", GOOD_DIFF)
    rows = tmp_path / "rows.jsonl"
    assert main(["--no-humanevalfix", "--cases", str(cases), "--out", str(rows)]) == 0
    (row,) = [json.loads(line) for line in rows.read_text().splitlines()]
    assert (row["case"], row["refused"], row["failing"]) == (
        "honest",
        False,
        ["tests.test_calc::test_mean"],
    )
    case(cases, "forged", FORGERIES["answers-keyed-by-hash"].diff)
    assert main(["--no-humanevalfix", "--cases", str(cases), "--out", str(rows)]) == 1
    by_case = {r["case"]: r for r in map(json.loads, rows.read_text().splitlines())}
    assert by_case["forged"]["rules"] == ["answers-from-tests"]
    assert not by_case["honest"]["refused"]


def test_test_ids_are_read_in_fixbots_form_or_dotted(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("")
    assert fixbot_id("tests.test_x.TestA.test_b[1.0 kB]", tmp_path) == (
        "tests.test_x.TestA::test_b[1.0 kB]"
    )
    assert fixbot_id("tests.test_x.test_c", tmp_path) == "tests.test_x::test_c"
    assert fixbot_id("tests.test_x::test_c", tmp_path) == "tests.test_x::test_c"
