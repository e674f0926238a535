"""The real-build corpus: historical bug fixes of real projects, as the failing commits they fixed.

The repository holds only the manifest (`benchmarks/realbuilds/cases.toml`); the projects'
code comes from git mirrors at benchmark time, never copied here. A case is one fix commit of
one project, split in two halves: its source files and its tests. The failing commit is the fix
commit with the source half reverted to the parent's version (the tests stay as the fix commit
has them), plus a `.fixbot.yml` with the project's own CI setup and test command, committed.
The historical fix is then the diff from the failing commit back to the fix commit's source
files: the honest change a model should find.

    load_corpus(path)                      the manifest -> Corpus (projects, cases)
    mirror_of(project, mirrors)            the project's git mirror, or MirrorMissing saying how
                                           to get it
    materialise(case, mirrors, dest)       a clone at `dest` whose HEAD is the failing commit,
                                           and the historical fix as a unified diff
    prepare_venv(repo, venv, case)         a plain virtualenv built with the case's setup
    run_suite(repo, venv, case)            the case's test command in it: seconds, failing tests
    canonical_test_id(test)                one spelling for pytest node ids, JUnit-style ids and
                                           unittest ids, so that lists from each compare

Other benchmarks use it as a library (`sys.path` holding this checkout's root):

    from benchmarks.realcorpus import load_corpus, materialise
    corpus = load_corpus()
    built = materialise(corpus.case("packaging-1"), Path("/work/.mirror"), Path(tmp) / "repo")
    built.repo, built.failing_commit, built.fix_diff

`Case.split` is "dev" or "heldout": the held-out part (every third case in the manifest's
order, fixed before any model ran on it) is for measuring a real model's fix rate on cases
that no prompt or setting was tuned on. Nothing here imports fixbot.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "benchmarks" / "realbuilds" / "cases.toml"
DEFAULT_MIRRORS = Path("/work/.mirror")
SPLITS = ("dev", "heldout")
# The manifest's batches: `first`, the corpus as first written; `small`, the fixes of at most
# 12 changed lines in one source file of at most 800 lines; `tiny`, the fixes of at most 6
# changed lines in one source file of any size; `mini`, the fixes of at most 6 changed lines in
# one source file of at most 400 lines, from projects of small modules; the last three chosen
# by a rule (cases.toml says it)
BATCHES = ("first", "small", "tiny", "mini")
KINDS = ("pytest", "unittest")
CONFIG = ".fixbot.yml"
# Each process a suite starts may map this much memory at most (prlimit --as): a runaway test
# (an infinite iterator drained into a list: more-itertools fb89af0 without its fix) fails with
# MemoryError instead of taking the machine's memory, and every other process on it, with it.
MEMORY_CAP_BYTES = 8 << 30
# The failing commit is the same commit (the same SHA) every time a case is materialised.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "realbuilds",
    "GIT_AUTHOR_EMAIL": "realbuilds@invalid",
    "GIT_COMMITTER_NAME": "realbuilds",
    "GIT_COMMITTER_EMAIL": "realbuilds@invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_UNITTEST_FAILURE = re.compile(r"^(?:FAIL|ERROR): (\S+) \(([^)\s]+)\)", re.M)
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)


class CorpusError(Exception):
    """The manifest, a mirror or a case cannot be used; the message says why and what to do."""


class MirrorMissing(CorpusError):
    pass


# --- the manifest ---


@dataclass(frozen=True)
class Project:
    name: str
    github: str  # owner/name
    mirror: str  # its folder under the mirrors folder (the fetch tool's owner+name)
    kind: str  # how its test command's results are read: pytest or unittest
    setup_command: tuple[str, ...]
    test_command: str
    ci: str  # where the setup and the test command come from in the project's CI
    properties: tuple[str, ...]  # what this project brings to the corpus
    # tests flaky upstream (canonical ids or their module/class/function prefixes): a bare
    # check does not count them either way (fixbot gets no such list)
    flaky: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    id: str
    project: Project
    fix: str  # the fix commit (40 hex digits)
    source: tuple[str, ...]  # the fix's source half: reverted to the parent's version
    tests: tuple[str, ...]  # the fix's test half: kept as the fix commit has it
    failing: tuple[str, ...]  # the tests that fail without the source half (canonical ids)
    split: str  # dev | heldout
    batch: str  # first | small | tiny | mini
    summary: str
    setup_command: tuple[str, ...]  # the project's unless the case names its own (another era)
    test_command: str

    @property
    def kind(self) -> str:
        return self.project.kind

    def fixbot_config(self) -> str:
        """The `.fixbot.yml` the failing commit carries: the CI's setup and its test run."""
        quoted = json_string
        lines = [
            f"# realbuilds case {self.id}: {self.project.github} at {self.fix[:12]},",
            f"# its source half ({', '.join(self.source)}) reverted to the parent's version.",
            "setup_command:",
            *(f"  - {quoted(command)}" for command in self.setup_command),
            "checks:",
            "  - name: tests",
            f"    run: {quoted(self.test_command)}",
        ]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Corpus:
    path: Path
    projects: Mapping[str, Project]
    cases: tuple[Case, ...]

    def case(self, case_id: str) -> Case:
        for case in self.cases:
            if case.id == case_id:
                return case
        raise CorpusError(f"no case {case_id!r} in {self.path}")

    def select(self, spec: str) -> list[Case]:
        """`packaging-1,tomli-2`, a project's name (all its cases), `dev` or `heldout`, or
        `all`; several separated by commas."""
        chosen: list[Case] = []
        for word in (w.strip() for w in spec.split(",")):
            if not word:
                continue
            if word == "all":
                found = list(self.cases)
            elif word in SPLITS:
                found = [c for c in self.cases if c.split == word]
            elif word in self.projects:
                found = [c for c in self.cases if c.project.name == word]
            else:
                found = [self.case(word)]
            chosen += [c for c in found if c not in chosen]
        if not chosen:
            raise CorpusError(f"no cases selected by {spec!r}")
        return chosen


def json_string(text: str) -> str:
    """A YAML scalar for any text: a JSON string is one."""
    return json.dumps(text)


def load_corpus(path: Path = MANIFEST) -> Corpus:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CorpusError(f"cannot read the manifest {path}: {exc}") from exc
    projects = {name: _project(name, item) for name, item in data.get("projects", {}).items()}
    cases = tuple(_case(item, projects, path) for item in data.get("cases", []))
    ids = [c.id for c in cases]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise CorpusError(f"{path}: case ids repeated: {', '.join(repeated)}")
    return Corpus(path, projects, cases)


def _project(name: str, item: Mapping[str, Any]) -> Project:
    kind = str(item.get("kind", "pytest"))
    if kind not in KINDS:
        raise CorpusError(f"project {name}: kind {kind!r} is not one of {', '.join(KINDS)}")
    return Project(
        name=name,
        github=str(item["github"]),
        mirror=str(item.get("mirror") or str(item["github"]).replace("/", "+")),
        kind=kind,
        setup_command=tuple(item["setup_command"]),
        test_command=str(item["test_command"]),
        ci=str(item.get("ci", "")),
        properties=tuple(item.get("properties", ())),
        flaky=tuple(str(t) for t in item.get("flaky", ())),
    )


def _case(item: Mapping[str, Any], projects: Mapping[str, Project], path: Path) -> Case:
    case_id = str(item.get("id", ""))
    project = projects.get(str(item.get("project", "")))
    if project is None:
        raise CorpusError(f"{path}: case {case_id!r} names no known project")
    split = str(item.get("split", "dev"))
    if split not in SPLITS:
        raise CorpusError(f"{path}: case {case_id}: split {split!r} is not dev or heldout")
    batch = str(item.get("batch", "first"))
    if batch not in BATCHES:
        raise CorpusError(f"{path}: case {case_id}: batch {batch!r} is not {' or '.join(BATCHES)}")
    fix = str(item["fix"])
    if not re.fullmatch(r"[0-9a-f]{40}", fix):
        raise CorpusError(f"{path}: case {case_id}: fix must be a full commit SHA")
    return Case(
        id=case_id,
        project=project,
        fix=fix,
        source=tuple(item["source"]),
        tests=tuple(item.get("tests", ())),
        failing=tuple(item.get("failing", ())),
        split=split,
        batch=batch,
        summary=str(item.get("summary", "")),
        setup_command=tuple(item.get("setup_command", project.setup_command)),
        test_command=str(item.get("test_command", project.test_command)),
    )


# --- mirrors and materialising ---


def mirror_of(project: Project, mirrors: Path) -> Path:
    """The project's git directory under `mirrors`: MIRRORS/<owner+name>/repo (what the fetch
    tool brings), or MIRRORS/<owner+name> itself."""
    for candidate in (mirrors / project.mirror / "repo", mirrors / project.mirror):
        if _is_git_dir(candidate):
            return candidate
    raise MirrorMissing(
        f"no git mirror of {project.github} under {mirrors} (looked for "
        f"{mirrors / project.mirror / 'repo'}): bring it with the fetch tool "
        f"(`github:{project.github}`), or `git clone --mirror "
        f"https://github.com/{project.github} {mirrors / project.mirror / 'repo'}`; "
        "another folder of mirrors is named with --mirrors"
    )


def _is_git_dir(path: Path) -> bool:
    if not path.is_dir():
        return False
    done = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--git-dir"], capture_output=True, text=True
    )
    return done.returncode == 0


def _has_commit(repo: Path, commit: str) -> bool:
    probe = ["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"]
    return subprocess.run(probe, capture_output=True).returncode == 0


def changed_lines(fix_diff: str, path: str) -> list[tuple[int, int]]:
    """(first line, count) in the old file of each run of changed lines of `fix_diff` on
    `path`: removed lines, or (the line it goes before, 0) for a pure insertion."""
    spans: list[tuple[int, int]] = []
    current, old, start, count = "", 0, 0, 0
    for line in [*fix_diff.splitlines(), " "]:
        hunk = re.match(r"^@@ -(\d+)(?:,(\d+))? ", line)
        if start and (hunk or line.startswith((" ", "diff --git "))):
            spans.append((start, count))
            start, count = 0, 0
        if line.startswith("diff --git "):
            current, old = "", 0
        elif line.startswith("--- ") and not old:
            current = line.removeprefix("--- ").removeprefix("a/")
        elif hunk:
            # `-N,0` (nothing removed) means the insertion goes after line N
            old = int(hunk.group(1)) + (1 if hunk.group(2) == "0" else 0)
        elif old and current == path and line.startswith(("-", "+")):
            start = start or old
            if line.startswith("-"):
                count, old = count + 1, old + 1
        elif old and line.startswith(" "):
            old += 1
    return spans


def fix_lines_shown(fix_diff: str, old: Mapping[str, str], request: str) -> tuple[int, int]:
    """(how many runs of the lines a fix changes `request` shows, how many runs there are): a
    run is shown when each of its removed lines, or for an insertion the line it goes before,
    is a line of the request (blank lines aside; a run of blank lines stands for the nearest
    line above it). `old`: each changed file's text before the fix."""
    lines_of_request = {line.rstrip() for line in request.splitlines()}
    shown = total = 0
    for path, text in old.items():
        lines = text.splitlines()
        for first, count in changed_lines(fix_diff, path):
            top = min(max(first, 1), len(lines))
            wanted = [line.rstrip() for line in lines[top - 1 : top - 1 + max(count, 1)]]
            wanted = [line for line in wanted if line.strip()]
            while not wanted and top > 1:
                top -= 1
                wanted = [lines[top - 1].rstrip()] if lines[top - 1].strip() else []
            total += 1
            shown += all(line in lines_of_request for line in wanted)
    return shown, total


@dataclass(frozen=True)
class Materialised:
    case: Case
    repo: Path
    failing_commit: str  # HEAD: the fix commit, its source half reverted, .fixbot.yml added
    fix_diff: str  # the historical fix: failing commit -> the fix commit's source half

    def reply(self) -> str:
        """The historical fix as a model's reply (a fenced unified diff, fixbot's contract)."""
        return (
            "The failing tests come from the code, not the tests. This change fixes it:\n\n"
            f"```diff\n{self.fix_diff}```\n"
        )


def git(repo: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if done.returncode != 0:
        raise CorpusError(f"git {' '.join(args)} in {repo}: {done.stderr.strip()[-800:]}")
    return done.stdout


def materialise(case: Case, mirrors: Path, dest: Path, config_extra: str = "") -> Materialised:
    """A clone of the case's mirror at `dest` (which must not exist), its HEAD the failing
    commit: the fix commit with `case.source` as the parent has them, and `.fixbot.yml`
    (with `config_extra`, YAML, appended: an experiment's setting, e.g. a longer timeout)."""
    mirror = mirror_of(case.project, mirrors)
    if not _has_commit(mirror, case.fix):
        raise CorpusError(
            f"the mirror {mirror} has no commit {case.fix} (case {case.id}): fetch a newer "
            f"snapshot of {case.project.github}"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["git", "clone", "--quiet", "--no-checkout", str(mirror), str(dest)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise CorpusError(f"git clone {mirror}: {done.stderr.strip()[-800:]}")
    git(dest, "checkout", "--quiet", "-B", f"realbuilds/{case.id}", case.fix)
    parent = f"{case.fix}^"
    for path in case.source:
        if git(dest, "ls-tree", "--name-only", parent, "--", path).strip():
            git(dest, "checkout", "--quiet", parent, "--", path)
        else:  # the fix added the file
            git(dest, "rm", "--quiet", "--", path)
    extra = config_extra.strip("\n")
    config = case.fixbot_config() + (f"{extra}\n" if extra else "")
    (dest / CONFIG).write_text(config, encoding="utf-8")
    git(dest, "add", "--", CONFIG, *case.source)
    message = f"realbuilds {case.id}: {case.fix[:12]} without its source half"
    git(dest, "commit", "--quiet", "--no-verify", "-m", message, env=_IDENTITY)
    failing = git(dest, "rev-parse", "HEAD").strip()
    diff = git(dest, "diff", "--no-color", "--no-ext-diff", failing, case.fix, "--", *case.source)
    if not diff.strip():
        raise CorpusError(f"case {case.id}: the source half {case.source} changes nothing")
    return Materialised(case, dest, failing, diff)


# --- a bare run: the project's own setup and test command, no fixbot ---


@dataclass(frozen=True)
class Step:
    command: str
    returncode: int
    seconds: float
    tail: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


@dataclass(frozen=True)
class SuiteRun:
    command: str
    returncode: int
    seconds: float
    timed_out: bool
    ran: int  # tests that reported an outcome (pytest's JUnit report, unittest's "Ran N")
    failing: tuple[str, ...]  # canonical ids
    tail: str


def venv_env(venv: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    return {**env, **(extra or {})}


def memory_capped(argv: Sequence[str]) -> list[str]:
    """argv under MEMORY_CAP_BYTES a process (util-linux's prlimit; as is where it is absent)."""
    if shutil.which("prlimit") is None:
        return list(argv)
    return ["prlimit", f"--as={MEMORY_CAP_BYTES}", "--", *argv]


def run_logged(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    log: Path,
    capped: bool = False,
) -> Step:
    """argv (never through a shell) to completion or `timeout`; its output appended to log;
    `capped`: under MEMORY_CAP_BYTES a process."""
    started = time.monotonic()
    with log.open("ab") as out:
        out.write(f"\n$ {shlex.join(argv)}\n".encode())
        out.flush()
        try:
            child = subprocess.Popen(
                memory_capped(argv) if capped else list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            out.write(f"{exc}\n".encode())
            return Step(shlex.join(argv), 127, 0.0, _tail(log))
        try:
            code, timed_out = child.wait(timeout=timeout), False
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)  # the whole group: pytest-xdist workers too
            code, timed_out = child.wait(), True
    seconds = time.monotonic() - started
    return Step(shlex.join(argv), code, round(seconds, 2), _tail(log), timed_out)


def _tail(log: Path, size: int = 3000) -> str:
    data = log.read_bytes()[-size:]
    return data.decode("utf-8", "replace")


def split_command(command: str) -> tuple[list[str], dict[str, str]]:
    """A setup command's words, and its leading VAR=value words as its environment."""
    words = shlex.split(command)
    env: dict[str, str] = {}
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    return words, env


def prepare_venv(
    repo: Path, venv: Path, case: Case, log: Path, timeout: float = 1200.0
) -> list[Step]:
    """A plain virtualenv at `venv` (no system packages), the case's setup commands run in it
    from the repository root, in order, until one fails."""
    steps = [run_logged([sys.executable, "-m", "venv", str(venv)], repo, os.environ, 300, log)]
    for command in case.setup_command:
        if not steps[-1].ok:
            break
        words, extra = split_command(command)
        steps.append(run_logged(words, repo, venv_env(venv, extra), timeout, log))
    return steps


def run_suite(repo: Path, venv: Path, case: Case, log: Path, timeout: float = 1800.0) -> SuiteRun:
    """The case's test command in `venv`, timed; its failing tests read from pytest's JUnit
    report (the one option added) or unittest's FAIL/ERROR lines."""
    argv = shlex.split(case.test_command)
    report = log.with_suffix(".junit.xml")
    report.unlink(missing_ok=True)
    if case.kind == "pytest":
        argv = [*argv, f"--junit-xml={report}"]
    start = log.stat().st_size if log.exists() else 0
    step = run_logged(argv, repo, venv_env(venv), timeout, log, capped=True)
    output = log.read_bytes()[start:].decode("utf-8", "replace")
    if case.kind == "pytest":
        ran, failing, _ = junit_outcomes(report)
        report.unlink(missing_ok=True)  # 8 MB for packaging's 62,000 tests
    else:
        ran, failing = unittest_outcomes(output)
    return SuiteRun(
        step.command, step.returncode, step.seconds, step.timed_out, ran, failing, step.tail
    )


def junit_outcomes(report: Path) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """(tests ran, failing ids, skipped ids) from pytest's JUnit report."""
    try:
        root = ET.parse(report).getroot()
    except (OSError, ET.ParseError):
        return 0, (), ()
    ran, failing, skipped = 0, set(), set()
    for testcase in root.iter("testcase"):
        ran += 1
        name = f"{testcase.get('classname', '')}.{testcase.get('name', '')}".strip(".")
        if testcase.find("failure") is not None or testcase.find("error") is not None:
            failing.add(canonical_test_id(name))
        elif testcase.find("skipped") is not None:
            skipped.add(canonical_test_id(name))
    return ran, tuple(sorted(failing)), tuple(sorted(skipped))


def unittest_outcomes(output: str) -> tuple[int, tuple[str, ...]]:
    ran = sum(int(m) for m in _UNITTEST_RAN.findall(output))
    failing = set()
    for method, where in _UNITTEST_FAILURE.findall(output):
        # Python 3.11 prints `test_x (pkg.mod.Class.test_x)`, older ones `(pkg.mod.Class)`.
        failing.add(where if where.endswith(f".{method}") else f"{where}.{method}")
    return ran, tuple(sorted(failing))


def is_flaky(test: str, flaky: Iterable[str]) -> bool:
    """`test` (a canonical id) is one of `flaky`, or inside one (a module, class or function
    prefix: its parameter sets too)."""
    return any(
        test == f or test.startswith((f + ".", f + "[")) for f in map(canonical_test_id, flaky)
    )


def canonical_test_id(test: str) -> str:
    """`tests/test_x.py::TestA::test_b[1]` (pytest), `tests.test_x.TestA::test_b[1]`
    (fixbot's JUnit-style ids) and `tests.test_x.TestA.test_b` (unittest) -> dotted."""
    name, bracket, params = test.partition("[")
    if "::" in name:
        path, _, rest = name.partition("::")
        if path.endswith(".py"):
            path = path[: -len(".py")].replace("/", ".")
        name = f"{path}.{rest.replace('::', '.')}"
    return name + bracket + params


def apply_fix(built: Materialised) -> None:
    """The historical fix applied to the working tree (for the bare run with the fix)."""
    patch = built.repo / ".realbuilds-fix.diff"
    patch.write_text(built.fix_diff, encoding="utf-8")
    try:
        git(built.repo, "apply", "--whitespace=nowarn", str(patch))
    finally:
        patch.unlink()


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
