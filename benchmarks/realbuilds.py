"""fixbot on real projects' red builds: the real-build regression corpus, one case at a time.

Each case of `benchmarks/realbuilds/cases.toml` (see benchmarks/realcorpus.py) is a historical
bug fix of a real project, fetched from a git mirror at benchmark time and materialised as the
failing commit it fixed: the fix commit with its source half reverted, its tests kept, and a
`.fixbot.yml` with the project's own CI setup and test command. For each case:

* **bare**: a plain virtualenv built with the case's setup commands, then the test command on
  the failing commit (timed: the bare suite time) and again with the historical fix applied;
  outside fixbot. It checks the case: the expected tests fail without the fix, nothing fails
  with it.
* **fixbot**: a scripted OpenAI-compatible server on 127.0.0.1 (tests/fake_openai.py) answers
  every request with the historical fix as a fenced unified diff, and
  `python -m fixbot fix REPO --sandbox bwrap --base-url URL --model scripted --json` runs from
  `--fixbot-root` (default: this checkout) with PYTHONPATH set to it, on a clone of its own.

It prints, per case, whether fixbot fixed it, escalated or stopped with an error (exit code and
reason), the cost ratio (fixbot's wall time / the bare suite time), whether any run was called
tampered, and whether a quarantine hid one of the case's failing tests; then the totals. Each
case's row (every measured field, the fixbot commit, the case id) is one JSON line in
`OUT/rows.jsonl`, written as soon as it is measured; commit them as
`benchmarks/results/realbuilds-<date>.jsonl`. `--table ROWS...` renders the summary from rows
already written; `--write ROWS...` (one file per run) rewrites the generated blocks of
docs/benchmarks.md (the table) and README.md (one line) from committed rows, never typed
(tests/test_realbuilds_figures.py checks they are current).

    python benchmarks/realbuilds.py [--cases all|dev|heldout|PROJECT|ID,...] [--mirrors DIR]
        [--out DIR] [--fixbot-root PATH] [--resume] [--bare-only] [--no-bare]
        [--fixbot-timeout S] [--fixbot-config-extra YAML] [--manifest FILE]
    python benchmarks/realbuilds.py --table benchmarks/results/realbuilds-DATE.jsonl
        [--format text|markdown]
    python benchmarks/realbuilds.py --write benchmarks/results/realbuilds-DATE-run1.jsonl [...]

`--mirrors` (default /work/.mirror) holds one git mirror per project, `OWNER+NAME/repo` (what
the fetch tool brings, e.g. `github:pypa/packaging`); a missing one stops the run before any
case, naming how to get it. The prepare steps install from the package index (fixbot's with
the network in its sandbox, the bare one in a virtualenv), so the index must be reachable.
`--bare-only` checks the corpus without fixbot (the rows then have no fixbot fields).
`--bare-from ROWS...` takes each case's bare fields from its last earlier row when they show the
case holds (same failing commit, else the case stops), recorded as `bare_from`; the other cases
run bare.
`--fixbot-config-extra YAML` is appended to every case's `.fixbot.yml` on fixbot's side only
(an experiment: a longer sandbox timeout, ...); the rows record it as `config_extra`.
Exit code 0 when the benchmark ran, whatever it fixed; 2 for a usage error or a missing mirror.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.realcorpus import (  # noqa: E402
    DEFAULT_MIRRORS,
    MANIFEST,
    Case,
    CorpusError,
    Materialised,
    apply_fix,
    canonical_test_id,
    fix_lines_shown,
    is_flaky,
    load_corpus,
    materialise,
    mirror_of,
    prepare_venv,
    run_suite,
)
from tests.fake_openai import ScriptedOpenAI  # noqa: E402

SCHEMA = 1
MODEL = "scripted"
REPLIES = 64  # more than any run asks for: every request gets the historical fix
_CAP = 1500  # characters of a reason, a problem or a log tail kept in a row
_TAMPERED_WORDS = ("tampered", "inconsistent with pytest's own")


def progress(message: str) -> None:
    print(f"realbuilds: {message}", file=sys.stderr, flush=True)


# --- the fixbot side ---


def fixbot_commit(root: Path) -> str:
    """The fixbot checkout's commit, `+dirty` when fixbot/ has uncommitted changes."""
    git = ["git", "-C", str(root)]
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run([*git, "status", "--porcelain", "--", "fixbot"], capture_output=True)
    commit = head.stdout.strip() or "unknown"
    return commit + ("+dirty" if dirty.stdout.strip() else "")


def fixbot_code(root: Path) -> str:
    """The last commit that changed fixbot/ (two checkouts with the same one run the same
    fixbot, whatever else their branches changed)."""
    done = subprocess.run(
        ["git", "-C", str(root), "log", "-1", "--format=%H", "--", "fixbot"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or "unknown"


def run_fixbot(
    built: Materialised, fixbot_root: Path, timeout: float, keep: Path
) -> dict[str, Any]:
    """fixbot on the failing commit, the scripted server answering with the historical fix."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(fixbot_root), os.environ.get("PYTHONPATH", "")])
        ),
        "OPENAI_API_KEY": "realbuilds-no-key",  # never the model name: keys are redacted
    }
    env.pop("OPENAI_BASE_URL", None)
    env.pop("FIXBOT_MODEL", None)
    keep.mkdir(parents=True, exist_ok=True)
    stderr = keep / "fixbot-stderr.log"
    requests: list[dict[str, Any]] = []

    def answer(body: dict[str, Any]) -> str:
        requests.append(body)
        return built.reply()

    old = {path: (built.repo / path).read_text(encoding="utf-8") for path in built.case.source}
    with ScriptedOpenAI([answer] * REPLIES) as server:
        argv = [sys.executable, "-m", "fixbot", "fix", str(built.repo), "--sandbox", "bwrap"]
        argv += ["--base-url", server.base_url, "--model", MODEL, "--json"]
        started = time.monotonic()
        returncode, stdout, timed_out = _run(argv, fixbot_root, env, timeout, stderr)
        seconds = time.monotonic() - started
        calls = server.completions
    out = built.repo / ".fixbot" / "out"
    for name in ("evidence.json", "report.md", "fix.diff"):
        if (out / name).is_file():
            shutil.copy2(out / name, keep / name)
    summary = _last_json_object(stdout)
    evidence = _read_json(out / "evidence.json")
    fields = _fixbot_fields(
        built.case, summary, evidence, returncode, seconds, timed_out, calls, stderr
    )
    if requests:  # whether fixbot's first ask showed the model the lines the fix changes
        first = "\n".join(str(m.get("content", "")) for m in requests[0].get("messages", []))
        shown, runs = fix_lines_shown(built.fix_diff, old, first)
        fields["first_request_shows_fix"] = [shown, runs]
    return fields


def _run(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float, stderr: Path
) -> tuple[int, str, bool]:
    with stderr.open("wb") as err:
        child = subprocess.Popen(
            list(argv),
            cwd=cwd,
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
    return child.returncode, out.decode("utf-8", "replace"), timed_out


def _last_json_object(text: str) -> dict[str, Any]:
    for line in reversed(text.splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _fixbot_fields(
    case: Case,
    summary: Mapping[str, Any],
    evidence: Mapping[str, Any],
    returncode: int,
    seconds: float,
    timed_out: bool,
    calls: int,
    stderr: Path,
) -> dict[str, Any]:
    status = str(summary.get("status") or evidence.get("status") or "error")
    reason = str(summary.get("reason") or evidence.get("reason") or "")
    log_tail = _log_tail(stderr)
    if timed_out:
        status, reason = "error", f"fixbot ran past --fixbot-timeout ({seconds:.0f} s)"
    elif not summary and not evidence:
        reason = f"exit code {returncode}, no summary: {log_tail[-600:]}"
    baseline = evidence.get("baseline") or {}
    quarantined = {str(k): str(v) for k, v in (baseline.get("quarantined") or {}).items()}
    expected = {canonical_test_id(t) for t in case.failing}
    hidden = hidden_tests(quarantined, case.failing)
    baseline_failing = sorted(
        canonical_test_id(t)
        for t, r in (baseline.get("tests") or {}).items()
        if isinstance(r, Mapping) and r.get("outcome") in ("failed", "error")
    )
    tampering = sorted(set(_tampering(evidence)))
    attempts = evidence.get("attempts") or []
    return {
        "status": status,
        "exit_code": returncode,
        "fixed": status == "fixed",
        "escalation": str(evidence.get("escalation") or summary.get("escalation") or ""),
        "reason": reason[:_CAP],
        "fixbot_seconds": round(seconds, 2),
        "timed_out": timed_out,
        "model_calls": calls,
        "attempts": len(attempts),
        "verdicts": [str(a.get("verdict", "")) for a in attempts],
        "attempt_problems": [
            str(p)[:_CAP] for a in attempts for p in (a.get("problems") or [])[:3]
        ][:6],
        "baseline_status": str(baseline.get("status", "")),
        "baseline_checks": [
            {"name": c.get("name"), "status": c.get("status"), "summary": c.get("summary")}
            for c in baseline.get("checks") or []
        ],
        "baseline_failing": baseline_failing[:200],
        "baseline_has_expected": bool(expected) and expected <= set(baseline_failing),
        "classification": str(evidence.get("classification", "")),
        "flaky_tests": list(evidence.get("flaky_tests") or [])[:50],
        "tampered": bool(tampering) or any(w in reason for w in _TAMPERED_WORDS),
        "tampering": [t[:_CAP] for t in tampering[:10]],
        "quarantined": dict(list(sorted(quarantined.items()))[:200]),
        "quarantined_count": len(quarantined),
        "hidden_by_quarantine": hidden,
        "fix_diff_matches": bool(evidence.get("diff")) and _same_change(evidence, case),
        "log_tail": "" if status == "fixed" else log_tail[-_CAP:],
    }


def hidden_tests(quarantined: Iterable[str], failing: Iterable[str]) -> list[str]:
    """The case's failing tests that a quarantine took out of the pass definition: quarantined
    themselves, or inside a quarantined module or class (a collection error quarantines the
    whole module)."""
    gone = {canonical_test_id(t) for t in quarantined}
    return sorted(
        t
        for t in {canonical_test_id(f) for f in failing}
        if any(t == q or t.startswith(q + ".") for q in gone)
    )


def row_hidden(row: Mapping[str, Any]) -> list[str]:
    """hidden_tests from a row's own fields (rows before the prefix rule recorded exact ids)."""
    return hidden_tests(row.get("quarantined") or {}, row.get("expected_failing") or [])


def _tampering(value: Any) -> Iterable[str]:
    """Every reason a run in the evidence was called tampered (a `tampered` status, or its
    `tampering` list), wherever it is recorded: baseline, attempts, verification."""
    if isinstance(value, Mapping):
        if value.get("status") == "tampered":
            yield from (str(t) for t in value.get("tampering") or ["(status tampered)"])
        for key, item in value.items():
            if key != "tampering":
                yield from _tampering(item)
    elif isinstance(value, list):
        for item in value:
            yield from _tampering(item)


def _same_change(evidence: Mapping[str, Any], case: Case) -> bool:
    """The verified diff changes exactly the case's source files."""
    paths = set()
    for line in str(evidence.get("diff", "")).splitlines():
        if line.startswith("+++ b/"):
            paths.add(line[len("+++ b/") :])
    return paths == set(case.source)


def _log_tail(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-4000:]
    except OSError:
        return ""


# --- the bare side ---


def run_bare(built: Materialised, scratch: Path, keep: Path) -> dict[str, Any]:
    """The case's setup in a plain virtualenv, then its test command without and with the
    historical fix: the bare suite time, and whether the case holds."""
    log = keep / "bare.log"
    log.unlink(missing_ok=True)
    venv = scratch / "venv"
    steps = prepare_venv(built.repo, venv, built.case, log)
    fields: dict[str, Any] = {
        "bare_setup_seconds": round(sum(s.seconds for s in steps), 2),
        "bare_setup_ok": all(s.ok for s in steps),
    }
    if not fields["bare_setup_ok"]:
        failed = next(s for s in steps if not s.ok)
        fields["bare_error"] = f"setup `{failed.command}` exit {failed.returncode}: "
        fields["bare_error"] += failed.tail[-_CAP:]
        return fields
    before = run_suite(built.repo, venv, built.case, log.with_name("bare-failing.log"))
    apply_fix(built)
    after = run_suite(built.repo, venv, built.case, log.with_name("bare-fixed.log"))
    fields.update(
        {
            "bare_seconds": before.seconds,
            "bare_ran": before.ran,
            "bare_returncode": before.returncode,
            "bare_failing": list(before.failing),
            "bare_fixed_seconds": after.seconds,
            "bare_fixed_ran": after.ran,
            "bare_fixed_returncode": after.returncode,
            "bare_fixed_failing": list(after.failing),
        }
    )
    fields["bare_ok"] = bare_holds(built.case, fields)
    if before.timed_out or after.timed_out:
        fields["bare_error"] = "a bare suite run timed out"
    return fields


def bare_holds(case: Case, fields: Mapping[str, Any]) -> bool:
    """The case holds: exactly its expected tests fail without the fix, none with it (the
    project's tests known to be flaky upstream aside, either way)."""
    expected = {canonical_test_id(t) for t in case.failing}

    def steady(tests: Iterable[str]) -> set[str]:
        return {t for t in tests if t in expected or not is_flaky(t, case.project.flaky)}

    failing_after = steady(fields.get("bare_fixed_failing") or ())
    return (
        bool(expected)
        and steady(fields.get("bare_failing") or ()) == expected
        and not failing_after
        and (fields.get("bare_fixed_returncode") == 0 or bool(fields.get("bare_fixed_failing")))
    )


# --- one case, all cases ---


def measure(
    case: Case,
    args: argparse.Namespace,
    commit: str,
    out: Path,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "schema": SCHEMA,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "fixbot_commit": commit,
        "case": case.id,
        "project": case.project.name,
        "split": case.split,
        "fix": case.fix,
        "expected_failing": list(case.failing),
        "config_extra": args.fixbot_config_extra,
        "machine": {"cpus": os.cpu_count(), "load1": round(os.getloadavg()[0], 2)},
    }
    keep = out / case.id
    keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"realbuilds-{case.id}-") as scratch_name:
        scratch = Path(scratch_name)
        earlier = args.bare_rows.get(case.id)
        if earlier is not None and not bare_holds(case, earlier):
            earlier = None  # measured again: the earlier runs do not show the case holds
        if earlier is not None:
            row.update(earlier, bare_ok=True)
        elif not args.no_bare:
            bare = materialise(case, args.mirrors, scratch / "bare" / "repo")
            row["failing_commit"] = bare.failing_commit
            row.update(run_bare(bare, scratch / "bare", keep))
        if not args.bare_only:
            built = materialise(
                case, args.mirrors, scratch / "fixbot" / "repo", args.fixbot_config_extra
            )
            if earlier is not None and earlier.get("failing_commit") != built.failing_commit:
                raise CorpusError(
                    f"--bare-from measured {earlier.get('failing_commit')}, "
                    f"the case now builds {built.failing_commit}"
                )
            row["failing_commit"] = built.failing_commit
            (keep / "historical-fix.diff").write_text(built.fix_diff, encoding="utf-8")
            row.update(run_fixbot(built, args.fixbot_root, args.fixbot_timeout, keep))
            bare_seconds = row.get("bare_seconds")
            row["cost_ratio"] = (
                round(row["fixbot_seconds"] / bare_seconds, 2) if bare_seconds else None
            )
    return row


def manifest_order(manifest: Path) -> list[str]:
    try:
        return [case.id for case in load_corpus(manifest).cases]
    except CorpusError:
        return []


def read_rows(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Rows from JSON-lines files; a case measured twice keeps its last row."""
    by_case: dict[str, dict[str, Any]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                by_case[row["case"]] = row
    return list(by_case.values())


def bare_rows(paths: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """The bare fields of earlier rows, by case (the bare runs do not involve fixbot): rows
    whose bare runs completed, each marked with where and when it was measured (whether the
    case holds is judged again against the manifest, `bare_holds`)."""
    found = {}
    for path in paths:
        for row in read_rows([path]):
            if "bare_fixed_failing" in row and not row.get("bare_error"):  # the last wins
                fields = {k: v for k, v in row.items() if k.startswith("bare_")}
                fields["failing_commit"] = row.get("failing_commit")
                fields["bare_from"] = f"{path} {row.get('date', '')}"
                found[str(row["case"])] = fields
    return found


def run_cases(cases: Sequence[Case], args: argparse.Namespace) -> list[dict[str, Any]]:
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    rows_file = out / "rows.jsonl"
    done = {r["case"]: r for r in read_rows([rows_file])} if rows_file.exists() else {}
    commit = "" if args.bare_only else fixbot_commit(args.fixbot_root)
    code = "" if args.bare_only else fixbot_code(args.fixbot_root)
    rows = []
    for case in cases:
        if args.resume and case.id in done:
            rows.append(done[case.id])
            continue
        progress(f"{case.id} ({case.project.github} {case.fix[:10]}) ...")
        try:
            row = {**measure(case, args, commit, out), "fixbot_code": code}
        except CorpusError as exc:
            row = {
                "schema": SCHEMA,
                "case": case.id,
                "project": case.project.name,
                "split": case.split,
                "fixbot_commit": commit,
                "status": "error",
                "reason": f"the case could not be materialised: {exc}",
            }
        with rows_file.open("a", encoding="utf-8") as lines:
            lines.write(json.dumps(row, sort_keys=True) + "\n")
        progress(f"{case.id}: {_note(row)}")
        rows.append(row)
    return rows


def _note(row: Mapping[str, Any]) -> str:
    parts = []
    if "bare_ok" in row or "bare_error" in row:
        bare = "ok" if row.get("bare_ok") else f"NOT OK {row.get('bare_error', '')[:200]}"
        parts.append(
            f"bare {bare} ({row.get('bare_seconds', '-')} s, failing "
            f"{row.get('bare_failing', [])}, with the fix {row.get('bare_fixed_failing', [])})"
        )
    if "status" in row:
        hidden = row_hidden(row)
        parts.append(
            f"fixbot {row['status']} (exit {row.get('exit_code', '-')}) in "
            f"{row.get('fixbot_seconds', '-')} s, ratio {row.get('cost_ratio', '-')}"
            f"{', TAMPERED' if row.get('tampered') else ''}"
            f"{', HIDDEN ' + str(hidden) if hidden else ''}"
            f": {str(row.get('reason', ''))[:300]}"
        )
    return "; ".join(parts)


# --- the table ---


def outcome(row: Mapping[str, Any]) -> str:
    if "status" not in row:
        return "-"
    if row.get("fixed"):
        return "fixed"
    return "escalated" if row["status"] == "escalated" else str(row["status"])


def quarantined_passing_bare(row: Mapping[str, Any]) -> list[str]:
    """The baseline's quarantined tests that passed in the bare run of the same commit: the
    project's CI passes them, so the quarantine took them out of the pass definition for
    fixbot's own reasons (a plugin it did not load, a package it shadowed, ...)."""
    if "bare_failing" not in row:
        return []
    failing = set(row["bare_failing"])
    return sorted(t for t in row.get("quarantined") or {} if canonical_test_id(t) not in failing)


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    measured = [r for r in rows if "status" in r]
    ratios = [r["cost_ratio"] for r in measured if r.get("cost_ratio")]
    fixed = sum(bool(r.get("fixed")) for r in measured)
    commits = sorted({str(r.get("fixbot_commit", "")) for r in measured})
    return {
        "cases": len(rows),
        "fixbot_commits": commits,
        "fixed": fixed,
        "fixed_percent": round(100 * fixed / len(measured), 1) if measured else None,
        "escalated": sum(outcome(r) == "escalated" for r in measured),
        "error": sum(outcome(r) == "error" for r in measured),
        "tampered": sum(bool(r.get("tampered")) for r in measured),
        "hidden_by_quarantine": sum(bool(row_hidden(r)) for r in measured),
        "quarantined_passing_bare": sum(bool(quarantined_passing_bare(r)) for r in measured),
        "cost_ratio_median": round(statistics.median(ratios), 2) if ratios else None,
        "cost_ratio_fixed_median": _median(
            [r["cost_ratio"] for r in measured if r.get("fixed") and r.get("cost_ratio")]
        ),
        # what a CI job pays too: its install as well as its suite
        "cost_ratio_with_setup_median": _median(
            [
                r["fixbot_seconds"] / (r["bare_setup_seconds"] + r["bare_seconds"])
                for r in measured
                if r.get("bare_seconds") and r.get("bare_setup_seconds") and r.get("fixbot_seconds")
            ]
        ),
        "bare_not_ok": sorted(str(r["case"]) for r in rows if r.get("bare_ok") is False),
        # cases whose first request showed every run of lines the historical fix changes
        "fix_shown": _fix_shown(measured),
        "by_split": {
            split: f"{sum(bool(r.get('fixed')) for r in measured if r.get('split') == split)}"
            f" of {sum(1 for r in measured if r.get('split') == split)}"
            for split in ("dev", "heldout")
        },
    }


def _fix_shown(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """'12 of 18': the cases whose first request showed all the lines their fix changes, of
    those whose rows record it (rows before the field: None)."""
    known = [r["first_request_shows_fix"] for r in rows if r.get("first_request_shows_fix")]
    if not known:
        return None
    return f"{sum(1 for shown, runs in known if runs and shown == runs)} of {len(known)}"


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


COLUMNS = (
    "case",
    "split",
    "outcome",
    "exit",
    "fixbot s",
    "bare s",
    "ratio",
    "tampered",
    "hidden",
    "quarantined",
    "reason",
)


def table_cells(row: Mapping[str, Any]) -> list[str]:
    reason = "" if row.get("fixed") else short_reason(str(row.get("reason", "")))
    ratio = row.get("cost_ratio")
    return [
        str(row["case"]),
        str(row.get("split", "")),
        outcome(row),
        str(row.get("exit_code", "-")),
        _number(row.get("fixbot_seconds")),
        _number(row.get("bare_seconds")),
        f"{ratio:.1f}x" if isinstance(ratio, int | float) else "-",
        "yes" if row.get("tampered") else "no",
        _hidden_cell(row),
        _quarantine_cell(row),
        reason,
    ]


def short_reason(reason: str) -> str:
    """A reason on one line: its first line, then its first listed item (`- why`) or else its
    last line (an error's reason ends with the output that says what went wrong)."""
    lines = [" ".join(line.split()) for line in reason.splitlines() if line.strip()]
    if not lines:
        return ""
    first = _clip(lines[0].removesuffix("; last output:").removesuffix(":"), 90)
    if len(lines) == 1:
        return first
    items = [line.removeprefix("- ") for line in lines[1:] if line.startswith("- ")]
    return f"{first} ... {_clip(items[0] if items else lines[-1], 110)}"


def _clip(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 3] + "..."


def _hidden_cell(row: Mapping[str, Any]) -> str:
    hidden = row_hidden(row)
    return f"{len(hidden)} of {len(row.get('expected_failing') or [])}" if hidden else "no"


def _quarantine_cell(row: Mapping[str, Any]) -> str:
    """How many tests the baseline quarantined, and how many of those passed bare."""
    count = int(row.get("quarantined_count") or 0)
    if not count:
        return "0"
    passing = len(quarantined_passing_bare(row))
    return f"{count} ({passing} pass bare)" if "bare_failing" in row else str(count)


def _number(value: Any) -> str:
    return f"{value:.0f}" if isinstance(value, int | float) else "-"


def render(rows: Sequence[Mapping[str, Any]], form: str = "text", order: Sequence[str] = ()) -> str:
    """The table, one row per case in `order` (the manifest's; then by name), and the totals."""
    rank = {case: i for i, case in enumerate(order)}
    ordered = sorted(rows, key=lambda r: (rank.get(str(r["case"]), len(rank)), str(r["case"])))
    cells = [table_cells(r) for r in ordered]
    totals = summary(rows)
    if form == "markdown":
        lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
    else:
        widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(COLUMNS)]
        widths[-1] = 0
        lines = ["  ".join(h.ljust(w) for h, w in zip(COLUMNS, widths, strict=True)).rstrip()]
        lines += [
            "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells
        ]
    lines += ["", _totals_line(totals)]
    return "\n".join(lines) + "\n"


def _totals_line(t: Mapping[str, Any]) -> str:
    measured = t["fixed"] + t["escalated"] + t["error"]
    return (
        f"fixed {t['fixed']} of {measured} ({t['fixed_percent']}%; dev {t['by_split']['dev']}, "
        f"heldout {t['by_split']['heldout']}); escalated {t['escalated']}, error {t['error']}; "
        f"tampered {t['tampered']}; "
        f"cases where a quarantine hid a failing test {t['hidden_by_quarantine']}, "
        f"took tests that pass bare {t['quarantined_passing_bare']}; "
        f"cost ratio median {t['cost_ratio_median']}x "
        f"(fixed cases {t['cost_ratio_fixed_median']}x; against setup + suite "
        f"{t['cost_ratio_with_setup_median']}x); "
        f"bare checks not ok: {', '.join(t['bare_not_ok']) or 'none'}; "
        + (
            f"the first request showed the lines the fix changes in {t['fix_shown']}; "
            if t.get("fix_shown")
            else ""
        )
        + f"fixbot {', '.join(c[:12] for c in t['fixbot_commits']) or '-'}"
    )


# --- the figures in the docs: generated blocks, rewritten by --write ---

END_GENERATED = "<!-- end generated -->"
TABLE_BLOCK = ("docs/benchmarks.md", "realbuilds-table")
LINE_BLOCK = ("README.md", "realbuilds-line")


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def _run_line(t: Mapping[str, Any]) -> str:
    measured = t["fixed"] + t["escalated"] + t["error"]
    return (
        f"fixed {t['fixed']} of {measured} (held out: {t['by_split']['heldout']}), "
        f"escalated {t['escalated']}, errors {t['error']}, tampered {t['tampered']}, "
        f"a quarantine hid a failing test in {t['hidden_by_quarantine']}; "
        f"cost ratio median {t['cost_ratio_median']}x the bare suite"
    )


def figures(paths: Sequence[Path], order: Sequence[str] = ()) -> dict[str, str]:
    """The two generated blocks, by name: the docs' table (of the first rows file, with each
    run's totals) and the README's line (each run's totals). Several files: several runs."""
    runs = [read_rows([path]) for path in paths]
    names = [_shown(path) for path in paths]
    command = "python benchmarks/realbuilds.py --write " + " ".join(names)
    lines = [
        f"From the rows in {', '.join(f'`{n}`' for n in names)}, rendered by `{command}`"
        f" (fixbot {', '.join(c[:12] for c in summary(runs[0])['fixbot_commits'])}):",
        "",
        render(runs[0], "markdown", order).rstrip("\n").rsplit("\n\n", 1)[0],
        "",
    ]
    for name, rows in zip(names, runs, strict=True):
        lines.append(f"- `{name}`: {_totals_line(summary(rows))}")
    of = f" of the corpus's {len(order)}" if order else ""
    each = "; ".join(
        f"run {i}, {len(rows)} cases{of} ({len({str(r.get('project')) for r in rows})} "
        f"projects): {_run_line(summary(rows))}"
        for i, rows in enumerate(runs, 1)
    )
    line = (
        "Real builds (historical bugs of real PyPI projects, the model scripted to answer the "
        "real fix; [the corpus](docs/benchmarks.md#real-builds-the-regression-corpus)): "
        f"{each}."
    )
    return {TABLE_BLOCK[1]: "\n".join(lines) + "\n", LINE_BLOCK[1]: line + "\n"}


def generated_block(text: str, name: str) -> str | None:
    """The text between `<!-- generated: NAME -->` and the end marker, or None."""
    start = f"<!-- generated: {name} -->\n"
    if start not in text or END_GENERATED not in text.split(start, 1)[1]:
        return None
    return text.split(start, 1)[1].split(END_GENERATED, 1)[0]


def rows_named(block: str) -> list[Path]:
    """The rows files a generated block says it was rendered from (its first line)."""
    first = block.split("\n", 1)[0]
    return [ROOT / n for n in re.findall(r"`(benchmarks/results/[\w.-]+\.jsonl)`", first)]


def write_figures(paths: Sequence[Path], order: Sequence[str]) -> list[str]:
    """Rewrite the two blocks in place; the pages changed."""
    blocks = figures(paths, order)
    changed = []
    for page, name in (TABLE_BLOCK, LINE_BLOCK):
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        start = f"<!-- generated: {name} -->\n"
        if generated_block(text, name) is None:
            raise CorpusError(f"{page} has no `{start.strip()}` ... `{END_GENERATED}` block")
        head, rest = text.split(start, 1)
        new = head + start + blocks[name] + END_GENERATED + rest.split(END_GENERATED, 1)[1]
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


# --- the command line ---


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--cases", default="all", help="all, dev, heldout, a project, ids")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--out", type=Path, help="default: a new /tmp/realbuilds-DATE folder")
    parser.add_argument("--fixbot-root", type=Path, default=ROOT)
    parser.add_argument("--fixbot-timeout", type=float, default=2400.0)
    parser.add_argument(
        "--fixbot-config-extra",
        default="",
        metavar="YAML",
        help="appended to every case's .fixbot.yml (fixbot's side only), e.g. "
        "$'sandbox:\\n  timeout_seconds: 1200\\n'",
    )
    parser.add_argument("--resume", action="store_true", help="skip cases OUT already holds")
    parser.add_argument("--bare-only", action="store_true", help="check the cases, no fixbot")
    parser.add_argument("--no-bare", action="store_true", help="fixbot only (no cost ratio)")
    parser.add_argument(
        "--bare-from",
        type=Path,
        nargs="+",
        default=[],
        metavar="ROWS",
        help="take each case's bare runs from earlier rows (where their check held) instead "
        "of running them again; the rows record it as bare_from",
    )
    parser.add_argument("--table", type=Path, nargs="+", metavar="ROWS", help="render rows")
    parser.add_argument(
        "--write",
        type=Path,
        nargs="+",
        metavar="ROWS",
        help="rewrite the generated figures (docs/benchmarks.md's table, README.md's line) "
        "from committed rows, one file per run",
    )
    parser.add_argument("--format", choices=["text", "markdown"], default="text")
    parser.add_argument("--json", action="store_true", help="the totals as JSON (with --table)")
    args = parser.parse_args(argv)
    if args.bare_only and args.no_bare:
        parser.error("--bare-only and --no-bare exclude each other")
    if args.resume and args.out is None:
        parser.error("--resume needs --out")
    if args.out is None:
        stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M%S")
        args.out = Path(tempfile.gettempdir()) / f"realbuilds-{stamp}"
    args.fixbot_root = args.fixbot_root.resolve()
    if args.bare_from and args.bare_only:
        parser.error("--bare-from and --bare-only exclude each other")
    args.bare_rows = bare_rows(args.bare_from)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.write:
        try:
            changed = write_figures(args.write, manifest_order(args.manifest))
        except CorpusError as exc:
            print(f"realbuilds: {exc}", file=sys.stderr)
            return 2
        progress(f"rewrote {', '.join(changed) or 'nothing (already current)'}")
        return 0
    if args.table:
        rows = read_rows(args.table)
        if args.json:
            print(json.dumps(summary(rows), indent=2, sort_keys=True))
        else:
            print(render(rows, args.format, manifest_order(args.manifest)), end="")
        return 0
    try:
        corpus = load_corpus(args.manifest)
        cases = corpus.select(args.cases)
        for project in {c.project.name: c.project for c in cases}.values():
            mirror_of(project, args.mirrors)
    except CorpusError as exc:
        print(f"realbuilds: {exc}", file=sys.stderr)
        return 2
    progress(f"{len(cases)} cases; rows and evidence in {args.out}")
    rows = run_cases(cases, args)
    print(render(rows, args.format, [c.id for c in corpus.cases]), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
