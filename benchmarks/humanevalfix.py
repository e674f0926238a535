"""`fixbot bench` over HumanEvalFix (Python): small functions, each with one bug and its test.

The data is not part of this project: it lives in ../shared/data/humanevalfix/ (from elsewhere,
never copied here). This script runs that folder's make_repos.py into a temporary folder (or
--corpus DIR), lays the measured settings over each repository's .fixbot.yml, and runs
`fixbot bench` on the folder in-process, for measuring a real model, e.g. the local one:

    ../shared/tools/local-llm start
    python benchmarks/humanevalfix.py --model fixbot-local \\
        --base-url http://127.0.0.1:8011/v1 [--limit N] [--max-iterations 4] [--json] [--out DIR]

`--max-iterations 1` measures a single attempt; the loop's default is 4. `--reflection` adds
the diagnosis call before each retry; `--parallel K` asks for K candidates at once after the
first failed attempt; `--start S` skips the first S tasks. The measured settings: one baseline
and one final run (these tests are deterministic), the ruff and mypy gates off (the task is the
test) and a 300 s per-call timeout (a small model on 2 cores is slow); `--fixbot-defaults`
keeps fixbot's own defaults instead. Each entry's evidence.json (every attempt, its reply, why
its diff did or did not apply) is kept under --out ENTRY/ when given. Exit code: the bench's
(0 when it ran, 2 for a usage error).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from fixbot import cli
from fixbot.edits import DiffRejected
from fixbot.edits.fences import extract_diff
from fixbot.edits.reply import parse_edits

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "humanevalfix"
MEASURED = """
# benchmarks/humanevalfix.py: deterministic tests, and the test is the whole task
verification:
  baseline_runs: 1
  final_runs: 1
gates:
  lint: false
  types: false
# a small model on 2 CPU cores takes up to ~150 s for the longest reply it may write (2,048
# tokens): a shorter per-call timeout retries while the server is still busy with the first
request_timeout_seconds: 300
"""


def make_corpus(
    data: Path,
    corpus: Path,
    limit: int,
    fixbot_defaults: bool,
    reflection: bool = False,
    parallel: int = 1,
    start: int = 0,
) -> int:
    """HumanEvalFix's repositories under `corpus`, one bench entry each; how many."""
    command = [sys.executable, str(data / "make_repos.py")]
    command += [str(data / "humanevalpack_python.jsonl"), str(corpus)]
    if limit:
        command += ["--limit", str(start + limit)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    entries = sorted(
        (p for p in corpus.iterdir() if (p / ".fixbot.yml").is_file()), key=_task_number
    )
    for entry in entries[:start]:
        shutil.rmtree(entry)
    for entry in entries[start:]:
        with (entry / ".fixbot.yml").open("a", encoding="utf-8") as config:
            config.write("" if fixbot_defaults else MEASURED)
            config.write("reflection: true\n" if reflection else "")
            config.write(f"parallel: {{candidates: {parallel}}}\n" if parallel > 1 else "")
    return len(entries) - start


def _task_number(entry: Path) -> tuple[int, str]:
    """Python_10 after Python_9."""
    number = entry.name.rpartition("_")[2]
    return (int(number), entry.name) if number.isdigit() else (-1, entry.name)


def reply_shape(reply: str) -> str:
    """What the model sent: a unified diff, SEARCH/REPLACE blocks, a fenced block of Python
    definitions (naming its file or not), or no edit at all."""
    if extract_diff(reply) is not None:
        return "diff"
    if "<<<<<<< SEARCH" in reply:
        return "search/replace"
    try:
        parse_edits(reply, lambda path: "" if path.endswith(".py") else None)
    except DiffRejected:
        return "python block naming its file"
    fence = "`" * 3
    blocks = reply.split(fence)[1::2]
    if any("def " in block or "class " in block for block in blocks):
        return "python block naming no file"
    return "no edit"


def attempt_stats(out: Path) -> dict[str, Counter[str]]:
    """Across every entry's evidence.json under `out`: attempts by reply shape and outcome."""
    shapes: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    why: Counter[str] = Counter()
    for evidence in sorted(out.glob("*/evidence.json")):
        for attempt in json.loads(evidence.read_text()).get("attempts", []):
            if attempt["number"] == 0:
                continue  # ruff's own attempt, not the model's
            shapes[reply_shape(attempt["reply"])] += 1
            problems = attempt["problems"]
            if attempt["verdict"] == "rejected":
                first = problems[0] if problems else "rejected"
                outcomes["not applied"] += 1
                why[_reason(first)] += 1
            else:
                outcomes[f"applied, {attempt['verdict']}"] += 1
    return {"reply shape": shapes, "outcome": outcomes, "why not applied": why}


def _reason(problem: str) -> str:
    for marker, label in (
        ("no ```diff block", "no diff or edit in the reply"),
        ("change nothing", "the code sent back unchanged"),
        ("changes nothing", "the code sent back unchanged"),
        ("does not match", "a hunk's lines are not in the file"),
        ("not found", "a hunk's lines are not in the file"),
        ("ambiguous", "a hunk matches more than one place"),
        ("protected", "touches a protected path"),
        ("policy", "refused by the cheat screening"),
        ("does not apply", "does not apply (other)"),
    ):
        if marker in problem:
            return label
    return problem[:60]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="model name, e.g. fixbot-local")
    parser.add_argument("--base-url", required=True, help="OpenAI-compatible endpoint")
    parser.add_argument("--limit", type=int, default=0, help="N tasks (default: all)")
    parser.add_argument("--start", type=int, default=0, help="skip the first S tasks")
    parser.add_argument("--max-iterations", type=int, help="attempts per task (default: config)")
    parser.add_argument("--sandbox", choices=["auto", "docker", "bwrap"], default="auto")
    parser.add_argument("--out", type=Path, help="keep each entry's outputs under OUT/ENTRY/")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--corpus", type=Path, help="write the corpus here (default: a temp dir)")
    parser.add_argument("--data", type=Path, default=DATA, help=f"default: {DATA}")
    parser.add_argument(
        "--fixbot-defaults", action="store_true", help="keep fixbot's default settings"
    )
    parser.add_argument(
        "--reflection", action="store_true", help="a diagnosis call before each retry"
    )
    parser.add_argument(
        "--parallel", type=int, default=1, help="candidates at once after the first failure"
    )
    args = parser.parse_args(argv)
    if not (args.data / "make_repos.py").is_file():
        parser.error(f"no make_repos.py in {args.data}")
    if args.corpus is not None and args.corpus.exists() and any(args.corpus.iterdir()):
        parser.error(f"--corpus {args.corpus} is not empty")
    with tempfile.TemporaryDirectory(prefix="humanevalfix-") as scratch:
        corpus = args.corpus or Path(scratch) / "corpus"
        count = make_corpus(
            args.data,
            corpus,
            args.limit,
            args.fixbot_defaults,
            reflection=args.reflection,
            parallel=args.parallel,
            start=args.start,
        )
        print(f"humanevalfix: {count} entries in {corpus}", file=sys.stderr)
        bench = ["bench", str(corpus), "--model", args.model, "--base-url", args.base_url]
        bench += ["--sandbox", args.sandbox]
        if args.max_iterations is not None:
            bench += ["--max-iterations", str(args.max_iterations)]
        if args.out is not None:
            bench += ["--out", str(args.out)]
        if args.json:
            bench += ["--json"]
        code = cli.main(bench)
        if args.out is not None and not args.json:
            for title, counts in attempt_stats(args.out).items():
                listed = ", ".join(f"{name}: {n}" for name, n in counts.most_common()) or "-"
                print(f"model attempts, {title}: {listed}")
        return code


if __name__ == "__main__":
    raise SystemExit(main())
