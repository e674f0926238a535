"""Prompt tokens against the size of the failure output and of the repository.

Builds the task prompt as `generate` does (context.prompt_values, then task.j2), with no model
and no sandbox: a baseline with 10 KB, 1 MB and 10 MB of failure output (failing tests with
their messages and tracebacks) over a small repository, and one failing test over repositories
of 20, 500 and 5,000 files, side by side in one run. Each prompt's estimated tokens (the
four-characters-a-token estimate fixbot uses when a server reports none) should stay within
the budget, while keeping every failing test id.

    python benchmarks/prompt_size.py [--budget 8000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fixbot.model.client import estimate_tokens
from fixbot.prompts import excerpts as context
from fixbot.prompts.render import render
from fixbot.records import CaseResult, CheckResult

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
TRACE_LINE = "    return a - b\nE   assert 0 == 2\n"
PER_TEST = 33_000  # characters of message and traceback per failing test
MAX_TESTS = 300


def failing_run(size: int) -> CheckResult:
    """A baseline whose failing tests print `size` characters of messages and tracebacks."""
    count = min(MAX_TESTS, max(1, size // PER_TEST))
    each = size // count
    message = "assert 0 == 2\n" + "x" * min(each // 10, 3_000)
    detail = "tests/test_calc.py:5: in test_case_0\n" + TRACE_LINE * (
        (each - len(message)) // len(TRACE_LINE)
    )
    return CheckResult(
        status="tests_failed",
        exit_code=1,
        seconds=1.0,
        tests={
            f"tests.test_calc::test_case_{i}": CaseResult(
                outcome="failed", message=message, detail=detail + "calc.py:2: AssertionError"
            )
            for i in range(count)
        },
        findings=[],
        log_tail="",
        commands=["python -m pytest"],
    )


def repository(root: Path, count: int) -> list[str]:
    """A repository of `count` files: calc.py, its failing tests, and modules in packages."""
    tests = "from calc import add\n\n" + "".join(
        f"def test_case_{i}():\n    assert add(1, 1) == 2\n\n" for i in range(MAX_TESTS)
    )
    files = {"calc.py": CALC, "tests/test_calc.py": tests}
    for i in range(count - len(files)):
        files[f"pkg/sub{i // 100}/mod{i}.py"] = (
            f"def func{i}(x):\n    return x + {i}\n\n\nclass Kind{i}:\n    size = {i}\n"
        )
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return sorted(files)


def measure(check: CheckResult, root: Path, files: list[str], budget: int) -> tuple[int, float]:
    start = time.perf_counter()
    protected = {f: "" for f in files if f.startswith("tests/")}
    values = context.prompt_values(check, root, files, protected=protected, budget_tokens=budget)
    text = render("task.j2", commit="0" * 40, hint="", ci_jobs=[], lessons=[], **values)
    seconds = time.perf_counter() - start
    assert all(test_id in text for test_id in check["tests"]), "a failing test id was dropped"
    return estimate_tokens(text), seconds


def output_tokens(check: CheckResult) -> int:
    """The failure output's own estimated tokens, were it shown whole."""
    return sum(estimate_tokens(r["message"] + r["detail"]) for r in check["tests"].values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=context.DEFAULT_BUDGET_TOKENS)
    budget = parser.parse_args().budget
    print(f"prompt budget: {budget} tokens (estimated: four characters a token)\n")
    print("| failure output | failing tests | its tokens | repository files | prompt tokens | ms |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        small = repository(Path(tmp) / "small", 20)
        for label, size in (("10 KB", 10_000), ("1 MB", 1_000_000), ("10 MB", 10_000_000)):
            check = failing_run(size)
            tokens, seconds = measure(check, Path(tmp) / "small", small, budget)
            row = [
                label,
                len(check["tests"]),
                output_tokens(check),
                20,
                tokens,
                f"{seconds * 1000:.0f}",
            ]
            print("| " + " | ".join(str(cell) for cell in row) + " |")
        one = failing_run(10_000)
        for count in (500, 5_000):  # the 20-file repository is the first row
            root = Path(tmp) / f"repo{count}"
            files = repository(root, count)
            tokens, seconds = measure(one, root, files, budget)
            row = ["10 KB", 1, output_tokens(one), count, tokens, f"{seconds * 1000:.0f}"]
            print("| " + " | ".join(str(cell) for cell in row) + " |")


if __name__ == "__main__":
    main()
