"""`fixbot bench` over the shipped corpus, end to end: the real CLI, real git, the real bwrap
sandbox, the real openai SDK talking to a scripted server that answers each entry's prompt with
the fix for that entry; and the pure parts (rows, totals, table, the timed sandbox) alone."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from fixbot import cli
from fixbot.cli.bench import Row, SandboxTimer, TimedSandbox, render_table, row_of, totals
from fixbot.proc import Completed
from fixbot.report import FixResult
from fixbot.sandbox import DEFAULT_LIMITS, Limits, RunSpec
from tests.conftest import API_KEY, ROOT
from tests.fake_openai import Fail, ScriptedOpenAI
from tests.fakes import reply

CORPUS = ROOT / "benchmarks" / "corpus"
needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="needs bubblewrap (apt-get install bubblewrap)"
)

# Words that appear only in one entry's prompt (its failing test ids), and that entry's fix.
FIXES = {
    "test_touching_ranges_merge": reply(
        """--- a/ranges.py
+++ b/ranges.py
@@ -7,3 +7,3 @@
     for start, end in sorted(ranges):
-        if merged and start < merged[-1][1]:
+        if merged and start <= merged[-1][1]:
             merged[-1] = (merged[-1][0], max(merged[-1][1], end))
""",
        prose="Touching ranges share an end point: compare with <=.",
    ),
    "test_total_of_prices_with_cents": reply(
        """--- a/shop/money.py
+++ b/shop/money.py
@@ -5,2 +5,2 @@
     \"\"\"A price in currency units (2.5) as whole cents (250).\"\"\"
-    return int(amount * 100)
+    return round(amount * 100)
""",
        prose="int() truncates 28.999... to 28: round to the nearest cent in to_cents.",
    ),
    "ruff check --no-cache": reply(
        """--- a/slug.py
+++ b/slug.py
@@ -3,8 +3,7 @@
 import re
-import string


 def slugify(title: str, separator: str | None = None) -> str:
     \"\"\"'Hello, World!' -> 'hello-world'.\"\"\"
-    if separator == None:
+    if separator is None:
         separator = "-"
""",
        prose="Drop the unused import and compare with None by identity.",
    ),
    "mypy --cache-dir=/dev/null": reply(
        """--- a/settings.py
+++ b/settings.py
@@ -15,3 +15,3 @@
     if key not in table:
         return default
-    return table.get(key)
+    return table[key]
""",
        prose="The key is known to be there: index the table, which is a str.",
    ),
}
# Words from the entries that must never reach the model.
NEVER_ASKED = ("stationfeed", "daily_high", "test_total_wait_stays_under_budget", "backoff")
FIXED = ("lint-only", "multi-file-logic", "single-file-logic", "type-only")
ESCALATED = {"flaky-test": "flaky", "environment": "environment"}


def answer(body: dict[str, Any]) -> str | Fail:
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    for word, fix in FIXES.items():
        if word in text:
            return fix
    return Fail(400, "no scripted fix for this prompt")


def bench(*args: str) -> list[str]:
    return ["bench", *args, "--log-format", "json"]


def environ(base_url: str) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": API_KEY,
        "OPENAI_BASE_URL": base_url,
        "FIXBOT_MODEL": "scripted-model",
    }


@pytest.mark.slow
@needs_bwrap
def test_bench_over_the_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    args = bench(str(CORPUS), "--json", "--sandbox", "bwrap", "--max-iterations", "2")
    with ScriptedOpenAI([answer] * 12) as server:
        code = cli.main([*args, "--out", str(out)], environ(server.base_url))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert len(captured.out.strip().splitlines()) == 1  # one JSON object on stdout
    data = json.loads(captured.out)
    assert data["corpus"] == str(CORPUS) and data["model"] == "scripted-model"
    rows = {row["entry"]: row for row in data["rows"]}
    assert sorted(rows) == sorted([*FIXED, *ESCALATED])

    for name in FIXED:
        row = rows[name]
        assert row["status"] == "fixed", (name, row["reason"])
        # The first model attempt passes (before it, fixbot may try ruff's own fixes: attempt 0).
        assert row["attempts_to_pass"] == 1 <= row["attempts"]
        assert row["tokens"] == row["prompt_tokens"] + row["completion_tokens"] > 0
        assert row["reason"] == ""
        assert (out / name / "fix.diff").is_file()
    for name, kind in ESCALATED.items():
        row = rows[name]
        assert row["status"] == "escalated" and row["classification"] == kind, row
        assert row["reason"].startswith(f"{kind}:")
        assert row["attempts"] == row["tokens"] == 0 and row["attempts_to_pass"] is None
        assert json.loads((out / name / "evidence.json").read_text())["status"] == "escalated"
    for row in rows.values():
        assert 0 < row["sandbox_seconds"] <= row["wall_seconds"]
        assert row["cost_usd"] == 0.0  # the scripted model has no price

    # Only the four fixable entries reached the model, one call each.
    assert len(server.requests) == 4
    asked = json.dumps(server.requests)
    assert not [word for word in NEVER_ASKED if word in asked]

    total = data["totals"]
    assert (total["entries"], total["fixed"], total["escalated"], total["error"]) == (6, 4, 2, 0)
    assert total["attempts"] >= 4 and total["mean_attempts_to_pass"] == 1
    assert total["tokens"] == sum(row["tokens"] for row in rows.values())

    table = render_table([Row(**{f.name: r[f.name] for f in fields(Row)}) for r in data["rows"]])
    assert "4 fixed, 2 escalated, 0 error, 0 other of 6 entries" in table
    assert table.splitlines()[-2].split()[:3] == ["TOTAL", "4/6", "fixed"]
    assert "flaky:" in table and "environment:" in table


def test_a_missing_corpus_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(bench(str(tmp_path / "nowhere")), environ("http://127.0.0.1:9/v1")) == 2
    assert "no corpus folder" in capsys.readouterr().err


def test_an_empty_corpus_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "not-an-entry").mkdir()  # a folder without .fixbot.yml is no entry
    assert cli.main(bench(str(tmp_path)), environ("http://127.0.0.1:9/v1")) == 2
    assert "has no entries" in capsys.readouterr().err


def test_an_invalid_option_is_a_usage_error_before_any_entry_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = bench(str(CORPUS), "--max-iterations", "0")
    assert cli.main(args, environ("http://127.0.0.1:9/v1")) == 2
    captured = capsys.readouterr()
    assert "max_iterations" in captured.err and captured.out == ""


def result(status: str, verdicts: Sequence[str], reason: str) -> FixResult:
    attempts: list[Any] = [
        {"number": n, "verdict": v, "prompt_tokens": 100, "completion_tokens": 20}
        for n, v in enumerate(verdicts, 1)
    ]
    tokens = {"prompt": 100 * len(attempts), "completion": 20 * len(attempts)}
    return FixResult(status=status, reason=reason, attempts=attempts, tokens=tokens)


def test_rows_and_totals() -> None:
    rows = [
        row_of("a", result("fixed", ["fail", "pass"], reason="verified"), 2.0, 3.0),
        row_of("b", result("escalated", ["fail"] * 3, reason="iterations: 3 of 3"), 4.0, 5.0),
        row_of("c", result("error", [], reason="model unreachable"), 0.0, 0.5),
    ]
    assert rows[0].attempts_to_pass == 2 and rows[0].reason == "" and rows[0].tokens == 240
    assert rows[1].attempts_to_pass is None and rows[1].reason == "iterations: 3 of 3"
    assert totals(rows) == {
        "entries": 3,
        "fixed": 1,
        "escalated": 1,
        "error": 1,
        "other": 0,
        "attempts": 5,
        "mean_attempts_to_pass": 2,
        "prompt_tokens": 500,
        "completion_tokens": 100,
        "tokens": 600,
        "cost_usd": 0.0,
        "sandbox_seconds": 6.0,
        "wall_seconds": 8.5,
    }
    lines = render_table(rows).splitlines()
    assert lines[0].split() == [
        "ENTRY", "STATUS", "ATTEMPTS", "TO", "PASS", "TOKENS", "COST", "$", "SANDBOX", "S",
        "WALL", "S", "REASON",
    ]  # fmt: skip
    assert lines[1].split()[:8] == ["a", "fixed", "2", "2", "240", "0.0000", "2.0", "3.0"]
    assert lines[2].endswith("iterations: 3 of 3")
    assert set(lines[4]) == {"-"}
    assert lines[5].split() == ["TOTAL", "1/3", "fixed", "5", "2", "600", "0.0000", "6.0", "8.5"]
    assert lines[6] == "1 fixed, 1 escalated, 1 error, 0 other of 3 entries"


def test_a_cost_is_read_where_the_result_carries_one() -> None:
    class Priced(FixResult):
        def summary(self) -> dict[str, Any]:
            return {**super().summary(), "cost_usd": 0.0125}

    row = row_of("a", Priced(status="fixed", reason=""), 0.0, 0.0)
    assert row.cost_usd == 0.0125


class FakeSandbox:
    name = "fake"
    layered = True
    host_toolchain = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.closed = False

    def run(self, argv: Sequence[str], spec: RunSpec) -> Completed:
        self.calls.append(("run", {"spec": spec}))
        return Completed(tuple(argv), 0, "", 0.0, False, 0)

    def prepare(self, argv: Sequence[str], **kwargs: Any) -> Completed:
        self.calls.append(("prepare", kwargs))
        return Completed(tuple(argv), 0, "", 0.0, False, 0)

    def describe(self) -> str:
        return "fake 1.0"

    def close(self) -> None:
        self.closed = True


def test_the_timed_sandbox_passes_everything_through_and_counts_its_time() -> None:
    ticks = iter([0.0, 1.5, 10.0, 10.25])
    timer = SandboxTimer(clock=lambda: next(ticks))
    inner = FakeSandbox()
    timed = timer.wrap(inner)
    assert isinstance(timed, TimedSandbox)
    assert (timed.name, timed.layered, timed.describe()) == ("fake", True, "fake 1.0")
    limits = Limits(timeout_seconds=5)
    env: Mapping[str, str] = {"A": "1"}
    here = Path("/ws")
    spec = RunSpec(here, Path("/out"), Path("/lower"), Path("/env"), ["tests/x.py"], limits, env)
    timed.run(["python"], spec)
    timed.prepare(["pip"], workspace=here, env_dir=Path("/env"))
    assert inner.calls == [
        ("run", {"spec": spec}),
        ("prepare", {"workspace": here, "env_dir": Path("/env"), "limits": DEFAULT_LIMITS}),
    ]
    assert timer.seconds == 1.75
    timed.close()
    assert inner.closed
