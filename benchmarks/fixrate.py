"""Fix rate, measured honestly: fixbot beside three baselines, one judge, raw rows committed.

The same tasks, the same model and endpoint, in one run, four sides:

* `oneshot`: one greedy call (temperature 0). The prompt is what a user would paste into a
  chat: the whole file under repair and the failing test run's output (`judge.failure_excerpt`:
  pytest's FAILURES section, which shows the test's source up to the failing assertion and the
  values it compared), asking for the whole corrected file in one ```python block. It is the
  strongest simple prompt we can justify: the code, the failure, one clear reply shape, no
  fixbot machinery.
* `bestofn`: best-of-N at fixbot's budget. N is fixbot's most model calls at its defaults
  (`max_iterations`, 4: read from the measured fixbot's `Config()`). N samples of the one-shot
  prompt, the first greedy (the one-shot's own call, reused: the same request), the rest at
  temperature 0.6 (between the optima Chen et al. 2021 report for pass@1, 0.2, and pass@100,
  0.8), each judged; the tests' pass or fail is the only feedback; it stops at the first pass.
* `twocall`: the script "fix, then rewrite from the spec". Call 1 is the one-shot (reused);
  if it fails, call 2 (greedy) shows the same file and test output and asks to write the
  failing function's body anew from its specification (whatever the docstring, the comments
  and the test say).
* `fixbot`: `python -m fixbot fix COPY --json --sandbox bwrap --out OUT` of the checkout at
  `--fixbot-root` (default: this one), its defaults, the task's own `.fixbot.yml` (with
  `--fixbot-config-extra` appended and committed, design split only).

The same four sides run on the real-build corpus (`--corpus realbuilds`,
`benchmarks/realtasks.py`): a baseline is shown the windows of the historical fix's file (the
functions it changed: an oracle's hint fixbot never gets) instead of the whole file, and the
judge is the project's own test command in its own virtualenv, without network
(`--mirrors`: the projects' git mirrors, as for benchmarks/realbuilds.py).
`--corpus realsmall` is the same for the manifest's second batch (small fixes, `batch =
"small"` in benchmarks/realbuilds/cases.toml), `--corpus realtiny` for its third (`batch =
"tiny"`: fixes of at most 6 lines), `--corpus realmini` for its fourth (`batch = "mini"`: fixes
of at most 6 lines in a file of at most 400 lines); `realbuilds` is its first batch.

One judge for every side (`benchmarks/judge.py`, no fixbot code): each candidate is a diff
(`fix.diff` from fixbot's `--out`; a baseline's corrected file as `git diff`), applied to a
clean copy of the task; a diff touching a test file is refused; the tests run in bubblewrap
without network, with a per-test and a whole-run timeout (a hang is a failing test). fixbot's
own verdict is recorded beside the judge's (`fixbot.claimed_fixed`), never counted.

Splits (`benchmarks/corpora.py`): `design` is Python/0-39, `heldout` every second task from 40
(62 tasks). The held-out split is for reporting only: it takes every task and every side,
fixbot's committed code (a clean tree) at its defaults, no `--tasks`, `--sides`,
`--fixbot-config-extra`, `--n` or `--out`; it keeps no evidence (no replies, no fixbot output)
and prints only the totals.

Rows: one JSON line per task and side, appended as soon as it is known, to
`benchmarks/results/<corpus>-<split>-<date>-run<k>.jsonl` (k: one more than the corpus-split's
last run; `--resume` continues the last run, refusing one measured with other settings). A row
holds the fixbot commit (the last one that changed `fixbot/`), the model, the settings, calls,
tokens, seconds and the judge's verdict, and no task text (the data is from elsewhere).
`benchmarks/tables.py` makes the tables from the committed rows. Evidence (prompts, replies,
diffs, test output, fixbot's evidence.json) goes to `--out DIR` (default
/tmp/fixrate-evidence/<corpus>-<split>-run<k>), never into the repository.

    ../shared/tools/local-llm start
    OPENAI_API_KEY=local python benchmarks/fixrate.py \\
        --corpus humanevalfix|movedspec|realbuilds|realsmall|realtiny|realmini \\
        --split design|heldout [--tasks 0-9] [--sides oneshot,bestofn,twocall,fixbot] [--resume] \\
        [--fixbot-root ../main] [--model fixbot-local] [--base-url http://127.0.0.1:8011/v1] \\
        [--timeout 600] [--fixbot-timeout 2400] [--results DIR] [--out DIR]

Exit code 0 when the benchmark ran, whatever it fixed; 2 for a usage error.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import corpora
import realtasks
import tables
from corpora import SPLITS, Task
from judge import Judge, Verdict, failure_excerpt, file_diff

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
EVIDENCE = Path(tempfile.gettempdir()) / "fixrate-evidence"
DEFAULT_MODEL = "fixbot-local"
DEFAULT_BASE_URL = "http://127.0.0.1:8011/v1"
SIDES = ("oneshot", "bestofn", "twocall", "fixbot")
SCHEMA = 1
SAMPLE_TEMPERATURE = 0.6
MAX_TOKENS = 2048  # fixbot's own cap on a reply (fixbot/window.py MAX_REPLY_TOKENS)
SYSTEM = "You are an expert Python programmer. You fix bugs in Python code."
ONESHOT = (
    "The tests fail on this code: `{source}` has a bug. Fix the bug in `{source}`; do not change "
    "the tests. Reply with the whole corrected `{source}` in one ```python block.\n\n"
    "`{source}`:\n```python\n{code}```\n\n"
    "The failing test run (`python -m pytest -q`):\n```text\n{failure}\n```\n"
)
REWRITE = (
    "The tests fail on this code: `{source}` has a bug in `{entry}`. A first attempt to fix it "
    "did not pass. Do not patch the current body of `{entry}`: write its body anew from its "
    "specification, what the docstring, the comments and the failing test below say it must "
    "do. Keep the rest of the file as it is. Reply with the whole corrected `{source}` in one "
    "```python block.\n\n"
    "`{source}`:\n```python\n{code}```\n\n"
    "The failing test run (`python -m pytest -q`):\n```text\n{failure}\n```\n"
)
_CLOSE = realtasks.CLOSING_FENCE  # one closing rule for every side's reply blocks
_PYTHON_BLOCK = re.compile(r"```[ \t]*(?:python3?|py)[ \t]*\n(.*?)" + _CLOSE, re.S | re.I | re.M)
_ANY_BLOCK = re.compile(r"```[^\n`]*\n(.*?)" + _CLOSE, re.S | re.M)
_CONTEXT = re.compile(
    r"HTTP 400|context (?:window|length|size)|n_ctx|maximum context|too many tokens", re.I
)
_RETRY = re.compile(r'"event": "model_retry"|\bmodel_retry\b')
_RAN = frozenset({"pass", "fail", "applied"})  # fixbot verdicts of an attempt whose tests ran
FIXBOT_CATEGORIES = ("hang", "context", "unusable", "refused", "stuck", "wrong", "error")
# an attempt's problems that say its reply held no edit that applies (not a policy refusal):
# none at all, one that does not fit the file, or the code sent back as it is
_UNUSABLE = re.compile(
    r"contains no edit|does not apply|not found in the file|changes nothing"
    r"|neither the whole file nor complete",
    re.I,
)


# --- the model: the openai SDK directly, nothing of fixbot's ---


@dataclass(frozen=True)
class Call:
    text: str
    temperature: float
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    estimated: bool = False  # the server sent no usage: characters / 4
    error: str = ""


class Chat:
    def __init__(self, model: str, base_url: str, api_key: str, timeout: float) -> None:
        import openai

        self.model = model
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0
        )

    def ask(self, messages: list[dict[str, str]], temperature: float) -> Call:
        started = time.monotonic()
        try:
            reply = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                temperature=temperature,
                max_tokens=MAX_TOKENS,
            )
        except Exception as exc:  # a timeout, a refusal: the row says which
            seconds = time.monotonic() - started
            return Call("", temperature, 0, 0, seconds, error=f"{type(exc).__name__}: {exc}"[:300])
        seconds = time.monotonic() - started
        text = (reply.choices[0].message.content or "") if reply.choices else ""
        if reply.usage is None:
            prompt = sum(len(m["content"]) for m in messages) // 4
            return Call(text, temperature, prompt, len(text) // 4, seconds, estimated=True)
        usage = reply.usage
        return Call(text, temperature, usage.prompt_tokens, usage.completion_tokens, seconds)

    def close(self) -> None:
        self._client.close()


def extract_code(reply: str) -> tuple[str, str]:
    """(the candidate file, the reply's shape): the first ```python block, else the first
    fenced block, else the whole reply."""
    if not reply.strip():
        return "", "empty"
    for pattern, shape in ((_PYTHON_BLOCK, "python block"), (_ANY_BLOCK, "other block")):
        match = pattern.search(reply)
        if match:
            return match.group(1), shape
    return reply, "no block"


AnyTask = Task | realtasks.RealTask


def messages_for(rewrite: bool, task: AnyTask, code: str, failure: str) -> list[dict[str, str]]:
    """The one-shot's prompt (`rewrite`: the rewrite ask) for `task`: the whole file for a
    HumanEvalFix task, the historical fix's window for a real build."""
    templates, fields = (ONESHOT, REWRITE), {}
    if isinstance(task, realtasks.RealTask):
        templates, fields = task.templates(), task.fields()
    text = templates[rewrite].format(
        source=task.source,
        entry=task.entry_point,
        code=code if code.endswith("\n") else code + "\n",
        failure=failure,
        **fields,
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


# --- settings and where rows go ---


@dataclass(frozen=True)
class FixbotBuild:
    root: Path
    commit: str
    dirty: str  # "" for a clean tree, else the SHA-256 of `git diff HEAD -- fixbot`
    max_calls: int  # its most model calls at its defaults

    def label(self) -> str:
        return self.commit[:12] + ("+dirty" if self.dirty else "")


@dataclass(frozen=True)
class Settings:
    corpus: str
    split: str
    model: str
    base_url: str
    api_key: str = field(repr=False)
    n: int
    timeout: float
    fixbot_timeout: float
    config_extra: str
    sides: tuple[str, ...]
    judge: Mapping[str, object]

    def recorded(self) -> dict[str, Any]:
        """What every row carries and --resume must find unchanged (never the key)."""
        return {
            "n": self.n,
            "sample_temperature": SAMPLE_TEMPERATURE,
            "max_tokens": MAX_TOKENS,
            "request_timeout": self.timeout,
            "fixbot_timeout": self.fixbot_timeout,
            "fixbot_config_extra": self.config_extra,
            "judge": dict(self.judge),
        }


def git_line(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def tree_state(root: Path, folder: str) -> tuple[str, str]:
    """(the last commit that changed `folder`: the code measured, whatever came after it; ""
    or the SHA-256 of the uncommitted changes under `folder`). Rows are data, not code: the
    results folder never counts (a run may start while another's rows are uncommitted)."""
    paths = ["--", folder, ":(exclude)benchmarks/results"]
    commit = git_line(root, "log", "-1", "--format=%H", *paths) or "unknown"
    changes = git_line(root, "diff", "HEAD", *paths)
    untracked = git_line(root, "ls-files", "--others", "--exclude-standard", *paths)
    if not changes and not untracked:
        return commit, ""
    return commit, hashlib.sha256((changes + untracked).encode()).hexdigest()[:16]


def fixbot_env(root: Path) -> dict[str, str]:
    """The environment in which `python -m fixbot` is the fixbot at `root`, whatever else is
    installed: `root` first on the path. Run it in a folder that holds no `fixbot` package of
    its own (`python -m` puts the working folder before PYTHONPATH): a scratch folder."""
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH", "")]))
    return {**os.environ, "PYTHONPATH": path}


def fixbot_build(root: Path) -> FixbotBuild:
    """The fixbot at `root`: its commit, and its most model calls at its defaults; exits when
    the fixbot that `python -m fixbot` would run (as side_fixbot runs it) is another one."""
    probe = (
        "import json, fixbot; from fixbot.config import Config; c = Config(); "
        "print(json.dumps([c.max_iterations, c.reflection, c.parallel.candidates, "
        "fixbot.__file__]))"
    )
    with tempfile.TemporaryDirectory(prefix="fixrate-probe-") as scratch:
        done = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            env=fixbot_env(root),
            cwd=scratch,
        )
    if done.returncode != 0:
        raise SystemExit(f"fixrate: cannot read fixbot's defaults at {root}: {done.stderr[-500:]}")
    iterations, reflection, candidates, imported = json.loads(done.stdout)
    if not Path(imported).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"fixrate: the fixbot to measure is at {root}, but {imported} imports")
    if reflection or candidates != 1:
        raise SystemExit(
            "fixrate: fixbot's defaults ask more than one call an attempt (reflection or "
            "parallel candidates): say what N is with --n"
        )
    commit, dirty = tree_state(root, "fixbot")
    return FixbotBuild(root, commit, dirty, int(iterations))


class Results:
    """`DIR/<corpus>-<split>-<date>-run<k>.jsonl`, one line per task and side."""

    def __init__(self, folder: Path, corpus: str, split: str) -> None:
        self.folder = folder
        self.prefix = f"{corpus}-{split}-"

    def runs(self) -> list[tuple[int, Path]]:
        found = []
        for path in self.folder.glob(f"{self.prefix}*-run*.jsonl"):
            match = re.fullmatch(
                rf"{re.escape(self.prefix)}\d{{4}}-\d\d-\d\d-run(\d+)\.jsonl", path.name
            )
            if match:
                found.append((int(match.group(1)), path))
        return sorted(found)

    def new(self, today: str) -> tuple[int, Path]:
        runs = self.runs()
        k = runs[-1][0] + 1 if runs else 1
        return k, self.folder / f"{self.prefix}{today}-run{k}.jsonl"

    def last(self) -> tuple[int, Path] | None:
        runs = self.runs()
        return runs[-1] if runs else None


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def append_row(path: Path, row: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as lines:
        lines.write(json.dumps(row, sort_keys=True) + "\n")
        lines.flush()
        os.fsync(lines.fileno())


def same_setting(row: Mapping[str, Any], head: Mapping[str, Any]) -> bool:
    keys = ("corpus", "split", "model", "base_url", "fixbot_commit", "fixbot_dirty", "settings")
    return all(row.get(key) == head.get(key) for key in keys)


class Evidence:
    """Prompts, replies, diffs and test output under DIR/TASK/ (never in the repository);
    nothing at all for the held-out split."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def write(self, task: AnyTask, name: str, text: str) -> None:
        if self.folder is not None:
            path = self.folder / task.slug / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def read(self, task: AnyTask, name: str) -> str | None:
        if self.folder is None or not (self.folder / task.slug / name).is_file():
            return None
        return (self.folder / task.slug / name).read_text(encoding="utf-8")

    def keep(self, task: AnyTask, source: Path, name: str) -> None:
        if self.folder is not None and source.exists():
            dest = self.folder / task.slug / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, dest, dirs_exist_ok=True)
            else:
                shutil.copy2(source, dest)


# --- the sides ---


@dataclass
class Context:
    settings: Settings
    fixbot: FixbotBuild
    judge: Judge | realtasks.RealJudge
    chat: Chat | None
    evidence: Evidence
    harness: tuple[str, str]  # this benchmark's commit, and "" or its uncommitted changes' hash


@dataclass
class Prepared:
    """A task, and its buggy code judged (what the prompts show)."""

    task: AnyTask
    code: str
    baseline: Verdict
    failure: str
    expected: int  # the tests the buggy code's run had: a pass needs as many
    first: Call | None = None  # the one-shot's call, reused by best-of-N and two-call


@dataclass
class Outcome:
    fixed: bool = False
    verdict: str = "no-reply"
    judge: dict[str, object] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    fixed_at_call: int | None = None
    diff: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # the fixbot side's own facts


def prepare(task: AnyTask, ctx: Context) -> Prepared:
    if isinstance(task, realtasks.RealTask):
        assert isinstance(ctx.judge, realtasks.RealJudge)
        baseline = ctx.judge.baseline(task)
        code, failure = task.shown(), realtasks.failure_excerpt(task, baseline.output)
    else:
        assert isinstance(ctx.judge, Judge)
        code = (task.repo / task.source).read_text(encoding="utf-8")
        baseline = ctx.judge.baseline(task)
        failure = failure_excerpt(baseline.output)
    ctx.evidence.write(task, "baseline.txt", baseline.output)
    return Prepared(task, code, baseline, failure, max(1, baseline.collected))


def _call_record(call: Call, shape: str, verdict: Verdict | None, reused: bool) -> dict[str, Any]:
    record: dict[str, Any] = {
        "temperature": call.temperature,
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "seconds": round(call.seconds, 2),
        "shape": shape if not call.error else "no reply",
        "verdict": verdict.verdict if verdict is not None else "no-reply",
    }
    if call.estimated:
        record["estimated"] = True
    if call.error:
        record["error"] = call.error
    if reused:
        record["reused"] = "oneshot"  # the same request as the one-shot's: asked once
    return record


def try_call(
    ctx: Context, prep: Prepared, call: Call, name: str, outcome: Outcome, reused: bool = False
) -> bool:
    """Judge one call's candidate, record it in `outcome`; True when it passed."""
    ctx.evidence.write(prep.task, f"{name}.reply.md", call.text or call.error)
    verdict: Verdict | None = None
    shape = "no reply"
    if not call.error:
        candidate, shape = extract_code(call.text)
        diff = candidate_diff(prep.task, call.text) if candidate.strip() else ""
        verdict = judge_diff(ctx, prep.task, diff, prep.expected)
        ctx.evidence.write(prep.task, f"{name}.diff", diff)
        ctx.evidence.write(prep.task, f"{name}.judge.txt", verdict.output)
        outcome.diff, outcome.verdict, outcome.judge = diff, verdict.verdict, verdict.brief()
        outcome.fixed = verdict.fixed
    outcome.calls.append(_call_record(call, shape, verdict, reused))
    if outcome.fixed:
        outcome.fixed_at_call = len(outcome.calls)
    return outcome.fixed


def candidate_diff(task: AnyTask, reply: str) -> str:
    """A reply as a diff: the corrected file (its first block) of a HumanEvalFix task, every
    window's block spliced back for a real build."""
    if isinstance(task, realtasks.RealTask):
        return task.candidate_diff(reply)
    return file_diff(task, extract_code(reply)[0])


def judge_diff(ctx: Context, task: AnyTask, diff: str, expected: int) -> Verdict:
    if isinstance(task, realtasks.RealTask):
        assert isinstance(ctx.judge, realtasks.RealJudge)
        return ctx.judge.judge(task, diff, expected=expected)
    assert isinstance(ctx.judge, Judge)
    return ctx.judge.judge(task, diff, expected=expected)


def first_call(ctx: Context, prep: Prepared) -> tuple[Call, bool]:
    """The one-shot's greedy call: this run's (reused), the evidence's (a resumed run), or a new
    one. True when it was asked before (by the one-shot side)."""
    if prep.first is not None:
        return prep.first, True
    kept = ctx.evidence.read(prep.task, "oneshot.call.json")
    if kept is not None:
        prep.first = Call(**json.loads(kept))
        return prep.first, True
    assert ctx.chat is not None
    prep.first = ctx.chat.ask(messages_for(False, prep.task, prep.code, prep.failure), 0.0)
    ctx.evidence.write(prep.task, "oneshot.call.json", json.dumps(prep.first.__dict__))
    return prep.first, False


def side_oneshot(ctx: Context, prep: Prepared) -> Outcome:
    outcome = Outcome()
    call, asked_before = first_call(ctx, prep)
    try_call(ctx, prep, call, "oneshot", outcome, reused=asked_before)
    return outcome


def side_bestofn(ctx: Context, prep: Prepared) -> Outcome:
    outcome = Outcome()
    call, asked_before = first_call(ctx, prep)
    if try_call(ctx, prep, call, "bestofn-1", outcome, reused=asked_before):
        return outcome
    assert ctx.chat is not None
    messages = messages_for(False, prep.task, prep.code, prep.failure)
    for k in range(2, ctx.settings.n + 1):
        sample = ctx.chat.ask(messages, SAMPLE_TEMPERATURE)
        if try_call(ctx, prep, sample, f"bestofn-{k}", outcome):
            break
    return outcome


def side_twocall(ctx: Context, prep: Prepared) -> Outcome:
    outcome = Outcome()
    call, asked_before = first_call(ctx, prep)
    if try_call(ctx, prep, call, "twocall-1", outcome, reused=asked_before):
        return outcome
    assert ctx.chat is not None
    rewrite = ctx.chat.ask(messages_for(True, prep.task, prep.code, prep.failure), 0.0)
    try_call(ctx, prep, rewrite, "twocall-2", outcome)
    return outcome


@dataclass(frozen=True)
class Process:
    returncode: int
    stdout: str
    seconds: float
    timed_out: bool


def run_process(
    argv: Sequence[str], env: Mapping[str, str], timeout: float, log: Path, cwd: Path
) -> Process:
    """argv to completion or `timeout` (then its whole process group is killed), in `cwd`."""
    started = time.monotonic()
    with log.open("wb") as err:
        child = subprocess.Popen(
            list(argv),
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
        )
        try:
            out, _ = child.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            out, _ = child.communicate()
            timed_out = True
    return Process(
        child.returncode, out.decode("utf-8", "replace"), time.monotonic() - started, timed_out
    )


def fixbot_cli(
    root: Path, args: Sequence[str], extra_env: Mapping[str, str], timeout: float, log: Path
) -> Process:
    """`python -m fixbot ARGS` as the fixbot at `root`, in a scratch folder of its own."""
    env = {**fixbot_env(root), **extra_env}
    with tempfile.TemporaryDirectory(prefix="fixrate-cwd-") as cwd:
        return run_process([sys.executable, "-m", "fixbot", *args], env, timeout, log, Path(cwd))


def last_json_object(text: str) -> dict[str, Any]:
    for line in reversed(text.splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def model_attempts(evidence: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The attempts a model call answered (attempt 0 is ruff's own, no call)."""
    return [
        a
        for a in evidence.get("attempts") or []
        if a.get("number", 0) >= 1
        and (a.get("reply") or a.get("prompt_tokens", 0) + a.get("completion_tokens", 0))
    ]


def _check_status(attempt: Mapping[str, Any]) -> str:
    check = attempt.get("check")
    return str(check.get("status", "")) if isinstance(check, Mapping) else ""


def categorize(status: str, reason: str, evidence: Mapping[str, Any], timed_out: bool) -> str:
    """Why fixbot did not fix it, by its own evidence ("" when it says it fixed it): the first
    that fits of hang, context, unusable (every reply held no edit that applies), refused
    (every attempt rejected, a policy refusal among them), stuck, wrong, error. Rows before
    `unusable` existed count both as `refused`."""
    if status in ("fixed", "already_passing"):
        return ""
    attempts = model_attempts(evidence)
    baseline = evidence.get("baseline")
    baseline_status = baseline.get("status") if isinstance(baseline, Mapping) else ""
    if (
        timed_out
        or baseline_status == "timeout"
        or any(_check_status(a) == "timeout" for a in attempts)
    ):
        return "hang"
    problems = [str(p) for a in attempts for p in (a.get("problems") or [])]
    if _CONTEXT.search(reason) or any(_CONTEXT.search(p) for p in problems):
        return "context"
    if attempts and all(a.get("verdict") == "rejected" for a in attempts):
        said = [str(p) for a in attempts for p in (a.get("problems") or [""])]
        return "unusable" if all(_UNUSABLE.search(p) for p in said) else "refused"
    if reason.startswith("stuck") or evidence.get("escalation") == "stuck":
        return "stuck"
    if any(a.get("verdict") in _RAN for a in attempts):
        return "wrong"
    return "error"


def _attempt_digest(attempt: Mapping[str, Any]) -> dict[str, Any]:
    """An attempt as a row holds it: its kind and counts, never its text."""
    return {
        "number": attempt.get("number"),
        "verdict": attempt.get("verdict"),
        "asked": attempt.get("shape", ""),
        "temperature": attempt.get("temperature"),
        "check": _check_status(attempt),
        "prompt_tokens": attempt.get("prompt_tokens", 0),
        "completion_tokens": attempt.get("completion_tokens", 0),
    }


def side_fixbot(ctx: Context, prep: Prepared) -> Outcome:
    settings, task = ctx.settings, prep.task
    env = {"OPENAI_API_KEY": settings.api_key}
    with tempfile.TemporaryDirectory(prefix="fixrate-fixbot-") as scratch:
        pristine = task.fixbot_repo if isinstance(task, realtasks.RealTask) else task.repo
        repo = shutil.copytree(pristine, Path(scratch) / "repo", symlinks=True)
        if settings.config_extra:
            config = repo / ".fixbot.yml"
            text = config.read_text(encoding="utf-8")
            glue = "" if text.endswith("\n") else "\n"
            config.write_text(text + glue + settings.config_extra.rstrip("\n") + "\n")
            corpora.commit_all(repo, "fixrate: --fixbot-config-extra")
        out, log = Path(scratch) / "out", Path(scratch) / "fixbot-stderr.log"
        args = ["fix", str(repo), "--model", settings.model, "--base-url", settings.base_url]
        args += ["--json", "--sandbox", "bwrap", "--out", str(out)]
        done = fixbot_cli(ctx.fixbot.root, args, env, settings.fixbot_timeout, log)
        ctx.evidence.keep(task, out, "fixbot-out")
        ctx.evidence.keep(task, log, "fixbot-stderr.log")
        shipped = out / "fix.diff"
        diff = shipped.read_text(encoding="utf-8") if shipped.is_file() else ""
        summary = last_json_object(done.stdout)
        evidence = read_json(out / "evidence.json")
        retries = len(_RETRY.findall(log.read_text(errors="replace")))
    status = str(summary.get("status") or evidence.get("status") or "error")
    reason = str(summary.get("reason") or evidence.get("reason") or "")
    if done.timed_out:
        status = "error"
    attempts = model_attempts(evidence)
    tokens = summary.get("tokens") or evidence.get("tokens") or {}
    outcome = Outcome(diff=diff)
    verdict = judge_diff(ctx, task, diff, prep.expected) if diff.strip() else None
    if verdict is not None:
        ctx.evidence.write(task, "fixbot.judge.txt", verdict.output)
        outcome.fixed, outcome.verdict = verdict.fixed, verdict.verdict
        outcome.judge = verdict.brief()
    else:
        outcome.verdict = "no-diff"
    passed = [i for i, a in enumerate(attempts, 1) if a.get("verdict") == "pass"]
    outcome.fixed_at_call = (passed[-1] if passed else len(attempts)) if outcome.fixed else None
    outcome.calls = [
        {
            "temperature": a.get("temperature"),
            "prompt_tokens": a.get("prompt_tokens", 0),
            "completion_tokens": a.get("completion_tokens", 0),
        }
        for a in attempts
    ]
    outcome.extra = {
        "status": status,
        "exit_code": done.returncode,
        "claimed_fixed": status == "fixed",
        "category": categorize(status, reason, evidence, done.timed_out),
        "escalation": str(evidence.get("escalation") or ""),
        "timed_out": done.timed_out,
        "fixbot_seconds": round(done.seconds, 2),
        "retries": retries,
        "tokens": {k: int(tokens.get(k, 0)) for k in ("prompt", "completion", "total")},
        "attempts": [_attempt_digest(a) for a in evidence.get("attempts") or []],
    }
    return outcome


RUNNERS: dict[str, Callable[[Context, Prepared], Outcome]] = {
    "oneshot": side_oneshot,
    "bestofn": side_bestofn,
    "twocall": side_twocall,
    "fixbot": side_fixbot,
}


# --- rows ---


def make_row(
    ctx: Context, prep: Prepared, side: str, outcome: Outcome, seconds: float, run: int, date: str
) -> dict[str, Any]:
    settings, task = ctx.settings, prep.task
    lines = outcome.diff.splitlines()
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    if side == "fixbot":
        tokens = outcome.extra["tokens"]
        prompt, completion = tokens["prompt"], tokens["completion"]
    else:
        prompt = sum(c["prompt_tokens"] for c in outcome.calls)
        completion = sum(c["completion_tokens"] for c in outcome.calls)
    row: dict[str, Any] = {
        "schema": SCHEMA,
        "corpus": settings.corpus,
        "split": settings.split,
        "run": run,
        "date": date,
        "task": task.id,
        "number": task.number,
        "layout": task.layout,
        "side": side,
        "fixbot_commit": ctx.fixbot.commit,
        "fixbot_dirty": ctx.fixbot.dirty,
        "harness_commit": ctx.harness[0],
        "harness_dirty": ctx.harness[1],
        "model": settings.model,
        "base_url": settings.base_url,
        "settings": settings.recorded(),
        "fixed": outcome.fixed,
        "verdict": outcome.verdict,
        "judge": outcome.judge,
        "calls": len(outcome.calls),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "tokens": prompt + completion,
        "seconds": round(seconds, 2),
        "fixed_at_call": outcome.fixed_at_call,
        "call_log": outcome.calls,
        "diff_sha256": hashlib.sha256(outcome.diff.encode()).hexdigest() if outcome.diff else "",
        "diff_added": added,
        "diff_removed": removed,
        "baseline": {
            "verdict": prep.baseline.verdict,
            "passed": prep.baseline.passed,
            "failed": prep.baseline.failed,
            "seconds": round(prep.baseline.seconds, 2),
        },
    }
    if side == "fixbot":
        row["fixbot"] = outcome.extra
    return row


def note(row: Mapping[str, Any]) -> str:
    text = (
        f"{row['task']} {row['side']}: {'FIXED' if row['fixed'] else 'not fixed'} "
        f"({row['verdict']}), {row['calls']} calls, {row['tokens']} tokens, {row['seconds']:.0f} s"
    )
    fixbot = row.get("fixbot")
    if fixbot:
        text += f"; fixbot says {fixbot['status']} [{fixbot['category'] or '-'}]"
    return text


def progress(message: str) -> None:
    print(f"fixrate: {message}", file=sys.stderr, flush=True)


# --- the command line ---


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--corpus", choices=[*corpora.CORPORA, *realtasks.CORPORA], default="humanevalfix"
    )
    parser.add_argument("--split", choices=list(SPLITS), default="design")
    parser.add_argument("--tasks", type=corpora.parse_tasks, help="design only: e.g. 0-9")
    parser.add_argument("--sides", help=f"design only: a comma list of {', '.join(SIDES)}")
    parser.add_argument("--resume", action="store_true", help="continue the last run")
    parser.add_argument("--fixbot-root", type=Path, default=ROOT, help="the fixbot to measure")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--base-url", default=DEFAULT_BASE_URL)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per model call")
    parser.add_argument("--fixbot-timeout", type=float, default=2400.0, help="seconds a fixbot run")
    parser.add_argument("--fixbot-config-extra", default="", metavar="YAML", help="design only")
    parser.add_argument("--n", type=int, help="design only: best-of-N's N (default: fixbot's)")
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"default: {RESULTS}")
    parser.add_argument("--out", type=Path, help="design only: where the evidence goes")
    parser.add_argument("--data", type=Path, default=corpora.DATA)
    parser.add_argument(
        "--mirrors", type=Path, default=realtasks.DEFAULT_MIRRORS, help="realbuilds: git mirrors"
    )
    args = parser.parse_args(argv)
    if args.split == "heldout":
        tuned = [
            name
            for name, given in (
                ("--tasks", args.tasks),
                ("--sides", args.sides),
                ("--fixbot-config-extra", args.fixbot_config_extra),
                ("--n", args.n),
                ("--out", args.out),
            )
            if given
        ]
        if tuned:
            parser.error(
                f"the held-out split is for reporting only: {', '.join(tuned)} "
                "would tune on it (measure and tune on --split design)"
            )
    args.sides = tuple(SIDES if not args.sides else [s.strip() for s in args.sides.split(",")])
    unknown = [s for s in args.sides if s not in SIDES]
    if unknown:
        parser.error(f"--sides: no side {', '.join(unknown)}")
    args.sides = tuple(s for s in SIDES if s in args.sides)
    real = args.corpus in realtasks.CORPORA
    split = realtasks.numbers_of(args.corpus, args.split) if real else SPLITS[args.split]
    chosen = args.tasks or list(split)
    outside = [n for n in chosen if n not in split]
    if outside:
        parser.error(f"--tasks: {outside} are not in the {args.split} split")
    args.tasks = chosen
    if not real and not (args.data / corpora.JSONL).is_file():
        parser.error(f"no {corpora.JSONL} in {args.data}")
    if args.n is not None and args.n < 1:
        parser.error("--n must be at least 1")
    return args


@contextmanager
def chat_for(settings: Settings) -> Iterator[Chat | None]:
    if not set(settings.sides) - {"fixbot"}:
        yield None
        return
    chat = Chat(settings.model, settings.base_url, settings.api_key, settings.timeout)
    try:
        yield chat
    finally:
        chat.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    build = fixbot_build(args.fixbot_root.resolve())
    heldout = args.split == "heldout"
    harness = tree_state(ROOT, "benchmarks")
    if heldout and (build.dirty or harness[1]):
        print("fixrate: the held-out split measures committed code: commit first", file=sys.stderr)
        return 2
    judge = realtasks.RealJudge() if args.corpus in realtasks.CORPORA else Judge()
    settings = Settings(
        corpus=args.corpus,
        split=args.split,
        model=args.model,
        base_url=args.base_url,
        api_key=os.environ.get("OPENAI_API_KEY") or "local",
        n=args.n or build.max_calls,
        timeout=args.timeout,
        fixbot_timeout=args.fixbot_timeout,
        config_extra=args.fixbot_config_extra,
        sides=args.sides,
        judge=judge.settings(),
    )
    results = Results(args.results, args.corpus, args.split)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    done: set[tuple[str, str]] = set()
    if args.resume:
        last = results.last()
        if last is None:
            print("fixrate: --resume: no run to continue", file=sys.stderr)
            return 2
        run, rows_path = last
        rows = read_rows(rows_path)
        probe = {
            "corpus": settings.corpus,
            "split": settings.split,
            "model": settings.model,
            "base_url": settings.base_url,
            "fixbot_commit": build.commit,
            "fixbot_dirty": build.dirty,
            "settings": settings.recorded(),
        }
        if rows and not same_setting(rows[0], probe):
            print(
                f"fixrate: --resume: {rows_path} was measured with other settings", file=sys.stderr
            )
            return 2
        date = rows[0]["date"] if rows else today
        done = {(row["task"], row["side"]) for row in rows}
    else:
        run, rows_path = results.new(today)
        date = today
    folder = None if heldout else (args.out or EVIDENCE / f"{args.corpus}-{args.split}-run{run}")
    ctx_evidence = Evidence(folder)
    progress(
        f"{args.corpus} {args.split} run {run} -> {rows_path}; fixbot {build.label()} at "
        f"{build.root}; {settings.model} at {settings.base_url}; N = {settings.n}; "
        f"sides {', '.join(settings.sides)}; judge: {judge.describe()}; evidence: {folder}"
    )
    with tempfile.TemporaryDirectory(prefix="fixrate-") as scratch, chat_for(settings) as chat:
        ctx = Context(settings, build, judge, chat, ctx_evidence, harness)
        tasks = build_tasks(args, Path(scratch))
        for index, task in enumerate(tasks, 1):
            pending = [side for side in settings.sides if (task.id, side) not in done]
            if not pending:
                continue
            try:
                prep = prepare_task(task, ctx, Path(scratch) / task.slug)
            except realtasks.TaskError as exc:
                progress(f"{task.id}: not measured: {str(exc)[:600]}")
                if isinstance(task, realtasks.RealTask):
                    task.close()
                continue
            if prep.baseline.fixed:
                progress(f"{task.id}: the buggy code passes its tests: not a task; skipped")
                continue
            try:
                run_sides(ctx, prep, pending, run, date, rows_path, f"[{index}/{len(tasks)}]")
            finally:
                if isinstance(task, realtasks.RealTask):
                    task.close()
    rows = [row for row in read_rows(rows_path) if row["run"] == run]
    print(tables.render(rows, details=not heldout), end="")
    return 0


def build_tasks(args: argparse.Namespace, scratch: Path) -> Sequence[AnyTask]:
    if args.corpus in realtasks.CORPORA:
        return realtasks.tasks_for(args.corpus, args.split, args.tasks, args.mirrors)
    return corpora.build(args.corpus, args.data, scratch / "repos", args.tasks)


def prepare_task(task: AnyTask, ctx: Context, scratch: Path) -> Prepared:
    if isinstance(task, realtasks.RealTask):
        progress(f"{task.id}: setting up its checkouts and virtualenv")
        task.prepare(scratch)
    return prepare(task, ctx)


def run_sides(
    ctx: Context,
    prep: Prepared,
    sides: Sequence[str],
    run: int,
    date: str,
    rows_path: Path,
    where: str,
) -> None:
    heldout = ctx.settings.split == "heldout"
    for side in sides:
        started = time.monotonic()
        outcome = RUNNERS[side](ctx, prep)
        # A reused call cost its time once, and counts in every side that uses it.
        seconds = (
            time.monotonic() - started + sum(c["seconds"] for c in outcome.calls if c.get("reused"))
        )
        row = make_row(ctx, prep, side, outcome, seconds, run, date)
        append_row(rows_path, row)
        progress(f"{where} {prep.task.id} {side}: recorded" if heldout else note(row))


if __name__ == "__main__":
    raise SystemExit(main())
