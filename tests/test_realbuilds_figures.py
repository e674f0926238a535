"""The real-build corpus's figures in the docs come from committed rows, never typed.

`python benchmarks/realbuilds.py --write ROWS...` renders docs/benchmarks.md's table and
README.md's line from rows under benchmarks/results/; these tests render them again from the
rows the table names and compare, and check the rules the figures count by.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import realbuilds
from benchmarks.realcorpus import load_corpus

ROOT = Path(__file__).resolve().parent.parent


def block(page: str, name: str) -> str:
    shown = realbuilds.generated_block((ROOT / page).read_text(encoding="utf-8"), name)
    assert shown is not None, f"{page} has no generated block {name!r}"
    return shown


def test_the_docs_figures_are_the_committed_rows_rendered() -> None:
    table = block(*realbuilds.TABLE_BLOCK)
    paths = realbuilds.rows_named(table)
    assert paths, "the table's first line names no rows file under benchmarks/results/"
    assert all(path.is_file() for path in paths), paths
    order = [case.id for case in load_corpus().cases]
    expected = realbuilds.figures(paths, order)
    assert table == expected[realbuilds.TABLE_BLOCK[1]], "run realbuilds.py --write again"
    assert block(*realbuilds.LINE_BLOCK) == expected[realbuilds.LINE_BLOCK[1]]


def row(case: str, split: str, status: str, **more: object) -> dict[str, object]:
    return {
        "case": case,
        "project": case.split("-")[0],
        "split": split,
        "status": status,
        "fixed": status == "fixed",
        "fixbot_commit": "c" * 40,
        "expected_failing": ["tests.test_a.test_one"],
        **more,
    }


def test_the_totals_count_held_out_cases_apart_and_quarantines_that_hide() -> None:
    rows = [
        row("a-1", "dev", "fixed", cost_ratio=2.0),
        row("a-2", "heldout", "escalated", cost_ratio=4.0, quarantined={"tests.test_a": "x"}),
        row("b-1", "heldout", "error", tampered=True),
    ]
    totals = realbuilds.summary(rows)
    assert totals["by_split"] == {"dev": "1 of 1", "heldout": "0 of 2"}
    assert (totals["fixed"], totals["escalated"], totals["error"]) == (1, 1, 1)
    assert totals["tampered"] == 1
    assert totals["hidden_by_quarantine"] == 1  # a quarantined module hides its tests
    assert totals["cost_ratio_median"] == 3.0


def test_a_case_holds_only_when_exactly_its_tests_fail_bare() -> None:
    case = load_corpus().case("tomli-4")
    failing = [realbuilds.canonical_test_id(t) for t in case.failing]
    holds = {"bare_failing": failing, "bare_fixed_failing": [], "bare_fixed_returncode": 0}
    assert realbuilds.bare_holds(case, holds)
    assert not realbuilds.bare_holds(case, {**holds, "bare_failing": [*failing, "tests.x.y"]})
    assert not realbuilds.bare_holds(case, {**holds, "bare_fixed_failing": ["tests.x.y"]})
    assert not realbuilds.bare_holds(case, {**holds, "bare_fixed_returncode": 1})


def test_a_project_s_flaky_tests_do_not_count_in_the_bare_check() -> None:
    case = load_corpus().case("click-2")
    failing = [realbuilds.canonical_test_id(t) for t in case.failing]
    pager = "tests.test_utils.test_echo_via_pager[test5-cat]"
    fields = {"bare_failing": failing, "bare_fixed_failing": [pager], "bare_fixed_returncode": 1}
    assert realbuilds.bare_holds(case, fields)
    other = {**fields, "bare_fixed_failing": [pager, "tests.test_utils.test_echo_color_flag"]}
    assert not realbuilds.bare_holds(case, other)
