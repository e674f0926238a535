"""The fix-rate benchmark's two corpora and their fixed splits.

Both corpora are built, at run time and into a temporary folder, from the HumanEvalFix data in
`../shared/data/humanevalfix/` (data from elsewhere: nothing of it is ever written into this
repository, rows included). Each task is one small failing git repository.

* `humanevalfix`: the repositories the data's own `make_repos.py` writes (`solution.py` holds
  the imports, the signature, the docstring and the buggy body; `tests/test_solution.py` the
  test), with one correction: `make_repos.py` imports only the entry point into the test, so
  the three tests that also call a helper of the prompt (Python/32 `poly`, Python/38
  `encode_cyclic`, Python/50 `encode_shift`) fail with a NameError whatever the fix. The test's
  import line names those helpers too (`repair_imports`).
* `movedspec`: the same bugs in another layout, where the specification does not sit in a
  docstring above the buggy body. The entry point's docstring is moved, round-robin by task
  number: `comment` (n % 3 == 0) into a `#` comment block above the `def`, `module` (n % 3 ==
  1) into the module docstring, `tests` (n % 3 == 2) nowhere: the tests alone specify it. The
  code lives in `app/core.py` (with an empty `app/__init__.py`), between helper code of our own
  (`SURROUNDINGS`, chosen by (n // 3) % 4) so that the function is not the whole file; the test
  is `tests/test_core.py`. The prompt's other functions keep their own docstrings.

The splits are fixed here, by a rule, and never change: `DESIGN` is tasks 0-39 (tune on them),
`HELDOUT` is every second task from 40 (40, 42, ..., 162: 62 tasks, only for reporting), the
odd tasks 41-163 are held back unseen for a later held-out report. Both corpora use the same
rule on the HumanEvalFix task numbers.

    python benchmarks/corpora.py list [--split design|heldout]
    python benchmarks/corpora.py build --corpus movedspec --out DIR [--tasks 0-5]
    python benchmarks/corpora.py verify [--corpus humanevalfix|movedspec] [--split ...]

`verify` runs the benchmark's judge (benchmarks/judge.py) on every task twice: the buggy code
as built must fail, the canonical solution (as a diff, as any candidate) must pass.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "humanevalfix"
JSONL = "humanevalpack_python.jsonl"
CORPORA = ("humanevalfix", "movedspec")
TASK_COUNT = 164

# --- the splits: fixed by these rules, never edited afterwards ---
DESIGN: tuple[int, ...] = tuple(range(0, 40))
HELDOUT: tuple[int, ...] = tuple(range(40, TASK_COUNT, 2))
RESERVED: tuple[int, ...] = tuple(range(41, TASK_COUNT, 2))  # unseen, for a later report
SPLITS: dict[str, tuple[int, ...]] = {"design": DESIGN, "heldout": HELDOUT}

LAYOUTS = ("comment", "module", "tests")  # movedspec: where task n's specification went
GIT = ("git", "-c", "user.name=corpus", "-c", "user.email=corpus@example.invalid")


@dataclass(frozen=True)
class Task:
    corpus: str
    number: int
    repo: Path  # a pristine, committed repository: never run in, only copied
    source: str  # the file under repair, relative to the repository
    entry_point: str
    layout: str  # docstring | comment | module | tests
    canonical: str  # the file under repair with the canonical body (verify only)

    @property
    def id(self) -> str:
        return f"Python/{self.number}"

    @property
    def slug(self) -> str:
        return f"Python_{self.number}"


def parse_tasks(spec: str) -> list[int]:
    """`0-39`, `0,4,8`, `0-3,10`, `0-163:4` (every fourth) -> sorted task numbers."""
    chosen: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        span, colon, step = part.partition(":")
        first, dash, last = span.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()) or (colon and not step.isdigit()):
            raise argparse.ArgumentTypeError(f"not a task number or range: {part!r}")
        low, high = int(first), int(last) if dash else int(first)
        if low > high or (colon and int(step) < 1):
            raise argparse.ArgumentTypeError(f"empty range: {part!r}")
        chosen.update(range(low, high + 1, int(step) if colon else 1))
    if not chosen:
        raise argparse.ArgumentTypeError("no tasks")
    return sorted(chosen)


def split_of(number: int) -> str:
    for name, numbers in SPLITS.items():
        if number in numbers:
            return name
    return "reserved"


def read_data(data: Path) -> list[dict[str, str]]:
    with (data / JSONL).open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def commit_all(repo: Path, message: str) -> None:
    subprocess.run([*GIT, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(repo), "commit", "-qm", message], check=True)


# --- humanevalfix: make_repos.py's repositories, the test's import corrected ---


def helper_names(prompt: str, entry_point: str, test: str) -> list[str]:
    """The prompt's other top-level functions that the test calls."""
    names = [
        node.name
        for node in ast.parse(prompt).body
        if isinstance(node, ast.FunctionDef) and node.name != entry_point
    ]
    return [name for name in names if re.search(rf"\b{re.escape(name)}\b", test)]


def repair_imports(repo: Path, test_file: str, entry_point: str, helpers: Sequence[str]) -> bool:
    """`from solution import ENTRY` -> `from solution import ENTRY, HELPER...`; True if changed."""
    if not helpers:
        return False
    path = repo / test_file
    text = path.read_text(encoding="utf-8")
    module = Path(test_file).stem.removeprefix("test_")
    module = "solution" if module == "solution" else f"app.{module}"
    old = f"from {module} import {entry_point}\n"
    if not text.startswith(old):
        raise SystemExit(f"corpora: {path} does not start with {old!r}")
    new = f"from {module} import {', '.join([entry_point, *helpers])}\n"
    path.write_text(new + text[len(old) :], encoding="utf-8")
    return True


def build_humanevalfix(data: Path, dest: Path, numbers: Sequence[int]) -> list[Task]:
    argv = [sys.executable, str(data / "make_repos.py"), str(data / JSONL), str(dest)]
    argv += ["--limit", str(max(numbers) + 1)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    records = read_data(data)
    tasks = []
    for n in numbers:
        record, repo = records[n], dest / f"Python_{n}"
        if not (repo / "solution.py").is_file():
            raise SystemExit(f"corpora: make_repos.py wrote no repository for Python/{n}")
        entry = record["entry_point"]
        helpers = helper_names(record["prompt"], entry, record["test"])
        if repair_imports(repo, "tests/test_solution.py", entry, helpers):
            commit_all(repo, "corpus: the test imports the helpers it calls")
        canonical = record["prompt"] + record["canonical_solution"]
        tasks.append(Task("humanevalfix", n, repo, "solution.py", entry, "docstring", canonical))
    return tasks


# --- movedspec: the specification moved out of the docstring ---

# Helper code of our own around the task's functions, (before, after); ENTRY is the entry point.
SURROUNDINGS: tuple[tuple[str, str], ...] = (
    (
        'DEFAULT_ENCODING = "utf-8"\n\n\n'
        "def read_lines(path, encoding=DEFAULT_ENCODING):\n"
        '    """The lines of a text file, without their line endings."""\n'
        "    with open(path, encoding=encoding) as handle:\n"
        "        return handle.read().splitlines()\n",
        "",
    ),
    (
        "",
        "def format_result(value):\n"
        '    """A result as the command line prints it: repr for strings, str for the rest."""\n'
        "    return repr(value) if isinstance(value, str) else str(value)\n\n\n"
        'if __name__ == "__main__":\n'
        "    import json\n"
        "    import sys\n\n"
        "    print(format_result(ENTRY(*json.loads(sys.argv[1]))))\n",
    ),
    (
        "def clamp(value, low, high):\n"
        '    """`value`, kept within [low, high]."""\n'
        "    return max(low, min(high, value))\n",
        "def pairwise_sums(values):\n"
        '    """The sums of neighbouring items: [1, 2, 4] -> [3, 6]."""\n'
        "    return [a + b for a, b in zip(values, values[1:])]\n",
    ),
    (
        '__version__ = "1.4.2"\n\n'
        "_CACHE = {}\n\n\n"
        "def cached(key, compute):\n"
        '    """compute() once per key, then the remembered value."""\n'
        "    if key not in _CACHE:\n"
        "        _CACHE[key] = compute()\n"
        "    return _CACHE[key]\n",
        "def reset_cache():\n"
        '    """Forget every value cached() remembered."""\n'
        "    _CACHE.clear()\n",
    ),
)
_OWN_NAMES = frozenset(
    {"DEFAULT_ENCODING", "read_lines", "format_result", "clamp", "pairwise_sums"}
    | {"__version__", "_CACHE", "cached", "reset_cache"}
)


def layout_of(number: int) -> str:
    return LAYOUTS[number % len(LAYOUTS)]


def _docstring(function: ast.FunctionDef) -> ast.Expr:
    """The function's docstring statement: its first string statement (Python/115 has an import
    before it, so it is no docstring to Python, but it is the specification)."""
    for statement in function.body:
        value = statement.value if isinstance(statement, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return statement  # type: ignore[return-value]
    raise ValueError(f"{function.name} has no docstring")


def _blocks(*parts: str) -> str:
    """Non-empty parts, each stripped, two blank lines apart, one newline at the end."""
    kept = [part.strip("\n") for part in parts if part.strip()]
    return "\n\n\n".join(kept) + "\n"


def movedspec_source(number: int, prompt: str, body: str, entry_point: str) -> str:
    """Task `number`'s file in the movedspec layout, with `body` as the entry point's body."""
    code = prompt + body
    tree = ast.parse(code)
    clash = _OWN_NAMES & {
        n.id if isinstance(n, ast.Name) else n.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Name | ast.FunctionDef | ast.ClassDef)
    }
    if clash:
        raise ValueError(f"Python/{number} already uses {sorted(clash)}")
    function = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point
    )
    doc = _docstring(function)
    spec = inspect.cleandoc(str(doc.value.value))  # type: ignore[attr-defined]
    lines = code.splitlines()
    assert doc.end_lineno is not None
    without = lines[: doc.lineno - 1] + lines[doc.end_lineno :]
    # The imports at the top stay at the top; the helpers go after them.
    first_code = next(
        (s.lineno for s in tree.body if not isinstance(s, ast.Import | ast.ImportFrom)),
        function.lineno,
    )
    imports = "\n".join(without[: first_code - 1])
    rest = without[first_code - 1 :]
    def_at = function.lineno - first_code  # decorators: none in HumanEvalFix
    layout = layout_of(number)
    if layout == "comment":
        comment = [f"# {line}".rstrip() for line in spec.splitlines()]
        rest = rest[:def_at] + comment + rest[def_at:]
    module_doc = ""
    if layout == "module":
        text = spec.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
        module_doc = f'"""What `{entry_point}` does.\n\n{text}\n"""\n'
    before, after = SURROUNDINGS[(number // len(LAYOUTS)) % len(SURROUNDINGS)]
    functions = "\n".join(rest).strip("\n")
    head = "\n\n".join(part.strip("\n") for part in (module_doc, imports) if part.strip())
    source = _blocks(
        head,
        before,
        functions,
        after.replace("ENTRY", entry_point),
    )
    ast.parse(source)  # a generator bug must not become a task's bug
    return source


def build_movedspec(data: Path, dest: Path, numbers: Sequence[int]) -> list[Task]:
    records = read_data(data)
    tasks = []
    for n in numbers:
        record = records[n]
        entry = record["entry_point"]
        repo = dest / f"Python_{n}"
        (repo / "app").mkdir(parents=True)
        (repo / "tests").mkdir()
        (repo / "app" / "__init__.py").write_text("", encoding="utf-8")
        source = movedspec_source(n, record["prompt"], record["buggy_solution"], entry)
        (repo / "app" / "core.py").write_text(source, encoding="utf-8")
        checks = "\n".join(
            line for line in record["test"].splitlines() if not line.startswith("check(")
        )
        names = [entry, *helper_names(record["prompt"], entry, record["test"])]
        (repo / "tests" / "test_core.py").write_text(
            f"from app.core import {', '.join(names)}\n{checks}\n\n"
            f"def test_check():\n    check({entry})\n",
            encoding="utf-8",
        )
        (repo / "pyproject.toml").write_text(
            '[tool.pytest.ini_options]\npythonpath = ["."]\n', encoding="utf-8"
        )
        (repo / ".fixbot.yml").write_text("test_command: python -m pytest -q\n", encoding="utf-8")
        subprocess.run([*GIT, "-C", str(repo), "init", "-q"], check=True)
        commit_all(repo, "failing build")
        canonical = movedspec_source(n, record["prompt"], record["canonical_solution"], entry)
        tasks.append(Task("movedspec", n, repo, "app/core.py", entry, layout_of(n), canonical))
    return tasks


def build(corpus: str, data: Path, dest: Path, numbers: Sequence[int]) -> list[Task]:
    dest.mkdir(parents=True, exist_ok=True)
    if corpus == "humanevalfix":
        return build_humanevalfix(data, dest, numbers)
    if corpus == "movedspec":
        return build_movedspec(data, dest, numbers)
    raise ValueError(f"no corpus {corpus!r}")


# --- the command line ---


def _verify(corpus: str, data: Path, numbers: Sequence[int]) -> int:
    import tempfile

    from judge import Judge, file_diff

    judge = Judge()
    broken = []
    with tempfile.TemporaryDirectory(prefix="corpora-verify-") as scratch:
        for task in build(corpus, data, Path(scratch), numbers):
            buggy = judge.baseline(task)
            good = judge.judge(task, file_diff(task, task.canonical), expected=buggy.collected)
            ok = not buggy.fixed and good.fixed
            if not ok:
                broken.append(task.id)
            print(
                f"{corpus} {task.id} ({task.layout}): buggy {buggy.verdict}, "
                f"canonical {good.verdict}{'' if ok else '  <- BROKEN'}",
                flush=True,
            )
    print(
        f"{corpus}: {len(numbers) - len(broken)} of {len(numbers)} tasks sound; broken: "
        f"{', '.join(broken) or 'none'}"
    )
    return 1 if broken else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("command", choices=["list", "build", "verify"])
    parser.add_argument("--corpus", choices=CORPORA, default="humanevalfix")
    parser.add_argument("--split", choices=[*SPLITS, "all"], default="all")
    parser.add_argument("--tasks", type=parse_tasks, help="instead of --split, e.g. 0-5")
    parser.add_argument("--out", type=Path, help="build: where the repositories go")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    numbers = args.tasks or (
        list(range(TASK_COUNT)) if args.split == "all" else list(SPLITS[args.split])
    )
    if args.command == "list":
        for name in SPLITS if args.split == "all" else [args.split]:
            chosen = SPLITS[name]
            print(f"{name} ({len(chosen)}): {', '.join(str(n) for n in chosen)}")
        return 0
    if args.command == "build":
        if args.out is None:
            parser.error("build needs --out")
        for task in build(args.corpus, args.data, args.out, numbers):
            print(f"{task.id} ({task.layout}): {task.repo}")
        return 0
    return _verify(args.corpus, args.data, numbers)


if __name__ == "__main__":
    raise SystemExit(main())
