"""Failing first: which checks, and which of their tests, an attempt runs before the rest (pure).

The baseline says which checks failed, and for a test run which of its tests (quarantined ones
never: they make no pass). An attempt runs those first: a failing pytest check only its failing
tests, by node id; any other failing check whole (a unittest run, ruff, mypy, a command). Only
when they pass does the rest run (trial.py); a pass is always judged on a full run.

A pytest check is narrowed only when every one of its failing tests has a node id (pytest's own,
as the report channel records it, else the file its JUnit-style id names in the snapshot) and
its command's own positional arguments can be told from its options: the selection then replaces
them. Otherwise it runs whole. A narrowed run that cannot be read as one (a node id pytest did
not collect, a usage error) proves nothing either way: the check is run whole after all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath

from fixbot.commands import CheckSpec
from fixbot.records import CaseResult, CheckResult, failing_tests

Selection = Mapping[str, tuple[str, ...]]  # check name -> node ids to run; (): the whole check

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# pytest's options that take a value as the next word (plugins' common ones too): their value is
# not a positional argument. An unknown option is taken as a flag.
_VALUED = {
    "-k", "-m", "-p", "-c", "-o", "-W", "-r", "-n", "--rootdir", "--confcutdir", "--basetemp",
    "--deselect", "--ignore", "--ignore-glob", "--junitxml", "--junit-xml", "--junit-prefix",
    "--durations", "--durations-min", "--maxfail", "--tb", "--log-level", "--log-format",
    "--log-date-format", "--log-file", "--log-file-level", "--log-cli-level", "--import-mode",
    "--capture", "--color", "--code-highlight", "--override-ini", "--config-file",
    "--dist", "--maxprocesses", "--numprocesses", "--timeout", "--reruns", "--cov-report",
    "--cov-config", "--cov-fail-under", "--randomly-seed", "--asyncio-mode", "--ds",
    "--hypothesis-seed", "--hypothesis-profile", "--pyargs-root", "--doctest-glob",
}  # fmt: skip


def failing_first(
    baseline: CheckResult, checks: Sequence[CheckSpec], exists: Callable[[str], bool]
) -> Selection:
    """For each check that failed at baseline (gates never do), what an attempt runs first;
    empty for a baseline older than per-check records (then everything runs)."""
    runs = {run["name"]: run for run in baseline.get("checks", [])}
    counted = set(failing_tests(baseline))
    selection: dict[str, tuple[str, ...]] = {}
    for spec in checks:
        run = runs.get(spec.name)
        if run is None or run["gate"] or run["status"] == "passed":
            continue
        if spec.kind not in ("pytest", "unittest"):
            selection[spec.name] = ()
            continue
        failing = [t for t in run.get("failing", []) if t in counted]
        if not failing:
            continue  # every failure of it is quarantined: nothing there makes or breaks a pass
        ids = [node_id(t, baseline["tests"][t], exists) for t in failing]
        narrowed = spec.kind == "pytest" and all(ids) and positionals(spec.argv) is not None
        selection[spec.name] = tuple(i for i in ids if i) if narrowed else ()
    return selection


def node_id(test: str, case: CaseResult, exists: Callable[[str], bool]) -> str | None:
    """pytest's node id for a test: recorded, else from its JUnit-style id (`pkg.test_m.C::t[1]`
    -> `pkg/test_m.py::C::t[1]`) where that file is in the snapshot; None when unknown."""
    recorded = case.get("nodeid")
    if isinstance(recorded, str) and recorded:
        return recorded
    classname, _, name = test.partition("::")
    parts = classname.split(".")
    if not name or not all(_IDENTIFIER.fullmatch(part) for part in parts):
        return None
    for cut in range(len(parts), 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if exists(path):
            return "::".join([path, *parts[cut:], name])
    return None


def positionals(argv: Sequence[str]) -> list[int] | None:
    """The indexes of pytest's positional arguments in a pytest command line (the paths it
    collects); None when the words after pytest cannot be told apart."""
    start = _pytest_at(argv)
    if start is None:
        return None
    found: list[int] = []
    index = start
    while index < len(argv):
        word = argv[index]
        if word == "--":
            return [*found, *range(index + 1, len(argv))]
        if word.startswith("-"):  # `-k EXPR` takes the next word; `-kEXPR`, `--tb=short` not
            index += 2 if word in _VALUED else 1
            continue
        found.append(index)
        index += 1
    return found


def narrowed(argv: Sequence[str], node_ids: Sequence[str]) -> list[str]:
    """The command with its own positional arguments replaced by these node ids."""
    at = positionals(argv)
    if at is None:
        raise ValueError("not a pytest command whose arguments can be read")
    drop = set(at)
    return [w for i, w in enumerate(argv) if i not in drop] + list(node_ids)


def _pytest_at(argv: Sequence[str]) -> int | None:
    """Where pytest's own arguments begin: after `pytest`, `py.test` or `-m pytest`."""
    for index, word in enumerate(argv):
        if PurePosixPath(word).name in ("pytest", "py.test") and (
            index == 0 or argv[index - 1] == "-m" or not argv[index - 1].startswith("-")
        ):
            return index + 1
        if word == "-mpytest":
            return index + 1
    return None


def as_rerun(first: CheckResult, rerun: CheckResult) -> CheckResult:
    """The baseline's first (full) run as its reproductions saw it: only the tests they ran,
    and every test that failed (one a reproduction lost is not reproduced). Classification
    compares the runs over the same tests; the baseline itself keeps every test."""
    tests = {
        t: case
        for t, case in first["tests"].items()
        if t in rerun["tests"] or case["outcome"] in ("failed", "error")
    }
    return {**first, "tests": tests}


def pytest_arguments(argv: Sequence[str]) -> list[str]:
    """The check's own pytest options without its positional arguments (the paths it collects),
    for a pytest run of named node ids; [] when the words after pytest cannot be read."""
    start, at = _pytest_at(argv), positionals(argv)
    if start is None or at is None:
        return []
    drop = set(at)
    return [w for i, w in enumerate(argv) if i >= start and i not in drop]
