"""The fix-rate benchmark's own parts: the fixed splits, the movedspec generator, the judge (real
bubblewrap), the rows-to-tables generator and its --check, the held-out guard. Tasks here are
small programs of our own, never the HumanEvalFix data."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import corpora
import fixrate
import judge
import tables

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

PROMPT = '''from typing import List


def count_positive(numbers: List[int]) -> int:
    """Count the numbers that are greater than zero.
    >>> count_positive([1, -2, 3])
    2
    """
'''
BUGGY = "    return sum(1 for n in numbers if n >= 0)\n"
CANONICAL = "    return sum(1 for n in numbers if n > 0)\n"
HANGING = "    while True:\n        pass\n"
TEST = """

METADATA = {}


def check(candidate):
    assert candidate([1, -2, 3]) == 2
    assert candidate([0, 0]) == 0

check(count_positive)
"""


def record(body: str = BUGGY) -> dict[str, str]:
    return {
        "task_id": "Python/0",
        "prompt": PROMPT,
        "buggy_solution": body,
        "canonical_solution": CANONICAL,
        "test": TEST,
        "entry_point": "count_positive",
    }


def test_the_splits_are_fixed_by_their_rule() -> None:
    assert tuple(range(40)) == corpora.DESIGN
    assert tuple(range(40, 164, 2)) == corpora.HELDOUT
    assert len(corpora.HELDOUT) == 62
    assert not set(corpora.DESIGN) & set(corpora.HELDOUT)
    assert not set(corpora.HELDOUT) & set(corpora.RESERVED)
    assert set(corpora.DESIGN) | set(corpora.HELDOUT) | set(corpora.RESERVED) == set(range(164))
    assert corpora.split_of(39) == "design" and corpora.split_of(40) == "heldout"
    assert corpora.split_of(41) == "reserved"


@pytest.mark.parametrize(("number", "layout"), [(0, "comment"), (1, "module"), (2, "tests")])
def test_movedspec_moves_the_docstring_out_of_the_function(number: int, layout: str) -> None:
    source = corpora.movedspec_source(number, PROMPT, BUGGY, "count_positive")
    tree = ast.parse(source)
    function = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "count_positive"
    )
    assert ast.get_docstring(function) is None
    assert corpora.layout_of(number) == layout
    module_doc = ast.get_docstring(tree) or ""
    lines = source.splitlines()
    above = lines[function.lineno - 2]
    if layout == "comment":
        assert above.startswith("#")
        assert "# Count the numbers that are greater than zero." in source
        assert not module_doc
    elif layout == "module":
        assert "Count the numbers that are greater than zero." in module_doc
    else:
        assert "greater than zero" not in source
    # helper code of our own around it: the function is not the whole file
    others = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != "count_positive"]
    assert others
    assert source.index("from typing import List") < source.index("def ")


def test_movedspec_refuses_a_task_that_uses_a_helper_name() -> None:
    prompt = PROMPT.replace("count_positive", "clamp")
    with pytest.raises(ValueError, match="already uses"):
        corpora.movedspec_source(6, prompt, BUGGY, "clamp")


def test_the_test_imports_the_helpers_it_calls() -> None:
    prompt = "def helper(x):\n    return x\n\n\n" + PROMPT
    assert corpora.helper_names(prompt, "count_positive", "assert helper(1)") == ["helper"]
    assert corpora.helper_names(prompt, "count_positive", "assert count_positive([])") == []


def write_data(folder: Path, records: list[dict[str, str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / corpora.JSONL).write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


@needs_bwrap
def test_the_judge_on_a_built_movedspec_task(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", [record(), record(HANGING)])
    fixed, hanging = corpora.build("movedspec", data, tmp_path / "repos", [0, 1])
    assert fixed.source == "app/core.py" and (fixed.repo / "tests" / "test_core.py").is_file()
    referee = judge.Judge(test_timeout=2, run_timeout=30)
    baseline = referee.baseline(fixed)
    assert baseline.verdict == "fail" and baseline.collected == 1
    assert "assert 2 == 0" in judge.failure_excerpt(baseline.output)

    good = judge.file_diff(fixed, fixed.canonical)
    assert referee.judge(fixed, good).verdict == "pass"
    assert referee.judge(fixed, "").verdict == "no-change"
    assert (
        referee.judge(fixed, "--- a/app/core.py\n+++ b/app/core.py\n@@ -1 +1 @@\n-x\n+y\n").verdict
        == "no-apply"
    )
    touching = good + "--- a/tests/test_core.py\n+++ b/tests/test_core.py\n"
    assert referee.judge(fixed, touching).verdict == "tests-touched"
    # a pass needs as many passing tests as the buggy code's run had
    assert referee.judge(fixed, good, expected=2).verdict == "fail"

    # a hang is a failing test, ended by the per-test timeout
    assert referee.baseline(hanging).verdict == "hang"
    assert referee.judge(hanging, judge.file_diff(hanging, hanging.canonical)).verdict == "pass"


@needs_bwrap
def test_the_judge_sees_no_network_and_no_fixbot_plugin(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_env.py").write_text(
        "import os, socket\n\n\n"
        "def test_env():\n"
        "    assert os.environ['PYTEST_DISABLE_PLUGIN_AUTOLOAD'] == '1'\n"
        "    assert 'OPENAI_API_KEY' not in os.environ\n"
        "    s = socket.socket()\n"
        "    try:\n"
        "        s.connect(('1.1.1.1', 80))\n"
        "    except OSError:\n"
        "        return\n"
        "    raise AssertionError('network reachable')\n"
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)

    class Plain:
        source = ""

    Plain.repo = repo  # type: ignore[attr-defined]
    verdict = judge.Judge().baseline(Plain())  # type: ignore[arg-type]
    assert verdict.verdict == "pass", verdict.output


def row(side: str, task: int, fixed: bool, run: int = 1, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "corpus": "humanevalfix",
        "split": "design",
        "run": run,
        "date": "2026-01-02",
        "task": f"Python/{task}",
        "number": task,
        "layout": "docstring",
        "side": side,
        "fixbot_commit": "0123456789abcdef",
        "fixbot_dirty": "",
        "model": "m",
        "base_url": "http://x/v1",
        "settings": {"n": 4, "sample_temperature": 0.6},
        "fixed": fixed,
        "verdict": "pass" if fixed else "fail",
        "calls": 1,
        "tokens": 100,
        "seconds": 10.0,
        "fixed_at_call": 1 if fixed else None,
    }
    if side == "fixbot":
        base["fixbot"] = {
            "claimed_fixed": fixed,
            "status": "fixed" if fixed else "escalated",
            "category": "",
        }
    return {**base, **extra}


def rows_of_two_runs() -> list[dict[str, Any]]:
    rows = []
    for run, fixbot_fixed in ((1, (True, True, False)), (2, (True, False, False))):
        for task, fixed in enumerate(fixbot_fixed):
            rows.append(row("oneshot", task, task == 0, run))
            rows.append(row("bestofn", task, task in (0, 2), run))
            rows.append(row("fixbot", task, fixed, run))
    return rows


def test_tables_count_ratios_and_spread() -> None:
    text = tables.render(rows_of_two_runs())
    assert "| one-shot (1 greedy call) | 1 of 3 / 1 of 3 | 0 |" in text
    assert "| **fixbot** (its defaults) | 2 of 3 / 1 of 3 | 1 |" in text
    assert "fixbot / oneshot: 2.00x / 1.00x" in text
    assert "fixbot / bestofn: 1.00x / 0.50x" in text
    # each run's own: in run 2 fixbot fixed Python/0 alone, best-of-4 Python/0 and Python/2
    assert "Run 1: best-of-4 fixed and fixbot did not: Python/2; fixbot fixed and" in text
    assert "fixbot fixed and best-of-4 did not: Python/1." in text
    assert "Run 2: best-of-4 fixed and fixbot did not: Python/2; fixbot fixed and" in text
    assert "fixbot fixed and best-of-4 did not: none." in text


def test_tables_split_fixbots_fixes_into_greedy_and_sampled_calls() -> None:
    greedy, sampled = {"temperature": 0.0}, {"temperature": 0.8}
    rows = [
        row("fixbot", 0, True, fixed_at_call=2, call_log=[greedy, greedy]),
        row("fixbot", 1, True, fixed_at_call=3, call_log=[greedy, greedy, sampled]),
        row("fixbot", 2, True, fixed_at_call=4, call_log=[greedy, greedy, sampled, sampled]),
        row("fixbot", 3, False, call_log=[greedy, greedy, sampled, sampled]),
        row("fixbot", 4, True, fixed_at_call=1),  # no call log: counted, as unknown
    ]
    text = tables.render(rows)
    assert (
        "the call that made them, greedy (temperature 0) or sampled: greedy 1, sampled 2, " in text
    )
    assert "sampled 2, unknown 1." in text


def test_tables_check_mode(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "humanevalfix-design-2026-01-02-run1.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows_of_two_runs())
    )
    page = tmp_path / "page.md"
    page.write_text(f"# Fix rate\n\n{tables.BEGIN}\nold\n{tables.END}\n\nafter\n")
    assert tables.main(["--results", str(results), "--check", str(page)]) == 1
    assert tables.main(["--results", str(results), "--write", str(page)]) == 0
    assert tables.main(["--results", str(results), "--check", str(page)]) == 0
    assert page.read_text().endswith("\n\nafter\n") and "| side |" in page.read_text()
    (tmp_path / "bare.md").write_text("no block\n")
    assert tables.main(["--results", str(results), "--check", str(tmp_path / "bare.md")]) == 2


@pytest.mark.parametrize(
    "flag",
    [
        ["--tasks", "40"],
        ["--sides", "fixbot"],
        ["--fixbot-config-extra", "x: 1"],
        ["--n", "2"],
        ["--out", "/tmp/x"],
    ],
)
def test_the_heldout_split_refuses_to_tune(
    flag: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        fixrate.parse_args(["--split", "heldout", *flag])
    assert exit_.value.code == 2
    assert "for reporting only" in capsys.readouterr().err


def test_design_tasks_stay_in_the_design_split(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        fixrate.parse_args(["--tasks", "38-41"])
    assert "not in the design split" in capsys.readouterr().err


def test_a_reply_becomes_the_candidate_file() -> None:
    assert fixrate.extract_code("x\n```python\na = 1\n```\n") == ("a = 1\n", "python block")
    assert fixrate.extract_code("```\nb\n```") == ("b\n", "other block")
    assert fixrate.extract_code("c = 2\n") == ("c = 2\n", "no block")
    assert fixrate.extract_code("  ") == ("", "empty")


DOCSTRING_WITH_AN_EXAMPLE = (
    'def size(n):\n    """Examples:\n        ```pycon\n        >>> size(1)\n        1\n\n'
    '        ```\n    """\n    return n\n'
)


def test_a_docstrings_own_fenced_example_stays_in_the_candidate() -> None:
    reply = f"Fixed:\n```python\n{DOCSTRING_WITH_AN_EXAMPLE}```\nDone.\n"
    assert fixrate.extract_code(reply) == (DOCSTRING_WITH_AN_EXAMPLE, "python block")


def test_results_number_the_runs(tmp_path: Path) -> None:
    results = fixrate.Results(tmp_path, "movedspec", "design")
    assert results.new("2026-01-02") == (1, tmp_path / "movedspec-design-2026-01-02-run1.jsonl")
    (tmp_path / "movedspec-design-2026-01-02-run1.jsonl").write_text("")
    (tmp_path / "movedspec-heldout-2026-01-02-run5.jsonl").write_text("")
    assert results.new("2026-01-03")[0] == 2


def test_every_fixrate_block_in_the_docs_is_the_committed_rows() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    marked = [
        page
        for page in pages
        if page.is_file()
        and (tables.BEGIN in page.read_text() or tables.LINE_BEGIN in page.read_text())
    ]
    assert ROOT / "README.md" in marked, "the README's held-out line is not generated"
    assert marked, "no page holds the fix-rate tables"
    for page in marked:
        assert tables.main(["--check", str(page)]) == 0, (
            f"python benchmarks/tables.py --write {page}"
        )


def attempt(verdict: str, *problems: str, status: str = "failed") -> dict[str, Any]:
    return {
        "number": 1,
        "reply": "...",
        "verdict": verdict,
        "problems": list(problems),
        "check": {"status": status},
    }


@pytest.mark.parametrize(
    ("attempts", "status", "reason", "category"),
    [
        (
            [attempt("rejected", "the reply contains no edit: no ```python block")],
            "escalated",
            "",
            "unusable",
        ),
        (
            [
                attempt("rejected", "the diff does not apply: hunk 1 of a.py"),
                attempt("rejected", "the reply contains no edit"),
            ],
            "escalated",
            "",
            "unusable",
        ),
        (
            [
                attempt("rejected", "the reply changes nothing: the code it sends back is"),
                attempt("rejected", "a.py: the code block is neither the whole file nor complete"),
            ],
            "escalated",
            "",
            "unusable",
        ),
        (
            [
                attempt("rejected", "the reply contains no edit"),
                attempt("rejected", "tests/x.py is protected"),
            ],
            "escalated",
            "",
            "refused",
        ),
        ([attempt("fail"), attempt("fail")], "escalated", "stuck: the same failure", "stuck"),
        ([attempt("fail")], "escalated", "budget spent", "wrong"),
        ([attempt("fail", status="timeout")], "escalated", "", "hang"),
        ([attempt("pass")], "fixed", "", ""),
    ],
)
def test_fixbot_failures_are_categorised(
    attempts: list[dict[str, Any]], status: str, reason: str, category: str
) -> None:
    assert fixrate.categorize(status, reason, {"attempts": attempts}, timed_out=False) == category


def test_the_readme_line_gives_the_heldout_figures_of_every_run(tmp_path: Path) -> None:
    assert tables.render_line(rows_of_two_runs()) == "The held-out split is not measured yet.\n"
    heldout = [{**r, "split": "heldout"} for r in rows_of_two_runs()]
    line = tables.render_line(heldout)
    assert "held-out humanevalfix (62 tasks, 3 of them measured so far; fixbot 0123456" in line
    assert (
        "fixed by the one-shot 1 / 1, best-of-4 2 / 2, fix-then-rewrite 0 / 0, fixbot 2 / 1" in line
    )
    assert "fixbot / best-of-4 1.00x / 0.50x, fixbot / the one-shot 2.00x / 1.00x" in line
    results = tmp_path / "results"
    results.mkdir()
    (results / "humanevalfix-heldout-2026-01-02-run1.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in heldout)
    )
    page = tmp_path / "README.md"
    page.write_text(f"intro\n{tables.LINE_BEGIN}\nold\n{tables.LINE_END}\nafter\n")
    assert tables.main(["--results", str(results), "--check", str(page)]) == 1
    assert tables.main(["--results", str(results), "--write", str(page)]) == 0
    assert tables.main(["--results", str(results), "--check", str(page)]) == 0
    assert "3 of them measured so far" in page.read_text()


def _package(folder: Path, main: str) -> Path:
    (folder / "fixbot").mkdir(parents=True)
    (folder / "fixbot" / "__init__.py").write_text("")
    (folder / "fixbot" / "__main__.py").write_text(main)
    return folder


def test_the_measured_fixbot_is_the_roots_whatever_the_working_folder_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`python -m` puts the working folder before PYTHONPATH: run from a checkout of another
    fixbot (the repository's own, the usual place to start a benchmark), the fixbot measured
    was that one, whatever --fixbot-root said."""
    root = _package(tmp_path / "root", "import fixbot, sys; print(fixbot.__file__, *sys.argv[1:])")
    monkeypatch.chdir(_package(tmp_path / "elsewhere", "print('the wrong fixbot')"))
    log = tmp_path / "log"
    done = fixrate.fixbot_cli(root, ["fix", "repo"], {"MARK": "1"}, 60, log)
    assert done.returncode == 0, log.read_text()
    assert done.stdout.split() == [str(root / "fixbot" / "__init__.py"), "fix", "repo"]


def test_a_root_without_its_own_fixbot_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A --fixbot-root whose `fixbot` is not what Python imports (here: it has none, and
    another is on the path) is refused before anything is measured."""
    other = _package(tmp_path / "other", "")
    (other / "fixbot" / "config.py").write_text(
        "import types\nclass Config:\n    max_iterations = 4\n    reflection = False\n"
        "    parallel = types.SimpleNamespace(candidates=1)\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(other))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match=r"the fixbot to measure is at .* but .*other"):
        fixrate.fixbot_build(tmp_path / "root")
    monkeypatch.delenv("PYTHONPATH")
    assert fixrate.fixbot_build(ROOT).root == ROOT  # the repository's own checkout passes
