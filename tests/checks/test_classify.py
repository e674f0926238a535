"""Reproduction before spend: flaky and environment failures are recognised without a model."""

from __future__ import annotations

import pytest

from fixbot.checks import classify, generated_paths, imports_checked, with_quarantine
from fixbot.checks.baseline import own_packages
from fixbot.checks.classify import environment_cause, raised_outside
from fixbot.errors import EnvironmentProblem
from fixbot.records import CaseResult, CheckResult, EnvironmentRecord, PluginRecord

FILES = ["calc.py", "pkg/__init__.py", "pkg/util.py", "tests/test_calc.py"]


def run(**outcomes: tuple[str, str]) -> CheckResult:
    tests = {
        name: CaseResult(outcome=outcome, message=message, detail="")  # type: ignore[typeddict-item]
        for name, (outcome, message) in outcomes.items()
    }
    return CheckResult(
        status="tests_failed",
        exit_code=1,
        seconds=0.1,
        tests=tests,
        findings=[],
        log_tail="",
        commands=[],
    )


BUG = ("failed", "assert 1.5 == 2.0")


def test_a_failure_that_reproduces_is_code() -> None:
    found = classify([run(a=BUG, b=("passed", "")), run(a=BUG, b=("passed", ""))], FILES)
    assert found.kind == "code"


def test_a_test_that_passes_in_one_run_is_flaky() -> None:
    found = classify([run(a=("passed", ""), b=BUG), run(a=("passed", ""), b=("passed", ""))], FILES)
    assert found.kind == "flaky"
    assert found.flaky_tests == ("b",)
    assert "flaky" in found.reason and "b" in found.reason


def test_a_single_run_is_never_flaky() -> None:
    assert classify([run(a=BUG)], FILES).kind == "code"


@pytest.mark.parametrize(
    ("message", "cause"),
    [
        ("ModuleNotFoundError: No module named 'requests'", "module 'requests' is not installed"),
        ("ModuleNotFoundError: No module named 'yaml.constructor'", "module 'yaml'"),
        ("socket.gaierror: [Errno -3] Temporary failure in name resolution", "network"),
        ("OSError: [Errno 101] Network is unreachable", "network"),
        ("ConnectionRefusedError: [Errno 111] Connection refused", "service"),
        ("psycopg2.OperationalError: could not connect to server", "database"),
        ("KeyError: 'DATABASE_URL'", "environment variable"),
        ("OSError: [Errno 30] Read-only file system", "mounts read-only"),
        # pytest-codspeed defines `benchmark` only where pytest-benchmark is not importable.
        ("E       fixture 'benchmark' not found", "fixture 'benchmark' is not defined"),
    ],
)
def test_environment_causes(message: str, cause: str) -> None:
    assert cause in environment_cause(message, FILES)


@pytest.mark.parametrize(
    "message",
    [
        "assert 1.5 == 2.0",
        "ModuleNotFoundError: No module named 'pkg.missing'",  # pkg is the repo's own code
        "ModuleNotFoundError: No module named 'calc'",
        "KeyError: 'name'",  # an ordinary dict lookup, not an environment variable
        "ZeroDivisionError: division by zero",
    ],
)
def test_code_causes_are_not_environment(message: str) -> None:
    assert environment_cause(message, FILES) == ""


def test_environment_only_when_every_failure_is() -> None:
    missing = ("error", "ModuleNotFoundError: No module named 'requests'")
    assert classify([run(a=missing, b=missing)] * 2, FILES).kind == "environment"
    assert classify([run(a=missing, b=BUG)] * 2, FILES).kind == "code"


PASS = ("passed", "")


def test_a_flaky_neighbour_is_quarantined_and_the_deterministic_failure_is_code() -> None:
    found = classify([run(a=BUG, b=BUG, c=PASS), run(a=BUG, b=PASS, c=PASS)], FILES)
    assert found.kind == "code"
    assert found.flaky_tests == ("b",)
    assert dict(found.quarantined) == {
        "b": "flaky: failed in some baseline runs and passed in others"
    }
    assert "1 flaky test(s) quarantined" in found.reason


def test_only_flaky_failures_escalate_as_flaky() -> None:
    found = classify([run(a=BUG, b=PASS), run(a=PASS, b=BUG)], FILES)
    assert found.kind == "flaky"
    assert found.flaky_tests == ("a", "b")
    assert "none failed in every run" in found.reason


def test_a_test_collected_in_one_run_only_flaps() -> None:
    # A module that fails to import in one run: its error id there, its tests in the other.
    found = classify(
        [run(a=BUG, mod=("error", "collection failure")), run(a=BUG, **{"mod::t": PASS})], FILES
    )
    assert found.kind == "code"
    assert found.flaky_tests == ("mod", "mod::t")


def test_environmental_failures_beside_a_code_failure_are_quarantined_with_the_reason() -> None:
    missing = ("error", "ModuleNotFoundError: No module named 'numpy'")
    found = classify([run(a=BUG, b=missing)] * 2, FILES)
    assert found.kind == "code"
    assert found.quarantined["b"].startswith("environment: module 'numpy' is not installed")
    assert "python -m pip install numpy" in found.quarantined["b"]
    assert "a" not in found.quarantined


def test_an_environment_escalation_says_what_to_install_and_names_the_tests() -> None:
    missing = ("error", "ModuleNotFoundError: No module named 'numpy'")
    found = classify([run(a=missing, b=missing, c=PASS)] * 2, FILES)
    assert found.kind == "environment"
    assert "module 'numpy' is not installed" in found.reason
    assert "python -m pip install numpy" in found.reason
    assert "(a, b)" in found.reason


def test_with_quarantine_marks_the_baseline_for_the_pass_definition() -> None:
    first = run(a=BUG, b=BUG)
    found = classify([first, run(a=BUG, b=PASS)], FILES)
    marked = with_quarantine(first, found)
    assert marked["quarantined"] == {"b": found.quarantined["b"]}
    assert "quarantined" not in first  # a copy
    assert with_quarantine(first, classify([first, first], FILES)) is first


VERSION_FILES = [*FILES, "src/gen/__init__.py", "src/gen/core.py"]


@pytest.mark.parametrize(
    ("message", "generated"),
    [
        ("ModuleNotFoundError: No module named 'pkg._version'", frozenset()),
        ("ModuleNotFoundError: No module named 'gen.version'", frozenset()),
        (
            "ModuleNotFoundError: No module named 'gen._build_info'",
            frozenset({"src/gen/_build_info.py"}),
        ),
        (
            "ImportError: cannot import name '_version' from 'pkg' (/workspace/pkg/__init__.py)",
            frozenset(),
        ),
    ],
)
def test_a_module_the_install_generates_is_the_environment(
    message: str, generated: frozenset[str]
) -> None:
    cause = environment_cause(message, VERSION_FILES, generated)
    assert "is generated when the project is installed" in cause
    assert "setup_command" in cause and "pip install -e ." in cause


@pytest.mark.parametrize(
    "message",
    [
        "ModuleNotFoundError: No module named 'gen._build_info'",  # not declared generated
        "ModuleNotFoundError: No module named 'pkg.util'",  # it is there: something else
        "ImportError: cannot import name 'helper' from 'pkg' (/workspace/pkg/__init__.py)",
    ],
)
def test_a_missing_part_of_the_repository_is_still_code(message: str) -> None:
    assert environment_cause(message, VERSION_FILES) == ""


def test_a_name_missing_from_an_installed_package_is_the_environment() -> None:
    text = (
        "ImportError: cannot import name 'Mapping' from 'collections' "
        "(/usr/lib/python3.11/collections/__init__.py)"
    )
    cause = environment_cause(text, FILES)
    assert "the installed 'collections'" in cause and "has no 'Mapping'" in cause


def test_generated_paths_come_from_the_build_configuration_and_gitignore() -> None:
    files = {
        "pyproject.toml": '[tool.hatch.build.hooks.vcs]\nversion-file = "src/gen/_v.py"\n',
        ".gitignore": "build/\n/src/gen/_build_info.py\n*.pyc\n",
    }
    assert generated_paths(files.get) == frozenset({"src/gen/_v.py", "src/gen/_build_info.py"})


def test_one_flapping_case_makes_its_whole_test_function_flaky() -> None:
    # A coin-flip test with 3 cases over two runs: case 0 failed both times by chance.
    first = run(**{"t::coin[0]": BUG, "t::coin[1]": BUG, "t::coin[2]": PASS, "t::other": PASS})
    second = run(**{"t::coin[0]": BUG, "t::coin[1]": PASS, "t::coin[2]": BUG, "t::other": PASS})
    found = classify([first, second], FILES)
    assert found.kind == "flaky"
    assert found.flaky_tests == ("t::coin[0]", "t::coin[1]", "t::coin[2]")
    mixed = classify(
        [
            run(**{"t::coin[0]": BUG, "t::coin[1]": PASS, "t::real": BUG}),
            run(**{"t::coin[0]": BUG, "t::coin[1]": BUG, "t::real": BUG}),
        ],
        FILES,
    )
    assert mixed.kind == "code"
    assert set(mixed.quarantined) == {"t::coin[0]", "t::coin[1]"}


# --- raised outside the repository --------------------------------------------------------

SITE = "/fixbot-env/lib/python3.11/site-packages"
RUNNER = [f"{SITE}/_pytest/runner.py", f"{SITE}/pluggy/_callers.py", f"{SITE}/_pytest/python.py"]
TEST_FILE = "/workspace/tests/test_calc.py"
BENCHMARK = PluginRecord(
    dist="pytest_benchmark", version="5.2.3", names=["benchmark"], modules=["pytest_benchmark"]
)
NODEID = "tests/test_calc.py::test_speed"


def raised(phase: str, frames: list[str], message: str, *, assertion: bool = False) -> CaseResult:
    return CaseResult(
        outcome="error" if phase != "call" else "failed",
        message=message,
        detail="",
        nodeid=NODEID,
        phase=phase,
        frames=frames,
        assertion=assertion,
    )


NODEID_ERROR = "AttributeError: 'Function' object has no attribute '_nodeid'"


@pytest.mark.parametrize(
    ("case", "named"),
    [
        (  # a plugin's fixture fails in setup: not one frame of the repository
            raised("setup", [*RUNNER, f"{SITE}/pytest_benchmark/fixture.py"], NODEID_ERROR),
            "the pytest plugin pytest_benchmark 5.2.3 (pytest_benchmark, site-packages) raised "
            "in the test's setup",
        ),
        (  # in its teardown, inside a package that is no plugin
            raised("teardown", [*RUNNER, f"{SITE}/freezegun/api.py"], "TypeError: x"),
            "the installed package 'freezegun' (site-packages) raised in the test's teardown",
        ),
        (  # the test calls the plugin's fixture, which fails inside itself
            raised("call", [*RUNNER, TEST_FILE, f"{SITE}/pytest_benchmark/fixture.py"], "X"),
            "the pytest plugin pytest_benchmark 5.2.3 (pytest_benchmark, site-packages) raised "
            "inside itself",
        ),
        (  # through a conftest.py: the tests' side, which the fix does not change
            raised(
                "call",
                [
                    *RUNNER,
                    TEST_FILE,
                    "/workspace/tests/conftest.py",
                    f"{SITE}/pytest_benchmark/a.py",
                ],
                "X",
            ),
            "pytest_benchmark 5.2.3",
        ),
    ],
    ids=["plugin fixture in setup", "library in teardown", "plugin in call", "via conftest"],
)
def test_an_error_raised_outside_the_repository_is_the_environments(
    case: CaseResult, named: str
) -> None:
    assert named in raised_outside(case, [BENCHMARK])


@pytest.mark.parametrize(
    "case",
    [
        # The test calls the project's code, which raises inside a library: the code's.
        raised("call", [*RUNNER, TEST_FILE, "/workspace/calc.py", f"{SITE}/yaml/__init__.py"], "E"),
        # The plugin calls the project's code, which raises: the code's.
        raised(
            "call", [*RUNNER, TEST_FILE, f"{SITE}/pytest_benchmark/f.py", "/workspace/calc.py"], "E"
        ),
        # The plugin calls the project's code, which calls back into the plugin: the code's.
        raised(
            "call",
            [
                *RUNNER,
                TEST_FILE,
                f"{SITE}/pytest_benchmark/f.py",
                "/workspace/calc.py",
                f"{SITE}/pytest_benchmark/g.py",
            ],
            "E",
        ),
        # A plugin that judges the code (pytest-regressions' check, data_regression): a verdict.
        raised("call", [*RUNNER, TEST_FILE, f"{SITE}/pytest_benchmark/f.py"], "E", assertion=True),
        # Inside a library that is no plugin, in the call: the code may have passed it anything.
        raised("call", [*RUNNER, TEST_FILE, f"{SITE}/yaml/__init__.py"], "E"),
        # A fixture of the repository's own conftest.py fails in setup.
        raised("setup", [*RUNNER, "/workspace/tests/conftest.py", f"{SITE}/yaml/__init__.py"], "E"),
        # Some frames were left out: one of them may be the repository's.
        raised("setup", [*RUNNER, "...", f"{SITE}/pytest_benchmark/fixture.py"], "E"),
        # No frames at all (a record from before them).
        CaseResult(outcome="error", message="E", detail=""),
    ],
    ids=[
        "code into a library",
        "plugin into code",
        "code back into the plugin",
        "a plugin's verdict",
        "library in call",
        "conftest fixture",
        "frames left out",
        "no frames",
    ],
)
def test_a_failure_the_code_may_cause_is_never_the_environments(case: CaseResult) -> None:
    assert raised_outside(case, [BENCHMARK]) == ""


def test_a_plugin_fixture_error_is_quarantined_beside_a_code_failure_naming_the_plugin() -> None:
    broken = raised("setup", [*RUNNER, f"{SITE}/pytest_benchmark/fixture.py"], NODEID_ERROR)
    baseline = run(a=BUG)
    baseline["tests"]["tests.test_calc::test_speed"] = broken
    baseline["environment"] = EnvironmentRecord(
        kind="project", python="3.11.7", pytest="9.0.3", pytest_from="", plugins=[BENCHMARK]
    )
    found = classify([baseline, baseline], FILES)
    assert found.kind == "code"
    reason = found.quarantined["tests.test_calc::test_speed"]
    assert reason.startswith("environment: the pytest plugin pytest_benchmark 5.2.3")
    assert "'_nodeid'" in reason and "a" not in found.quarantined
    alone = run()
    alone["tests"]["tests.test_calc::test_speed"] = broken
    alone["environment"] = baseline["environment"]
    escalated = classify([alone, alone], FILES)
    assert escalated.kind == "environment" and "pytest_benchmark 5.2.3" in escalated.reason


# --- the baseline's imports (checks/baseline.py) -------------------------------------------


def test_the_projects_own_packages_are_its_folders_with_an_init_and_its_src_modules() -> None:
    files = [
        "setup.py",
        "six.py",  # a vendored copy at the root: not the project's package
        "pkg/__init__.py",
        "pkg/sub/__init__.py",
        "src/other/__init__.py",
        "src/single.py",
        "tests/__init__.py",
        "docs/conf.py",
    ]
    assert own_packages(files) == {
        "pkg": "pkg",
        "other": "src/other",
        "single": "src/single.py",
        "tests": "tests",
    }


def test_imports_from_outside_are_named_and_the_project_from_elsewhere_is_refused() -> None:
    base = run(a=BUG)
    base["environment"] = EnvironmentRecord(
        kind="shared", python="3.11.7", pytest="9.0.3", pytest_from="", plugins=[]
    )
    base["imports"] = {
        "pkg": "/workspace/pkg/__init__.py",
        "pytest": "/fixbot-env/lib/python3.11/site-packages/pytest/__init__.py",
        "yaml": "/usr/lib/python3/dist-packages/yaml/__init__.py",
    }
    checked = imports_checked(base, FILES)
    assert checked["environment"]["shadowed"] == [
        "yaml: /usr/lib/python3/dist-packages/yaml/__init__.py"
    ]
    base["imports"]["pkg"] = "/fixbot-env/lib/python3.11/site-packages/pkg/__init__.py"
    with pytest.raises(
        EnvironmentProblem, match=r"'pkg' from /fixbot-env/.*the repository has pkg"
    ):
        imports_checked(base, FILES)
