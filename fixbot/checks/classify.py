"""What kind of failure the baseline shows, decided before any model spend (pure).

Over the baseline's repeated runs of the untouched commit, a test is
  deterministic  failing in every run;
  flaky          failing in some runs and passing (or not collected) in others, or a case of
                 a parametrized test function another case of which does that;
  environmental  deterministic, but its failure points at the environment: its text names a
                 module that is not installed (or a file the install generates, like
                 `pkg/_version.py`), an installed package of another version, the network, a
                 service, a variable, a write to what the sandbox mounts read-only (a protected
                 test's data file: CI lets the test write it); or it was raised outside the
                 repository: in a test's setup or teardown with no frame of the repository in
                 its traceback (a plugin's fixture), or in its call inside a pytest plugin's
                 package (the environment's pytest11 entry points) with no frame of the code
                 under test (only the test's own file or a conftest.py) and not as a verdict (an
                 AssertionError, pytest.fail). A test that calls the project's code, which then
                 raises inside a library, is the code's.

The run is
  code         some deterministic failure is not the environment's: worth fixing. The flaky and
               the environmental tests are quarantined, each with its reason: outside the pass
               definition (verdict.py), named in the evidence and the report;
  flaky        nothing fails deterministically: no fix attempted;
  environment  every deterministic failure is the environment's: no fix attempted, and the
               reason says what to install.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from fixbot.records import CaseResult, CheckResult, PluginRecord, failing_tests
from fixbot.sandbox import WORKSPACE

Kind = Literal["code", "flaky", "environment"]

_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
# `from pkg import name` failing: pytest shows where pkg was found.
_CANNOT_IMPORT = re.compile(r"cannot import name '(\w+)' from '([\w.]+)' \(([^)\n]*)\)")
_VERSION_MODULE = re.compile(r"_{0,2}version(?:_info)?")  # what setuptools-scm/hatch-vcs write
_PY_PATH = re.compile(r"[\w./-]+\.py\b")
INSTALL_THE_PROJECT = "install the project in setup_command (e.g. python -m pip install -e .)"
_ENVIRONMENT = [
    (re.compile(p), why)
    for p, why in (
        (
            r"(?:socket\.gaierror|Name or service not known|Temporary failure in name resolution"
            r"|Network is unreachable|nodename nor servname)",
            "the network is not reachable (the checks run offline)",
        ),
        (r"(?:ConnectionRefusedError|Connection refused)", "a service is not running"),
        (
            r"(?:psycopg2?\.OperationalError|redis\.exceptions\.ConnectionError"
            r"|pymongo\.errors\.ServerSelectionTimeoutError|could not connect to server)",
            "a database or service is not reachable",
        ),
        (r"KeyError: '[A-Z][A-Z0-9_]{2,}'", "an environment variable is not set"),
        (r"command not found", "a program is not installed"),
        (
            r"cannot open shared object file",
            "a system library is not installed (in the sandbox's toolchain or image)",
        ),
        (
            # what CI lets a test write, the sandbox mounts read-only: the protected tests,
            # their data and configuration, the system; no change to the code makes it pass
            r"\[Errno 30\] Read-only file system",
            "it writes to a path the sandbox mounts read-only (the protected tests, their "
            "data or configuration, or the system); a test that must write gets a temporary "
            "folder (tmp_path)",
        ),
    )
]
# pytest's own words for a test whose fixture no conftest (protected) or plugin defines: at
# baseline, the environment's (a plugin not installed, or not loaded).
_MISSING_FIXTURE = re.compile(r"\bfixture '([A-Za-z_][\w]*)' not found")
FLAKY = "flaky: failed in some baseline runs and passed in others"


@dataclass(frozen=True)
class Classification:
    kind: Kind
    reason: str
    flaky_tests: tuple[str, ...] = ()
    # test -> why it is outside the pass definition (the flaky and the environmental ones)
    quarantined: Mapping[str, str] = field(default_factory=dict)


def classify(
    runs: Sequence[CheckResult], repo_files: Sequence[str], generated: Iterable[str] = ()
) -> Classification:
    """Classify the baseline from its repeated runs (at least one); `generated`: the paths
    the repository's build names as written at install time (generated_paths)."""
    sets = [set(failing_tests(run)) for run in runs]
    always = set(sets[0]).intersection(*sets[1:])
    seen = [set(run["tests"]) for run in runs]
    # Collected in some runs only (a module that fails to import now and then) is a flap too.
    flaps = set().union(*sets) - always
    flaps |= set().union(*seen) - set(seen[0]).intersection(*seen[1:])
    # One flapping case makes its whole test function flaky: a case of it failing in every run
    # is as likely the same coin falling twice (24 cases of a coin-flip test, two runs).
    families = {_family(t) for t in flaps}
    flaky = tuple(sorted(flaps | {t for t in always if _family(t) in families}))
    always -= set(flaky)
    quarantined = dict.fromkeys(flaky, FLAKY)
    if not always:
        return Classification(
            "flaky",
            f"flaky: {len(flaky)} test(s) failed in some baseline runs and passed in others "
            f"({', '.join(flaky[:5])}), and none failed in every run; fixbot does not fix "
            "flaky tests",
            flaky,
            quarantined,
        )
    first = runs[0]["tests"]
    hints = frozenset(generated)
    plugins = runs[0].get("environment", {}).get("plugins", [])
    causes = {
        t: environment_cause(first[t]["message"] + "\n" + first[t]["detail"], repo_files, hints)
        or raised_outside(first[t], plugins)
        for t in sorted(always)
    }
    environmental = {t: cause for t, cause in causes.items() if cause}
    quarantined.update({t: f"environment: {cause}" for t, cause in environmental.items()})
    if len(environmental) == len(always):
        return Classification(
            "environment",
            "environment: every failure comes from the environment, not the code: "
            + _grouped(environmental),
            flaky,
            quarantined,
        )
    aside = []
    if flaky:
        aside.append(f"{len(flaky)} flaky test(s) quarantined")
    if environmental:
        aside.append(f"{len(environmental)} left to the environment ({_grouped(environmental)})")
    more = f"; {'; '.join(aside)}" if aside else ""
    return Classification("code", f"the failures reproduce{more}", flaky, quarantined)


def _family(test: str) -> str:
    """The test function a case belongs to: its id without the parameters."""
    return test.split("[", 1)[0]


def with_quarantine(result: CheckResult, found: Classification) -> CheckResult:
    """The baseline result as the pass definition reads it: its quarantined tests marked."""
    if not found.quarantined:
        return result
    return {**result, "quarantined": dict(found.quarantined)}


def _grouped(causes: Mapping[str, str]) -> str:
    """'cause (test, test); cause (test)': each cause once, with the tests it breaks."""
    tests: dict[str, list[str]] = {}
    for test, cause in sorted(causes.items()):
        tests.setdefault(cause, []).append(test)
    parts = []
    for cause, names in tests.items():
        more = f", and {len(names) - 3} more" if len(names) > 3 else ""
        parts.append(f"{cause} ({', '.join(names[:3])}{more})")
    return "; ".join(parts)


def environment_cause(
    text: str, repo_files: Sequence[str], generated: frozenset[str] = frozenset()
) -> str:
    """Why this failure text points at the environment, and what to install; "" when it may
    be the code."""
    for match in _MISSING_MODULE.finditer(text):
        name = match.group(1)
        top = name.split(".")[0]
        if not _in_repository(top, repo_files):
            return (
                f"module {top!r} is not installed: install it in setup_command "
                f"(e.g. python -m pip install {top}, or the package that provides it)"
            )
        if _generated(name, repo_files, generated):
            return f"module {name!r} is generated when the project is installed: " + (
                INSTALL_THE_PROJECT
            )
    for match in _CANNOT_IMPORT.finditer(text):
        name, module, where = match.groups()
        if where.startswith(WORKSPACE + "/") or not where.startswith("/"):
            if _generated(f"{module}.{name}", repo_files, generated):
                return f"module '{module}.{name}' is generated when the project is installed: " + (
                    INSTALL_THE_PROJECT
                )
            continue  # the repository's own module: a name it lacks is the code's
        return (
            f"the installed {module!r} ({where}) has no {name!r}: install the version the "
            "project needs in setup_command"
        )
    if fixture := _MISSING_FIXTURE.search(text):
        return (
            f"the pytest fixture {fixture.group(1)!r} is not defined: the plugin that provides it "
            "is not installed in setup_command, or another installed package stops it from "
            "defining it"
        )
    for pattern, why in _ENVIRONMENT:
        if pattern.search(text):
            return why
    return ""


_SITE = re.compile(r"/(?:site|dist)-packages/([A-Za-z_][\w]*)(?:\.py|/)")
_PYTEST_ITSELF = frozenset({"pytest", "_pytest", "pluggy"})


def raised_outside(case: CaseResult, plugins: Sequence[PluginRecord]) -> str:
    """Why a failure raised outside the repository is the environment's, naming where; "" when
    it may be the code's (see the module docstring)."""
    frames, phase = case.get("frames") or [], case.get("phase", "")
    if not frames or "..." in frames:
        return ""  # some frames left out: one of them may be the repository's
    inside = [f.removeprefix(WORKSPACE + "/") for f in frames if f.startswith(WORKSPACE + "/")]
    innermost = frames[-1]
    what = case["message"].splitlines()[0][:160] if case["message"] else "an error"
    if phase in ("setup", "teardown") and not inside:
        where = _package(innermost, plugins) if _SITE.search(innermost) else innermost
        return (
            f"{where} raised in the test's {phase}, with no frame of the repository ({what}): "
            "install the versions the project's CI uses in setup_command"
        )
    if phase != "call" or case.get("assertion") or _plugin_of(innermost, plugins) is None:
        return ""
    own = case.get("nodeid", "").split("::")[0]
    if any(rel != own and rel.rsplit("/", 1)[-1] != "conftest.py" for rel in inside):
        return ""  # the code under test ran in it: the code's
    return (
        f"{_package(innermost, plugins)} raised inside itself, called by the test ({what}): "
        "install the versions the project's CI uses in setup_command"
    )


def _plugin_of(path: str, plugins: Sequence[PluginRecord]) -> PluginRecord | None:
    found = _SITE.search(path)
    module = found.group(1) if found else None
    return next((p for p in plugins if module in p["modules"]), None)


def _package(path: str, plugins: Sequence[PluginRecord]) -> str:
    """The installed package a frame's file is in, as the reason names it."""
    plugin = _plugin_of(path, plugins)
    found = _SITE.search(path)
    module = found.group(1) if found else "?"
    if plugin is not None:
        return f"the pytest plugin {plugin['dist']} {plugin['version']} ({module}, site-packages)"
    if module in _PYTEST_ITSELF:
        return f"pytest itself ({module}, site-packages)"
    return f"the installed package {module!r} (site-packages)"


def generated_paths(read: Callable[[str], str | None]) -> frozenset[str]:
    """The .py paths the repository's build configuration or .gitignore names (setuptools-scm's
    `write_to`/`version_file`, hatch-vcs's `version-file`...): files an install writes."""
    found: set[str] = set()
    for name in ("pyproject.toml", "setup.cfg", "setup.py", "hatch.toml", ".gitignore"):
        text = read(name) or ""
        found.update(path.lstrip("./") for path in _PY_PATH.findall(text))
    return frozenset(found)


def _generated(module: str, repo_files: Sequence[str], generated: frozenset[str]) -> bool:
    """A submodule of the repository's own package that is not in the repository, and that
    an install writes: named so by the build configuration, or a version module."""
    *package, leaf = module.split(".")
    if not package:
        return False
    tail = "/".join([*package, leaf])
    candidates = (f"{tail}.py", f"{tail}/__init__.py")
    if any(path == c or path.endswith("/" + c) for path in repo_files for c in candidates):
        return False  # it is there: the failure is something else
    declared = any(g == c or g.endswith("/" + c) for g in generated for c in candidates)
    return declared or bool(_VERSION_MODULE.fullmatch(leaf))


def _in_repository(module: str, repo_files: Sequence[str]) -> bool:
    """A module of that name is somewhere in the repository (then a missing import is code)."""
    for path in repo_files:
        parts = path.split("/")
        if module in parts[:-1] or parts[-1] in (f"{module}.py", f"{module}.pyi"):
            return True
    return False
