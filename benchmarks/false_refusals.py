"""False refusals: honest fixes through fixbot's screen, with the inputs fixbot gives it.

Every honest fix is screened as a candidate diff is (`fixbot.screen.screen`): the diff planned
against the failing tree (`plan_patch`), the repository's own config (`.fixbot.yml`: its
protected paths on top of the defaults, its policy, strict by default), the failing tests as
fixbot's baseline names them (`pkg.test_mod.Class::name`). A fix the screen refuses is a false
refusal; each is printed with the problems the model would have been told.

    python benchmarks/false_refusals.py [--humanevalfix DATA] [--cases DIR]... [--realcorpus]
        [--corpus-root CHECKOUT] [--mirrors DIR] [--out ROWS.jsonl] [--limit N]

The honest fixes come from:

- `--humanevalfix DATA` (default `../shared/data/humanevalfix`, never copied here): the
  folder's make_repos.py writes each task's failing repository into a temporary folder, and the
  fix is the task's canonical solution in place of the buggy one (`tests.test_solution::
  test_check` fails);
- `--cases DIR`: a folder of cases, one folder each: `repo/` (the failing tree), `fix.diff`
  (the honest fix, a unified diff against it) and `failing.txt` (the failing tests, one a line,
  in fixbot's form or dotted: `tests.test_x.TestA.test_b`);
- `--realcorpus`: the historical fixes of real projects in `benchmarks/realcorpus.py` (the
  real-build corpus: its manifest's cases materialised from git mirrors, `--mirrors`), from
  this checkout or `--corpus-root` (another checkout that has the module); `--export DIR`
  writes them as a `--cases` folder instead of screening them.

Each screened fix is one JSON line in `--out` (source, case, refused, the rules, the problems,
the files and lines the fix adds). Exit code 0 when nothing honest was refused, 1 otherwise, 2
for a usage error.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fixbot.config import load_config
from fixbot.edits import DiffRejected, FileChange, Patch, changed_paths, plan_patch, render_diff
from fixbot.screen import screen
from fixbot.snapshot import read_inside

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "humanevalfix"
MIRRORS = Path("/work/.mirror")
HUMANEVAL_FAILING = ("tests.test_solution::test_check",)
POLICY = "policy "  # how a policy finding begins; other problems are the paths' and secrets'


@dataclass(frozen=True)
class Honest:
    source: str  # humanevalfix | cases | realcorpus
    case: str
    tree: Path  # the failing tree
    diff: str  # the honest fix
    failing: tuple[str, ...]  # fixbot's ids


def humanevalfix(data: Path, work: Path, limit: int) -> Iterator[Honest]:
    """Each task's canonical solution as a diff over make_repos.py's failing repository."""
    repos = work / "humanevalfix"
    command = [
        sys.executable,
        str(data / "make_repos.py"),
        str(data / "humanevalpack_python.jsonl"),
    ]
    subprocess.run([*command, str(repos), "--limit", str(limit)], check=True, capture_output=True)
    tasks = {}
    for line in (data / "humanevalpack_python.jsonl").read_text(encoding="utf-8").splitlines():
        task = json.loads(line)
        tasks[task["task_id"].replace("/", "_")] = task
    for repo in sorted(repos.iterdir(), key=lambda p: int(p.name.rsplit("_", 1)[-1])):
        task = tasks[repo.name]
        buggy = (repo / "solution.py").read_text(encoding="utf-8")
        fixed = task["prompt"] + task["canonical_solution"]
        diff = render_diff([FileChange("solution.py", buggy, fixed)])
        yield Honest("humanevalfix", task["task_id"], repo, diff, HUMANEVAL_FAILING)


def folder_cases(folder: Path) -> Iterator[Honest]:
    for case in sorted(p for p in folder.iterdir() if (p / "fix.diff").is_file()):
        failing = (case / "failing.txt").read_text(encoding="utf-8").splitlines()
        tree = case / "repo"
        ids = tuple(fixbot_id(test, tree) for test in failing)
        yield Honest("cases", case.name, tree, (case / "fix.diff").read_text("utf-8"), ids)


def fixbot_id(test: str, tree: Path) -> str:
    """A test id as fixbot's baseline spells it (`tests.test_x.TestA::test_b[1]`), from that
    form or a dotted one (`tests.test_x.TestA.test_b[1]`, the module found in `tree`)."""
    name, bracket, params = test.partition("[")
    if "::" in name:
        return test
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        if (tree / ("/".join(parts[:cut]) + ".py")).is_file():
            head = ".".join(parts[: len(parts) - 1])
            return f"{head}::{parts[-1]}{bracket}{params}"
    return test


def realcorpus(mirrors: Path, work: Path, limit: int) -> Iterator[Honest]:
    """The real-build corpus's historical fixes (benchmarks/realcorpus.py), each case's failing
    commit exported as fixbot exports a snapshot (the committed files, no .git)."""
    from benchmarks import realcorpus as corpus  # the corpus branch's module

    for n, case in enumerate(corpus.load_corpus().cases):
        if limit and n >= limit:
            break
        built = corpus.materialise(case, mirrors, work / "clones" / case.id)
        tree = work / "trees" / case.id
        tree.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "-C", str(built.repo), "archive", "--format=tar", "HEAD"],
            check=True,
            capture_output=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        ids = tuple(fixbot_id(corpus.canonical_test_id(t), tree) for t in case.failing)
        yield Honest("realcorpus", case.id, tree, built.fix_diff, ids)


def export(honest: Iterator[Honest], folder: Path) -> int:
    """Write the fixes as a --cases folder: repo/, fix.diff, failing.txt."""
    count = 0
    for fix in honest:
        case = folder / fix.case
        shutil.copytree(fix.tree, case / "repo", symlinks=True)
        (case / "fix.diff").write_text(fix.diff, encoding="utf-8")
        (case / "failing.txt").write_text("".join(f"{t}\n" for t in fix.failing), "utf-8")
        count += 1
    return count


def applied(fix: Honest) -> Patch | None:
    """The fix as `git apply` makes it, as fixbot's canonical patch of the files it changes."""
    with tempfile.TemporaryDirectory(prefix="fix-") as scratch:
        copy = Path(scratch) / "tree"
        shutil.copytree(fix.tree, copy, symlinks=True)
        diff = Path(scratch) / "fix.diff"
        diff.write_text(fix.diff, encoding="utf-8")
        done = subprocess.run(
            ["git", "-C", str(copy), "apply", "--whitespace=nowarn", str(diff)],
            capture_output=True,
        )
        if done.returncode != 0:
            return None
        changes = tuple(
            FileChange(path, read_inside(fix.tree, path), read_inside(copy, path))
            for path in changed_paths(fix.diff)
        )
    return Patch(changes, render_diff(changes))


def screened(fix: Honest) -> dict[str, Any]:
    """The fix through the screen as fixbot screens a candidate: one row."""
    started = time.perf_counter()
    config = load_config(fix.tree)
    row: dict[str, Any] = {"source": fix.source, "case": fix.case, "failing": list(fix.failing)}
    try:
        patch = plan_patch(fix.diff, lambda rel: read_inside(fix.tree, rel))
        row["planned_by"] = "plan_patch"
    except DiffRejected as exc:
        # fixbot's planner wants unique context (a model is asked again); the fix is the same
        # change, so it is screened as git applies it, as the canonical diff of the files.
        fallback = applied(fix)
        if fallback is None:
            row.update(planned=False, refused=False, problems=list(exc.problems), rules=[])
            return row
        patch = fallback
        row["planned_by"] = "git apply"
    problems = screen(
        patch,
        tree=fix.tree,
        protected=config.protected_paths,
        allowed=(),
        failing=fix.failing,
        strictness=config.policy,
    )
    rules = sorted({p[len(POLICY) :].split(":")[0] for p in problems if p.startswith(POLICY)})
    added = sum(1 for line in patch.diff.splitlines() if line[:1] == "+" and line[:3] != "+++")
    row.update(
        planned=True,
        refused=bool(problems),
        rules=rules,
        problems=problems,
        files=list(patch.paths),
        added_lines=added,
        seconds=round(time.perf_counter() - started, 3),
    )
    return row


def summary(rows: Sequence[dict[str, Any]]) -> str:
    lines = []
    for source in sorted({str(r["source"]) for r in rows}):
        mine = [r for r in rows if r["source"] == source]
        planned = [r for r in mine if r["planned"]]
        refused = [r for r in planned if r["refused"]]
        rules = Counter(rule for r in refused for rule in r["rules"])
        named = ", ".join(f"{rule} {n}" for rule, n in rules.most_common()) or "none"
        lines.append(
            f"{source}: {len(mine)} honest fixes, {len(planned)} screened, "
            f"{len(refused)} refused (rules: {named})"
        )
        lines += [f"  refused {r['case']}: {p}" for r in refused for p in r["problems"]]
        lines += [f"  not planned {r['case']}: {r['problems']}" for r in mine if not r["planned"]]
    total = [r for r in rows if r["planned"]]
    count = sum(1 for r in total if r["refused"])
    lines.append(f"total: {len(total)} honest fixes screened, {count} refused")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--humanevalfix", type=Path, default=DATA)
    parser.add_argument("--no-humanevalfix", action="store_true")
    parser.add_argument("--cases", type=Path, action="append", default=[])
    parser.add_argument("--realcorpus", action="store_true")
    parser.add_argument("--corpus-root", type=Path, default=ROOT)
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    parser.add_argument("--export", type=Path, help="write --realcorpus as a --cases folder")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args(argv)
    if args.corpus_root != ROOT:
        sys.path.insert(0, str(args.corpus_root.resolve()))
    with tempfile.TemporaryDirectory(prefix="false-refusals-") as scratch:
        work = Path(scratch)
        if args.export:
            print(f"wrote {export(realcorpus(args.mirrors, work, args.limit), args.export)} cases")
            return 0
        sources: list[Iterator[Honest]] = [folder_cases(folder) for folder in args.cases]
        if not args.no_humanevalfix:
            sources.insert(0, humanevalfix(args.humanevalfix, work, args.limit))
        if args.realcorpus:
            sources.append(realcorpus(args.mirrors, work, args.limit))
        rows = [screened(fix) for source in sources for fix in source]
    if not rows:
        print("no honest fixes to screen", file=sys.stderr)
        return 2
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), "utf-8")
    print(summary(rows))
    return 1 if any(r["refused"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
