"""Fix rate side by side on HumanEvalFix: a plain one-shot call against `fixbot fix`.

The same tasks, the same model and endpoint, one run, two ways:

* **one-shot** (no fixbot): the whole buggy `solution.py` in, "reply with the whole corrected
  file in one ```python block" (the test is not shown), one chat call at temperature 0 through
  `fixbot.model.OpenAIModel` (so tokens are counted as fixbot counts them); the first ```python
  block (else the first fenced block, else the whole reply) becomes `solution.py` in a fresh
  copy, and `python -m pytest -q` runs on it in fixbot's bubblewrap sandbox (60 s): fixed means
  exit code 0. Nothing else is asked of it (no ruff, no mypy, no second run).
* **fixbot** with its defaults: `python -m fixbot fix REPO --model M --base-url URL --json
  --sandbox bwrap` as a subprocess of this checkout's fixbot (PYTHONPATH set to it), each
  task's own `.fixbot.yml` untouched unless `--fixbot-config-extra YAML` is given: that text
  is appended (and committed) to every task's `.fixbot.yml`, and the header says what was
  appended. Fixed means fixbot's pass definition, verified twice on clean copies (the gates
  included: a fix with a new ruff or mypy finding is not a pass). The row comes from the JSON
  summary and `REPO/.fixbot/out/evidence.json`.

The data is not part of this project: `../shared/data/humanevalfix/` (or `--data DIR`), whose
`make_repos.py` writes one failing git repository per task into a temporary folder. Run, e.g.
with the local model (`../shared/tools/local-llm start`; one request at a time, so `--jobs 1`):

    python benchmarks/fixrate.py [--tasks 0-163:4] [--only oneshot|fixbot|both] [--out DIR]
        [--resume] [--json] [--model fixbot-local] [--base-url http://127.0.0.1:8011/v1]
        [--timeout 300] [--fixbot-timeout 2400] [--jobs 1]
        [--fixbot-config-extra $'request_timeout_seconds: 600\\n']

`--tasks` takes ranges, steps and lists of HumanEvalFix numbers (`0-39`, `0-163:4` for every
fourth, `0,4,8`, `0-3,10`). `OPENAI_API_KEY` is passed on (default `local`). It prints a
table, one row per task (one-shot fixed, tokens, seconds; fixbot status, model calls, tokens,
seconds, failure category), then both sides' totals, the ratio fixbot-fixed / one-shot-fixed,
fixbot's failures by category, the requests the server refused as too long (fixbot's
`context_refused` log lines) and the largest request (prompt and reply tokens, as the server
counted them); `--json` prints one JSON object instead. Counts from the same run, never timed
assertions.

A fixbot failure is put in the first category that fits, in this order: `hang` (the run, its
baseline or an attempt's tests timed out), `context` (a context-window error or an HTTP 400),
`refused` (every model attempt rejected before anything ran: no edit, protected path,
unchanged, ...), `stuck` (escalated with a reason starting `stuck`), `wrong` (attempts ran,
the tests still fail), `error` (anything else, e.g. exit code 3, with its reason).
A `stuck` escalation whose every attempt was refused is `refused`; the totals count the stuck
escalations, the model calls fixbot retried, and the attempts by verdict and reply shape.

With `--out DIR` every measured side of every task is written as soon as it is known:
`DIR/rows.jsonl` (one line per side and task), `DIR/TASK/oneshot.json` and `fixbot.json`,
the one-shot candidate, and fixbot's `evidence.json`, `report.md`, `fix.diff` and stderr log.
`--resume` skips what `DIR` already holds, so an interrupted run loses only the task it was on.
Exit code 0 when the benchmark ran, whatever it fixed; 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "humanevalfix"
JSONL = "humanevalpack_python.jsonl"
DEFAULT_MODEL = "fixbot-local"
DEFAULT_BASE_URL = "http://127.0.0.1:8011/v1"
TEST_ARGV = ("python", "-m", "pytest", "-q")
TEST_TIMEOUT_SECONDS = 60.0
SIDES = ("oneshot", "fixbot")
CATEGORIES = ("hang", "context", "refused", "stuck", "wrong", "error")
SYSTEM = "You are an expert Python programmer. You fix bugs in Python code."
PROMPT = (
    "This Python file has a bug; the test `tests/test_solution.py` fails. "
    "Reply with the whole corrected file in one ```python block.\n\n"
    "solution.py:\n```python\n{source}```\n"
)
_PYTHON_BLOCK = re.compile(r"```[ \t]*(?:python3?|py)[ \t]*\n(.*?)(?:```|\Z)", re.S | re.I)
_ANY_BLOCK = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.S)
_CONTEXT = re.compile(
    r"HTTP 400|context (?:window|length|size)|n_ctx|maximum context|too many tokens", re.I
)
_TESTS_IN_DIFF = re.compile(r"^(?:---|\+\+\+) (?:[ab]/)?tests/|^diff --git a/tests/", re.M)
_DIFF_FENCE = re.compile(r"^[ \t]*```[ \t]*(?:diff|patch)\b", re.M | re.I)
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+", re.M)
_PYTHON_FENCE = re.compile(r"^[ \t]*```[ \t]*(?:python3?|py)\b", re.M | re.I)
_FENCE = re.compile(r"^[ \t]*```", re.M)
_RETRY = re.compile(r'"event": "model_retry"|\bmodel_retry\b')
_REFUSED = re.compile(r'"event": "context_refused"|\bcontext_refused\b')
_RAN = frozenset({"pass", "fail", "applied"})  # verdicts of an attempt whose tests ran
_CAP = 400  # characters of a reply or a problem kept in a row


# --- the fixbot seam: every fixbot name this script uses is imported here, and only here ---


@dataclass(frozen=True)
class Answer:
    text: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool  # the server reported no usage: fixbot's local estimate
    seconds: float
    error: str = ""


@dataclass(frozen=True)
class TestRun:
    returncode: int
    timed_out: bool
    seconds: float
    tail: str
    error: str = ""  # the sandbox itself failed


@dataclass(frozen=True)
class Seams:
    ask: Callable[[list[dict[str, str]]], Answer]
    run_tests: Callable[[Path], TestRun]
    close: Callable[[], None]
    sandbox: str


def fixbot_seams(model: str, base_url: str, api_key: str, timeout: float) -> Seams:
    """The one-shot side's model client and sandbox, fixbot's own (so tokens are counted and
    tests run as fixbot counts and runs them), through the packages' faces."""
    from fixbot.model.client import OpenAIModel
    from fixbot.sandbox import Limits, RunSpec, choose

    client = OpenAIModel(
        model=model, api_key=api_key, base_url=base_url, timeout_seconds=timeout, max_retries=1
    )
    sandbox = choose("bwrap")
    limits = Limits(timeout_seconds=TEST_TIMEOUT_SECONDS)

    def ask(messages: list[dict[str, str]]) -> Answer:
        started = time.monotonic()
        try:
            reply = client.complete(
                messages, temperature=0.0, deadline=time.time() + 2 * timeout + 30
            )
        except Exception as exc:  # ModelUnreachable, DeadlinePassed: the row says which
            return Answer("", 0, 0, False, time.monotonic() - started, _describe(exc))
        return Answer(
            reply.text,
            reply.prompt_tokens,
            reply.completion_tokens,
            reply.estimated,
            time.monotonic() - started,
        )

    def run_tests(workspace: Path) -> TestRun:
        with tempfile.TemporaryDirectory(prefix="fixrate-out-") as outputs:
            spec = RunSpec(workspace=workspace, outputs=Path(outputs), limits=limits)
            try:
                done = sandbox.run(TEST_ARGV, spec)
            except Exception as exc:  # SandboxFailed: the sandbox, not the candidate
                return TestRun(-1, False, 0.0, "", _describe(exc))
        return TestRun(done.returncode, done.timed_out, done.seconds, done.tail(1500))

    def close() -> None:
        client.close()
        sandbox.close()

    return Seams(ask, run_tests, close, f"bwrap: {sandbox.describe()}")


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


# --- settings, tasks, repositories ---


@dataclass(frozen=True)
class Settings:
    model: str
    base_url: str
    api_key: str
    timeout: float
    fixbot_timeout: float
    config_extra: str
    sides: tuple[str, ...]

    def recorded(self) -> dict[str, Any]:
        """What --resume must find unchanged (never the key)."""
        return {"model": self.model, "base_url": self.base_url, "config_extra": self.config_extra}


@dataclass(frozen=True)
class Task:
    number: int
    repo: Path

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


def describe_tasks(numbers: Sequence[int]) -> str:
    """`Python/0..Python/3, Python/7` for [0, 1, 2, 3, 7]."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"Python/{a}" if a == b else f"Python/{a}..Python/{b}" for a, b in spans)


def count_tasks(data: Path) -> int:
    with (data / JSONL).open(encoding="utf-8") as lines:
        return sum(1 for line in lines if line.strip())


def build_repos(data: Path, dest: Path, numbers: Sequence[int]) -> list[Task]:
    """HumanEvalFix's failing repositories for `numbers`, written by the data's make_repos.py."""
    argv = [sys.executable, str(data / "make_repos.py"), str(data / JSONL), str(dest)]
    argv += ["--limit", str(max(numbers) + 1)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    tasks = [Task(n, dest / f"Python_{n}") for n in numbers]
    missing = [t.id for t in tasks if not (t.repo / "solution.py").is_file()]
    if missing:
        raise SystemExit(f"fixrate: make_repos.py wrote no repository for {', '.join(missing)}")
    return tasks


def fresh_copy(repo: Path, dest: Path) -> Path:
    shutil.copytree(repo, dest, ignore=shutil.ignore_patterns(".git", ".fixbot"))
    return dest


# --- the one-shot side ---


@dataclass
class OneShotRow:
    task: str
    fixed: bool
    shape: str  # python block | other block | no block | empty | no reply
    unchanged: bool  # the candidate is the buggy file again
    prompt_tokens: int
    completion_tokens: int
    tokens: int
    estimated: bool
    model_seconds: float
    test_seconds: float
    seconds: float
    returncode: int
    timed_out: bool
    error: str
    test_tail: str
    reply: str


def oneshot_messages(source: str) -> list[dict[str, str]]:
    text = source if source.endswith("\n") else source + "\n"
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": PROMPT.format(source=text)},
    ]


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


def run_oneshot(task: Task, seams: Seams, keep: Path | None) -> OneShotRow:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fixrate-oneshot-") as scratch:
        work = fresh_copy(task.repo, Path(scratch) / "repo")
        source = (work / "solution.py").read_text(encoding="utf-8")
        answer = seams.ask(oneshot_messages(source))
        candidate, shape = extract_code(answer.text)
        run = TestRun(-1, False, 0.0, "")
        if not answer.error:
            (work / "solution.py").write_text(candidate, encoding="utf-8")
            run = seams.run_tests(work)
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            (keep / "oneshot-solution.py").write_text(candidate, encoding="utf-8")
    return OneShotRow(
        task=task.id,
        fixed=not answer.error and not run.error and run.returncode == 0 and not run.timed_out,
        shape="no reply" if answer.error else shape,
        unchanged=candidate.strip() == source.strip(),
        prompt_tokens=answer.prompt_tokens,
        completion_tokens=answer.completion_tokens,
        tokens=answer.prompt_tokens + answer.completion_tokens,
        estimated=answer.estimated,
        model_seconds=round(answer.seconds, 2),
        test_seconds=round(run.seconds, 2),
        seconds=round(time.monotonic() - started, 2),
        returncode=run.returncode,
        timed_out=run.timed_out,
        error=answer.error or run.error,
        test_tail=run.tail[-600:],
        reply=answer.text,
    )


# --- the fixbot side ---


@dataclass
class FixbotRow:
    task: str
    status: str
    exit_code: int
    fixed: bool
    model_calls: int
    prompt_tokens: int
    completion_tokens: int
    tokens: int
    seconds: float
    touched_tests: bool  # the final diff touches tests/: must never happen
    category: str  # "" when fixed or already passing
    reason: str
    timed_out: bool  # fixbot itself ran past --fixbot-timeout
    retries: int  # model calls fixbot retried (its log's model_retry lines: timeouts, 5xx)
    context_refusals: int = 0  # requests the server refused as too long (context_refused)
    largest_request: int = 0  # the most tokens one attempt's call took (prompt + reply)
    escalation: str = ""  # the evidence's escalation kind, where fixbot records one
    attempts: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Process:
    returncode: int
    stdout: str
    seconds: float
    timed_out: bool


def run_process(
    argv: Sequence[str], env: Mapping[str, str], timeout: float, stderr: Path
) -> Process:
    """argv to completion or `timeout` (then its whole process group is killed), never through
    a shell; stderr goes to a file."""
    started = time.monotonic()
    with stderr.open("wb") as err:
        child = subprocess.Popen(
            list(argv),
            env=dict(env),
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
    text = out.decode("utf-8", "replace")
    return Process(child.returncode, text, time.monotonic() - started, timed_out)


def fixbot_argv(repo: Path, settings: Settings) -> list[str]:
    argv = [sys.executable, "-m", "fixbot", "fix", str(repo), "--model", settings.model]
    return [*argv, "--base-url", settings.base_url, "--json", "--sandbox", "bwrap"]


def append_config(repo: Path, extra: str) -> None:
    """`extra` appended to the task's .fixbot.yml and committed (fixbot refuses a dirty tree)."""
    config = repo / ".fixbot.yml"
    text = config.read_text(encoding="utf-8")
    glue = "" if text.endswith("\n") else "\n"
    config.write_text(text + glue + extra.rstrip("\n") + "\n", encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=fixrate", "-c", "user.email=fixrate@invalid"]
    subprocess.run([*git, "commit", "-qam", "fixrate: --fixbot-config-extra"], check=True)


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
    attempts = evidence.get("attempts") or []
    return [
        a
        for a in attempts
        if a.get("number", 0) >= 1
        and (a.get("reply") or a.get("prompt_tokens", 0) + a.get("completion_tokens", 0))
    ]


def reply_shape(reply: str) -> str:
    """What a fixbot attempt's reply held, roughly (no fixbot parser: it is being moved).
    Fences count only at the start of a line: replies often quote fixbot's own feedback
    ("no ```diff block ...") in their prose."""
    if not reply.strip():
        return "empty"
    if _DIFF_FENCE.search(reply) or _HUNK.search(reply):
        return "diff"
    if "<<<<<<< SEARCH" in reply:
        return "search/replace"
    if _PYTHON_FENCE.search(reply):
        return "python block"
    if _FENCE.search(reply):
        return "other block"
    return "prose only"


def _check_status(attempt: Mapping[str, Any]) -> str:
    check = attempt.get("check")
    return str(check.get("status", "")) if isinstance(check, Mapping) else ""


def attempt_digest(attempt: Mapping[str, Any]) -> dict[str, Any]:
    reply = str(attempt.get("reply", ""))
    return {
        "number": attempt.get("number"),
        "verdict": attempt.get("verdict"),
        "shape": reply_shape(reply),
        "asked": attempt.get("shape", ""),
        "temperature": attempt.get("temperature"),
        "check": _check_status(attempt),
        "prompt_tokens": attempt.get("prompt_tokens", 0),
        "completion_tokens": attempt.get("completion_tokens", 0),
        "tokens": attempt.get("prompt_tokens", 0) + attempt.get("completion_tokens", 0),
        "problems": [str(p)[:_CAP] for p in (attempt.get("problems") or [])[:3]],
        "reply_head": reply[:_CAP],
    }


def categorize(status: str, reason: str, evidence: Mapping[str, Any], timed_out: bool) -> str:
    """The failure's category (see the module docstring); "" for a fix."""
    if status in ("fixed", "already_passing"):
        return ""
    attempts = model_attempts(evidence)
    baseline = evidence.get("baseline")
    baseline_status = baseline.get("status") if isinstance(baseline, Mapping) else ""
    if timed_out or baseline_status == "timeout":  # a model call's timeout is an `error`
        return "hang"
    if any(_check_status(a) == "timeout" for a in attempts):
        return "hang"
    problems = [str(p) for a in attempts for p in (a.get("problems") or [])]
    if _CONTEXT.search(reason) or any(_CONTEXT.search(p) for p in problems):
        return "context"
    if attempts and all(a.get("verdict") == "rejected" for a in attempts):
        return "refused"
    if reason.startswith("stuck") or evidence.get("escalation") == "stuck":
        return "stuck"
    if any(a.get("verdict") in _RAN for a in attempts):
        return "wrong"
    return "error"


@dataclass(frozen=True)
class Log:
    tail: str  # its last lines, for a run that left no summary
    retries: int
    context_refusals: int  # requests the server refused as too long for the window


def read_log(path: Path, lines: int = 5) -> Log:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return Log("", 0, 0)
    tail = " | ".join(text.strip().splitlines()[-lines:])
    every = text.splitlines()
    return Log(
        tail,
        sum(1 for line in every if _RETRY.search(line)),
        sum(1 for line in every if _REFUSED.search(line)),
    )


def run_fixbot(task: Task, settings: Settings, keep: Path | None) -> FixbotRow:
    if settings.config_extra:
        append_config(task.repo, settings.config_extra)
    # This checkout's fixbot, whatever else is installed.
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env = {**os.environ, "OPENAI_API_KEY": settings.api_key, "PYTHONPATH": path}
    with tempfile.TemporaryDirectory(prefix="fixrate-fixbot-") as scratch:
        stderr = Path(scratch) / "fixbot-stderr.log"
        done = run_process(fixbot_argv(task.repo, settings), env, settings.fixbot_timeout, stderr)
        out = task.repo / ".fixbot" / "out"
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for name in ("evidence.json", "report.md", "fix.diff"):
                if (out / name).is_file():
                    shutil.copy2(out / name, keep / name)
            shutil.copy2(stderr, keep / stderr.name)
        summary = last_json_object(done.stdout)
        evidence = read_json(out / "evidence.json")
        log = read_log(stderr)
    return fixbot_row(task, summary, evidence, done, log)


def fixbot_row(
    task: Task,
    summary: Mapping[str, Any],
    evidence: Mapping[str, Any],
    done: Process,
    log: Log,
) -> FixbotRow:
    status = str(summary.get("status") or evidence.get("status") or "error")
    reason = str(summary.get("reason") or evidence.get("reason") or "")
    if done.timed_out:
        status, reason = "error", f"fixbot ran past --fixbot-timeout ({done.seconds:.0f} s)"
    elif not summary and not evidence:
        reason = f"exit code {done.returncode}, no summary: {log.tail}"
    tokens = summary.get("tokens") or evidence.get("tokens") or {}
    diff = str(evidence.get("diff") or "")
    attempts = model_attempts(evidence)
    return FixbotRow(
        task=task.id,
        status=status,
        exit_code=done.returncode,
        fixed=status == "fixed",
        model_calls=len(attempts),
        prompt_tokens=int(tokens.get("prompt", 0)),
        completion_tokens=int(tokens.get("completion", 0)),
        tokens=int(tokens.get("total", 0)),
        seconds=round(done.seconds, 2),
        touched_tests=bool(_TESTS_IN_DIFF.search(diff)),
        category=categorize(status, reason, evidence, done.timed_out),
        reason=reason,
        timed_out=done.timed_out,
        retries=log.retries,
        context_refusals=log.context_refusals,
        largest_request=max(
            (a.get("prompt_tokens", 0) + a.get("completion_tokens", 0) for a in attempts),
            default=0,
        ),
        escalation=str(evidence.get("escalation") or ""),
        attempts=[attempt_digest(a) for a in evidence.get("attempts") or []],
    )


# --- rows on disk: incremental, resumable ---


class Store:
    """Each side of each task under DIR/TASK/SIDE.json and one line in DIR/rows.jsonl, written
    the moment it is measured; nothing at all without --out."""

    def __init__(self, out: Path | None) -> None:
        self.out = out
        self._lock = threading.Lock()

    def folder(self, task: Task) -> Path | None:
        return None if self.out is None else self.out / task.slug

    def load(self, task: Task, side: str) -> dict[str, Any] | None:
        folder = self.folder(task)
        if folder is None or not (folder / f"{side}.json").is_file():
            return None
        return read_json(folder / f"{side}.json") or None

    def save(self, task: Task, side: str, row: dict[str, Any]) -> None:
        folder = self.folder(task)
        if folder is None or self.out is None:
            return
        with self._lock:
            folder.mkdir(parents=True, exist_ok=True)
            text = json.dumps(row, indent=2, sort_keys=True) + "\n"
            partial = folder / f".{side}.json.partial"
            partial.write_text(text, encoding="utf-8")
            partial.replace(folder / f"{side}.json")
            with (self.out / "rows.jsonl").open("a", encoding="utf-8") as lines:
                lines.write(json.dumps({"side": side, **row}, sort_keys=True) + "\n")


def check_out_dir(out: Path, settings: Settings, resume: bool) -> str:
    """Why `out` may not be used ("" when it may: the settings are recorded there)."""
    recorded = read_json(out / "run.json")
    has_rows = (out / "rows.jsonl").is_file()
    if has_rows and not resume:
        return f"--out {out} already holds rows: pass --resume, or name an empty folder"
    if resume and recorded and recorded != settings.recorded():
        return f"--resume: {out} was measured with other settings: {recorded}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "run.json").write_text(json.dumps(settings.recorded(), indent=2) + "\n")
    return ""


# --- running the tasks ---


@dataclass
class Result:
    task: Task
    oneshot: dict[str, Any] | None = None
    fixbot: dict[str, Any] | None = None


def progress(message: str) -> None:
    print(f"fixrate: {message}", file=sys.stderr, flush=True)


def measure(
    task: Task, settings: Settings, seams: Seams | None, store: Store, resume: bool
) -> Result:
    result = Result(task)
    keep = store.folder(task)
    if "oneshot" in settings.sides:
        result.oneshot = store.load(task, "oneshot") if resume else None
        if result.oneshot is None and seams is not None:
            result.oneshot = asdict(run_oneshot(task, seams, keep))
            store.save(task, "oneshot", result.oneshot)
            progress(f"{task.id} one-shot: {_oneshot_note(result.oneshot)}")
    if "fixbot" in settings.sides:
        result.fixbot = store.load(task, "fixbot") if resume else None
        if result.fixbot is None:
            result.fixbot = asdict(run_fixbot(task, settings, keep))
            store.save(task, "fixbot", result.fixbot)
            progress(f"{task.id} fixbot: {_fixbot_note(result.fixbot)}")
    return result


def _oneshot_note(row: Mapping[str, Any]) -> str:
    verdict = "fixed" if row["fixed"] else "not fixed"
    odd = "timed out" if row["timed_out"] else row["error"][:120]
    return f"{verdict}, {row['shape']}, {row['tokens']} tokens, {row['seconds']:.0f} s {odd}"


def _fixbot_note(row: Mapping[str, Any]) -> str:
    category = f" [{row['category']}] {row['reason'][:120]}" if row["category"] else ""
    return (
        f"{row['status']} (exit {row['exit_code']}), {row['model_calls']} calls, "
        f"{row['tokens']} tokens, {row['seconds']:.0f} s{category}"
    )


def run_all(
    tasks: Sequence[Task],
    settings: Settings,
    seams: Seams | None,
    store: Store,
    resume: bool,
    jobs: int,
) -> list[Result]:
    def one(task: Task) -> Result:
        return measure(task, settings, seams, store, resume)

    if jobs <= 1:
        return [one(task) for task in tasks]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, tasks))


# --- totals and rendering ---


def totals(results: Sequence[Result]) -> dict[str, Any]:
    oneshot = [r.oneshot for r in results if r.oneshot is not None]
    fixbot = [r.fixbot for r in results if r.fixbot is not None]
    both = [r for r in results if r.oneshot is not None and r.fixbot is not None]
    one_fixed = sum(bool(row["fixed"]) for row in oneshot)
    fix_fixed = sum(bool(row["fixed"]) for row in fixbot)
    return {
        "oneshot": {
            "tasks": len(oneshot),
            "fixed": one_fixed,
            "fixed_tasks": [row["task"] for row in oneshot if row["fixed"]],
            "model_calls": sum(not row["error"] for row in oneshot),
            "tokens": sum(row["tokens"] for row in oneshot),
            "seconds": round(sum(row["seconds"] for row in oneshot), 1),
            "reply_shapes": dict(Counter(row["shape"] for row in oneshot)),
            "unchanged": sum(bool(row["unchanged"]) for row in oneshot),
            "test_timeouts": sum(bool(row["timed_out"]) for row in oneshot),
            "errors": sum(bool(row["error"]) for row in oneshot),
        },
        "fixbot": {
            "tasks": len(fixbot),
            "fixed": fix_fixed,
            "fixed_tasks": [row["task"] for row in fixbot if row["fixed"]],
            "model_calls": sum(row["model_calls"] for row in fixbot),
            "tokens": sum(row["tokens"] for row in fixbot),
            "seconds": round(sum(row["seconds"] for row in fixbot), 1),
            "failures": _by_category(row["category"] for row in fixbot),
            "touched_tests": sum(bool(row["touched_tests"]) for row in fixbot),
            "stuck_reasons": sum(_escalated_stuck(row) for row in fixbot),
            "model_retries": sum(int(row.get("retries", 0)) for row in fixbot),
            "context_refusals": sum(int(row.get("context_refusals", 0)) for row in fixbot),
            "largest_request": max(
                (int(row.get("largest_request", 0)) for row in fixbot), default=0
            ),
            "attempts": dict(
                Counter(f"{a['verdict']}, {a['shape']}" for row in fixbot for a in row["attempts"])
            ),
        },
        "ratio_fixed": round(fix_fixed / one_fixed, 3) if both and one_fixed else None,
        "overlap": _overlap(both),
    }


def _escalated_stuck(row: Mapping[str, Any]) -> bool:
    return str(row["reason"]).startswith("stuck") or row.get("escalation") == "stuck"


def _by_category(categories: Iterable[str]) -> dict[str, int]:
    counts = Counter(categories)
    return {name: counts[name] for name in CATEGORIES if counts[name]}


def _overlap(both: Sequence[Result]) -> dict[str, int]:
    pairs = Counter(
        (bool(r.oneshot and r.oneshot["fixed"]), bool(r.fixbot and r.fixbot["fixed"])) for r in both
    )
    return {
        "both_fixed": pairs[(True, True)],
        "only_oneshot": pairs[(True, False)],
        "only_fixbot": pairs[(False, True)],
        "neither": pairs[(False, False)],
    }


COLUMNS = (
    ("task", 11),
    ("1-shot", 6),
    ("tokens", 7),
    ("s", 6),
    ("fixbot", 16),
    ("calls", 5),
    ("tokens", 7),
    ("s", 7),
    ("category", 8),
)


def _line(cells: Sequence[str]) -> str:
    padded = (cell.ljust(width) for cell, (_, width) in zip(cells, COLUMNS, strict=True))
    return "  ".join(padded).rstrip()


def table_row(result: Result) -> str:
    one, fix = result.oneshot, result.fixbot
    cells = [result.task.id]
    if one is None:
        cells += ["-", "-", "-"]
    else:
        cells += ["yes" if one["fixed"] else "no", str(one["tokens"]), f"{one['seconds']:.0f}"]
    if fix is None:
        cells += ["-", "-", "-", "-", "-"]
    else:
        status = f"{fix['status']} ({fix['exit_code']})"
        cells += [status, str(fix["model_calls"]), str(fix["tokens"]), f"{fix['seconds']:.0f}"]
        cells.append(fix["category"] or "-")
    return _line(cells)


def render_table(results: Sequence[Result], summary: Mapping[str, Any]) -> str:
    lines = [_line([name for name, _ in COLUMNS]), _line(["-" * w for _, w in COLUMNS])]
    lines += [table_row(r) for r in results]
    one, fix = summary["oneshot"], summary["fixbot"]
    lines.append("")
    if one["tasks"]:
        lines.append(
            f"one-shot: fixed {one['fixed']} of {one['tasks']} "
            f"({', '.join(one['fixed_tasks']) or 'none'}); {one['model_calls']} model calls, "
            f"{one['tokens']} tokens, {one['seconds']:.0f} s; replies: "
            f"{_counts(one['reply_shapes'])}; unchanged {one['unchanged']}, "
            f"test timeouts {one['test_timeouts']}, errors {one['errors']}"
        )
    if fix["tasks"]:
        lines.append(
            f"fixbot:   fixed {fix['fixed']} of {fix['tasks']} "
            f"({', '.join(fix['fixed_tasks']) or 'none'}); {fix['model_calls']} model calls, "
            f"{fix['tokens']} tokens, {fix['seconds']:.0f} s; failures: "
            f"{_counts(fix['failures'])} (escalated as stuck: {fix['stuck_reasons']}); "
            f"model calls retried: {fix['model_retries']}; requests refused as too long: "
            f"{fix['context_refusals']}; largest request {fix['largest_request']} tokens; "
            f"final diffs touching tests/: {fix['touched_tests']}"
        )
        lines.append(f"fixbot attempts (verdict, reply shape): {_counts(fix['attempts'])}")
    if one["tasks"] and fix["tasks"]:
        ratio = summary["ratio_fixed"]
        shown = "n/a (one-shot fixed none)" if ratio is None else f"{ratio:.2f}"
        lines.append(f"fixbot-fixed / one-shot-fixed: {shown}; {_counts(summary['overlap'])}")
    return "\n".join(lines) + "\n"


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name}: {n}" for name, n in counts.items()) or "-"


def header(settings: Settings, numbers: Sequence[int], sandbox: str) -> str:
    extra = settings.config_extra.strip()
    config = f"with appended: {extra!r}" if extra else "untouched (fixbot's defaults)"
    lines = [
        f"fixrate: {settings.model} at {settings.base_url}; sides: {', '.join(settings.sides)}",
        f"tasks ({len(numbers)}): {describe_tasks(numbers)}",
    ]
    if "oneshot" in settings.sides:
        lines.append(
            f"one-shot: 1 call at temperature 0 (timeout {settings.timeout:g} s), the first "
            f"```python block as solution.py, `{' '.join(TEST_ARGV)}` in {sandbox} "
            f"({TEST_TIMEOUT_SECONDS:g} s)"
        )
    if "fixbot" in settings.sides:
        lines.append(
            f"fixbot {_version()}: `fixbot fix REPO --json --sandbox bwrap` "
            f"(at most {settings.fixbot_timeout:g} s); .fixbot.yml {config}"
        )
    return "\n".join(lines) + "\n"


def _version() -> str:
    """fixbot's version and this checkout's commit (with `+dirty` for uncommitted changes)."""
    try:
        version = metadata.version("fixbot")
    except metadata.PackageNotFoundError:
        version = "(not installed)"
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run([*git, "status", "--porcelain", "--", "fixbot"], capture_output=True)
    commit = head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    return f"{version} at {commit}" if commit else version


# --- the command line ---


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tasks", type=parse_tasks, default="0-39", help="e.g. 0-39, 0,4,8")
    parser.add_argument("--only", choices=["oneshot", "fixbot", "both"], default="both")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--base-url", default=DEFAULT_BASE_URL)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per model call")
    parser.add_argument(
        "--fixbot-timeout", type=float, default=2400.0, help="seconds one fixbot run may take"
    )
    parser.add_argument(
        "--fixbot-config-extra", default="", metavar="YAML", help="appended to .fixbot.yml"
    )
    parser.add_argument("--jobs", type=int, default=1, help="tasks at once (default 1)")
    parser.add_argument("--out", type=Path, help="keep rows and evidence under OUT/TASK/")
    parser.add_argument("--resume", action="store_true", help="skip what --out already holds")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--data", type=Path, default=DATA, help=f"default: {DATA}")
    args = parser.parse_args(argv)
    if not (args.data / "make_repos.py").is_file() or not (args.data / JSONL).is_file():
        parser.error(f"no make_repos.py and {JSONL} in {args.data}")
    available = count_tasks(args.data)
    if max(args.tasks) >= available:
        parser.error(f"--tasks: the data has tasks 0..{available - 1}")
    if args.resume and args.out is None:
        parser.error("--resume needs --out")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return args


def settings_from(args: argparse.Namespace) -> Settings:
    return Settings(
        model=args.model,
        base_url=args.base_url,
        api_key=os.environ.get("OPENAI_API_KEY") or "local",
        timeout=args.timeout,
        fixbot_timeout=args.fixbot_timeout,
        config_extra=args.fixbot_config_extra,
        sides=SIDES if args.only == "both" else (args.only,),
    )


@contextmanager
def oneshot_seams(settings: Settings) -> Iterator[Seams | None]:
    if "oneshot" not in settings.sides:
        yield None
        return
    seams = fixbot_seams(settings.model, settings.base_url, settings.api_key, settings.timeout)
    try:
        yield seams
    finally:
        seams.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    settings = settings_from(args)
    if args.out is not None:
        problem = check_out_dir(args.out, settings, args.resume)
        if problem:
            print(f"fixrate: {problem}", file=sys.stderr)
            return 2
    store = Store(args.out)
    with (
        tempfile.TemporaryDirectory(prefix="fixrate-") as scratch,
        oneshot_seams(settings) as seams,
    ):
        sandbox = seams.sandbox if seams is not None else "bwrap"
        print(header(settings, args.tasks, sandbox), file=sys.stderr if args.json else sys.stdout)
        sys.stdout.flush()
        tasks = build_repos(args.data, Path(scratch) / "repos", args.tasks)
        results = run_all(tasks, settings, seams, store, args.resume, args.jobs)
    summary = totals(results)
    if args.json:
        rows = [{"task": r.task.id, "oneshot": r.oneshot, "fixbot": r.fixbot} for r in results]
        data = {"settings": settings.recorded(), "sides": list(settings.sides), "rows": rows}
        print(json.dumps({**data, "totals": summary}, sort_keys=True))
    else:
        print(render_table(results, summary), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
