"""config.py against real files, and the shipped JSON Schema held to agreement with the loader."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

import jsonschema
import pytest
import yaml

from fixbot import report
from fixbot.commands import setup_words
from fixbot.config import (
    DEFAULT_PROTECTED_PATHS,
    Budget,
    Config,
    Gates,
    Price,
    SandboxSettings,
    checks_of,
    config_schema,
    load_config,
    names_no_checks,
)
from fixbot.errors import ConfigError

FULL = """\
test_command: pytest -x -q
setup_command: pip install -e .
protected_paths: ["migrations/**", "tests/**"]
gates: {lint: false, types: true}
max_iterations: 7
model: some-model
base_url: http://localhost:8000/v1
sandbox: {backend: bwrap, timeout_seconds: 600, memory_mb: 4096, cpus: 1.5}
budget: {tokens: 50000, wall_clock_seconds: 900}
"""


def write(repo: Path, text: str) -> Path:
    path = repo / ".fixbot.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_no_file_gives_defaults(tmp_path: Path) -> None:
    assert load_config(tmp_path) == Config()
    assert load_config(tmp_path).source is None


@pytest.mark.parametrize("text", ["", "# nothing here\n"])
def test_empty_file_gives_defaults(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    assert load_config(tmp_path) == Config(source=str(path))


def test_full_valid_file(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    assert load_config(tmp_path) == Config(
        test_command="pytest -x -q",
        setup_command="pip install -e .",
        protected_paths=(*DEFAULT_PROTECTED_PATHS, "migrations/**"),
        gates=Gates(lint=False, types=True),
        max_iterations=7,
        model="some-model",
        base_url="http://localhost:8000/v1",
        sandbox=SandboxSettings(backend="bwrap", timeout_seconds=600, memory_mb=4096, cpus=1.5),
        budget=Budget(tokens=50000, wall_clock_seconds=900),
        source=str(path),
    )


def test_protected_paths_add_to_defaults_without_duplicates(tmp_path: Path) -> None:
    write(tmp_path, "protected_paths: [tests/**, vendor/**]\n")
    config = load_config(tmp_path, overrides={"protected_paths": ["docs/**"]})
    assert config.protected_paths == (*DEFAULT_PROTECTED_PATHS, "vendor/**", "docs/**")
    write(tmp_path, "protected_paths: []\n")
    assert load_config(tmp_path).protected_paths == DEFAULT_PROTECTED_PATHS


@pytest.mark.parametrize(
    ("text", "key", "says"),
    [
        ("modle: x\n", "modle", "did you mean 'model'?"),
        ("sandbox:\n  memroy: 512\n", "sandbox.memroy", "allowed keys: backend, timeout_seconds"),
        ("source: elsewhere\n", "source", "unknown key"),
        ("max_iterations: true\n", "max_iterations", "expected an integer, got a boolean"),
        ("max_iterations: '4'\n", "max_iterations", "expected an integer, got a string"),
        ("protected_paths: src/**\n", "protected_paths", "expected a list of strings"),
        ("protected_paths: [a, '']\n", "protected_paths", "item 2 must be a non-empty string"),
        ("gates: {lint: 1}\n", "gates.lint", "expected a boolean or 'auto', got an integer"),
        ('gates: {types: "yes"}\n', "gates.types", "expected a boolean or 'auto', got a string"),
        ("gates: [lint]\n", "gates", "expected a mapping"),
        ("max_iterations: 51\n", "max_iterations", "must be >= 1 and <= 50, got 51"),
        ("sandbox: {timeout_seconds: 0}\n", "sandbox.timeout_seconds", "must be >= 1"),
        ("sandbox: {memory_mb: 63}\n", "sandbox.memory_mb", "must be >= 64, got 63"),
        ("sandbox: {cpus: 0}\n", "sandbox.cpus", "must be > 0, got 0"),
        ("sandbox: {cpus: .nan}\n", "sandbox.cpus", "finite"),
        ("sandbox: {backend: podman}\n", "sandbox.backend", "one of 'auto', 'docker', 'bwrap'"),
        ("budget: {tokens: 0}\n", "budget.tokens", "must be >= 1, got 0"),
        ("test_command: '  '\n", "test_command", "must be a command"),
        ("test_command: pytest 'unclosed\n", "test_command", "No closing quotation"),
        ("- a\n- b\n", None, "expected a mapping of keys to values, got a list"),
    ],
)
def test_invalid_file_names_key_and_file(tmp_path: Path, text: str, key: str, says: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert (caught.value.key, caught.value.file) == (key, str(path))
    assert says in str(caught.value)
    assert str(path) in str(caught.value)
    assert key is None or f"'{key}'" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("sandbox:\n  backend: [docker\n", "invalid YAML at line 3"),
        ("model: a\nmodel: b\n", "duplicate key 'model'"),
    ],
)
def test_bad_yaml_names_file_and_line(tmp_path: Path, text: str, says: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match="line") as caught:
        load_config(tmp_path)
    assert caught.value.file == str(path)
    assert says in str(caught.value)


def test_overrides_beat_the_file(tmp_path: Path) -> None:
    write(tmp_path, FULL)
    overrides = {"model": "other", "max_iterations": 2, "sandbox.backend": "docker"}
    config = load_config(tmp_path, overrides=overrides)
    assert (config.model, config.max_iterations, config.sandbox.backend) == ("other", 2, "docker")
    assert (config.sandbox.timeout_seconds, config.test_command) == (600, "pytest -x -q")


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"sandbox.memroy": 1}, "sandbox.memroy"),
        ({"max_iterations": "2"}, "max_iterations"),
        ({"sandbox.backend": "podman"}, "sandbox.backend"),
        ({"sandbox": 1, "sandbox.backend": "docker"}, "sandbox.backend"),
    ],
)
def test_bad_override_says_command_line(
    tmp_path: Path, overrides: dict[str, object], key: str
) -> None:
    write(tmp_path, FULL)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, overrides=overrides)
    assert (caught.value.key, caught.value.file) == (key, "command line")
    assert str(caught.value).startswith(f"command line: '{key}': ")


def test_explicit_config_file(tmp_path: Path) -> None:
    other = tmp_path / "ci.yml"
    other.write_text("max_iterations: 9\n", encoding="utf-8")
    write(tmp_path, "max_iterations: 3\n")
    assert load_config(tmp_path, config_file=other).max_iterations == 9
    missing = tmp_path / "missing.yml"
    with pytest.raises(ConfigError, match="No such file") as caught:
        load_config(tmp_path, config_file=missing)
    assert caught.value.file == str(missing)
    assert str(missing) in str(caught.value)


def test_config_is_frozen_and_to_dict_is_json_without_source(tmp_path: Path) -> None:
    config = load_config(tmp_path, config_file=write(tmp_path, FULL))
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.model = "x"  # type: ignore[misc]
    data = config.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert "source" not in data
    assert data["sandbox"] == dataclasses.asdict(config.sandbox)
    assert data["protected_paths"] == list(config.protected_paths)


# (document, valid): the loader and the schema must both give `valid`.
AGREEMENT: list[tuple[dict[str, Any], bool]] = [
    ({}, True),
    (yaml.safe_load(FULL), True),
    ({"setup_command": None, "model": None, "base_url": None}, True),
    ({"max_iterations": 1}, True),
    ({"max_iterations": 50}, True),
    ({"max_iterations": 2.0}, True),  # JSON Schema counts 2.0 as an integer
    ({"protected_paths": []}, True),
    ({"gates": {}}, True),
    ({"sandbox": {"backend": "docker", "cpus": 1}}, True),
    ({"sandbox": {"timeout_seconds": 86400, "memory_mb": 64, "cpus": 0.25}}, True),
    ({"budget": {"tokens": 1, "wall_clock_seconds": 1}}, True),
    ({"test_command": "#"}, True),
    ({"unknown": 1}, False),
    ({"source": "x"}, False),
    ({"sandbox": {"memroy": 1}}, False),
    ({"gates": {"lint": True, "style": True}}, False),
    ({"max_iterations": 0}, False),
    ({"max_iterations": 51}, False),
    ({"max_iterations": True}, False),
    ({"max_iterations": "4"}, False),
    ({"max_iterations": 2.5}, False),
    ({"test_command": ""}, False),
    ({"test_command": " \t"}, False),
    ({"test_command": None}, False),
    ({"test_command": ["pytest"]}, False),
    ({"setup_command": False}, False),
    ({"setup_command": "python -m pip install -e ."}, True),
    ({"setup_command": ["python -m pip install -r requirements.txt", "pip install -e ."]}, True),
    ({"setup_command": ["SETUPTOOLS_SCM_PRETEND_VERSION=1.0 pip install ."]}, True),
    ({"setup_command": []}, False),
    ({"setup_command": ""}, False),
    ({"setup_command": [""]}, False),
    ({"setup_command": ["pip install .", 3]}, False),
    ({"setup_command": "pip install -r r.txt && pip install -e ."}, False),
    ({"setup_command": ["pip install . || true"]}, False),
    ({"model": 7}, False),
    ({"protected_paths": "src/**"}, False),
    ({"protected_paths": [""]}, False),
    ({"protected_paths": [1]}, False),
    ({"gates": None}, False),
    ({"gates": {"lint": "yes"}}, False),
    ({"gates": {"lint": "auto", "types": False}}, True),
    ({"gates": {"types": "Auto"}}, False),
    ({"sandbox": []}, False),
    ({"sandbox": {"backend": "podman"}}, False),
    ({"sandbox": {"cpus": 0}}, False),
    ({"sandbox": {"cpus": True}}, False),
    ({"sandbox": {"timeout_seconds": 86401}}, False),
    ({"sandbox": {"memory_mb": 63}}, False),
    ({"budget": {"tokens": 0}}, False),
    ({"budget": {"wall_clock_seconds": 0}}, False),
    ({"parallel": {"candidates": 3, "temperatures": [0, 2, 0.5]}}, True),
    ({"parallel": {"candidates": 8, "temperatures": [1]}}, True),
    ({"parallel": {"candidates": 0}}, False),
    ({"parallel": {"candidates": 9}}, False),
    ({"parallel": {"temperatures": []}}, False),
    ({"parallel": {"temperatures": [2.5]}}, False),
    ({"parallel": {"temperatures": [-0.1]}}, False),
    ({"parallel": {"temperatures": ["hot"]}}, False),
    ({"parallel": {"temperatures": [True]}}, False),
    ({"parallel": {"temperatures": 0.7}}, False),
    ({"request_timeout_seconds": 300}, True),
    ({"request_timeout_seconds": 0}, False),
    ({"request_timeout_seconds": 3601}, False),
    ({"checks": [{"name": "lint", "run": "ruff check ."}, {"name": "t", "run": "pytest"}]}, True),
    (
        {"checks": [{"name": "t", "run": "pytest", "kind": "pytest", "test_timeout_seconds": 5}]},
        True,
    ),
    ({"checks": [{"name": "docs", "run": "mkdocs build", "kind": "command"}]}, True),
    ({"checks": []}, False),
    ({"checks": {"name": "t", "run": "pytest"}}, False),
    ({"checks": ["pytest"]}, False),
    ({"checks": [{"name": "t"}]}, False),
    ({"checks": [{"run": "pytest"}]}, False),
    ({"checks": [{"name": "t", "run": " "}]}, False),
    ({"checks": [{"name": "t y", "run": "pytest"}]}, False),
    ({"checks": [{"name": "t", "run": "pytest", "kind": "rust"}]}, False),
    (
        {"checks": [{"name": "t", "run": "ruff .", "kind": "ruff", "test_timeout_seconds": 5}]},
        False,
    ),
    ({"checks": [{"name": "t", "run": "pytest", "test_timeout_seconds": 0}]}, False),
    ({"checks": [{"name": "t", "run": "pytest", "gate": True}]}, False),
    ({"checks": [{"name": "t", "run": "pytest", "shell": "bash"}]}, False),
    ({"never_fix_branches": ["release/*", "main"]}, True),
    ({"never_fix_branches": "release/*"}, False),
    ({"never_fix_branches": [""]}, False),
]


@pytest.mark.parametrize(("doc", "valid"), AGREEMENT, ids=[json.dumps(d) for d, _ in AGREEMENT])
def test_loader_and_schema_agree(tmp_path: Path, doc: dict[str, Any], valid: bool) -> None:
    # Left out on purpose: unbalanced quotes in test_command (shlex, not expressible in a
    # schema), non-finite cpus (not expressible in JSON), and what only the loader can see of
    # checks (LOADER_ONLY below); the loader refuses them all.
    write(tmp_path, yaml.safe_dump(doc))
    try:
        load_config(tmp_path)
        loader_ok = True
    except ConfigError:
        loader_ok = False
    try:
        jsonschema.validate(doc, config_schema())
        schema_ok = True
    except jsonschema.ValidationError:
        schema_ok = False
    assert (loader_ok, schema_ok) == (valid, valid)


def plain(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json.loads(json.dumps(dataclasses.asdict(value)))  # nested tuples as lists
    return list(value) if isinstance(value, tuple) else value


BOUNDS = ("minimum", "maximum", "exclusiveMinimum")


def test_schema_keys_defaults_and_bounds_match_the_dataclasses() -> None:
    jsonschema.Draft202012Validator.check_schema(config_schema())

    def walk(cls: type, schema: dict[str, Any], path: str) -> None:
        assert schema["additionalProperties"] is False, path
        file_fields = [f for f in dataclasses.fields(cls) if not f.metadata.get("internal")]
        assert set(schema["properties"]) == {f.name for f in file_fields}, path
        hints = get_type_hints(cls)
        for f in file_fields:
            prop, key = schema["properties"][f.name], path + f.name
            assert prop["description"], key
            if "pattern" in f.metadata:
                assert prop["pattern"] == f"^{f.metadata['pattern']}$", key
            if dataclasses.MISSING is f.default is f.default_factory:  # required, or inferred
                assert "default" not in prop, key
                required = f.name in schema.get("required", [])
                assert required != bool(f.metadata.get("inferred")), key
                continue
            item = get_args(hints[f.name])[0] if get_origin(hints[f.name]) is tuple else None
            if dataclasses.is_dataclass(item):  # a list of sections: checks: [{name, run}]
                assert prop["default"] == plain(f.default), key
                walk(item, prop["items"], key + "[].")  # type: ignore[arg-type]
                continue
            if get_origin(hints[f.name]) is dict:  # name -> section: walk the section's schema
                assert prop["default"] == {} == f.default_factory(), key  # type: ignore[misc]
                section = get_args(hints[f.name])[1]
                walk(section, prop["additionalProperties"], key + ".*.")
                continue
            assert prop["default"] == plain(f.default), key
            assert {b: prop[b] for b in BOUNDS if b in prop} == {
                b: f.metadata[b] for b in BOUNDS if b in f.metadata
            }, key
            if get_origin(hints[f.name]) is Literal:
                assert prop["enum"] == list(get_args(hints[f.name])), key
            if dataclasses.is_dataclass(hints[f.name]):
                walk(hints[f.name], prop, key + ".")

    walk(Config, config_schema(), "")


def test_the_price_table_and_the_money_cap(tmp_path: Path) -> None:
    write(
        tmp_path,
        "budget: {cost_usd: 2.5}\nstrong_model: big\nstrong_after: 3\n"
        "prices:\n  small: {prompt: 0.15, completion: 0.6}\n  big: {prompt: 2, completion: 8}\n",
    )
    config = load_config(tmp_path)
    assert config.budget.cost_usd == 2.5
    assert (config.strong_model, config.strong_after) == ("big", 3)
    assert config.prices == {"small": Price(0.15, 0.6), "big": Price(2.0, 8.0)}
    assert config.to_dict()["prices"] == {
        "small": {"prompt": 0.15, "completion": 0.6},
        "big": {"prompt": 2.0, "completion": 8.0},
    }


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("prices: [small]\n", "'prices'"),
        ("prices:\n  small: {promt: 1}\n", "'prices.small.promt'"),
        ("prices:\n  small: {prompt: -1}\n", "'prices.small.prompt'"),
        ("prices:\n  small: 3\n", "'prices.small'"),
        ("budget: {cost_usd: 0}\n", "'budget.cost_usd'"),
    ],
)
def test_a_bad_price_table_names_the_key(tmp_path: Path, text: str, names: str) -> None:
    write(tmp_path, text)
    with pytest.raises(ConfigError, match=names):
        load_config(tmp_path)


# --- checks ---------------------------------------------------------------------------------

CHECKS = """\
checks:
  - name: lint
    run: ruff check .
  - name: format
    run: ruff format --check .
  - name: types
    run: python -m mypy src
  - name: tests
    run: python -m pytest -q
    test_timeout_seconds: 30
  - name: unit
    run: python -m unittest discover -s tests
  - name: docs
    run: mkdocs build --strict
  - name: lint-again
    run: ruff check src
    kind: command
"""


def test_checks_keep_their_order_and_their_kinds_are_inferred(tmp_path: Path) -> None:
    write(tmp_path, CHECKS)
    checks = checks_of(load_config(tmp_path), files(tmp_path))
    assert [(c.name, c.kind) for c in checks] == [
        ("lint", "ruff"),
        ("format", "ruff-format"),
        ("types", "mypy"),
        ("tests", "pytest"),
        ("unit", "unittest"),
        ("docs", "command"),
        ("lint-again", "command"),  # a kind given wins over the inferred one
    ]
    assert checks[3].test_timeout_seconds == 30 and checks[0].test_timeout_seconds == 60
    assert checks[2].argv == ("python", "-m", "mypy", "src")
    assert not any(c.gate for c in checks)


def test_checks_are_in_the_settings_that_name_the_thread(tmp_path: Path) -> None:
    write(tmp_path, CHECKS)
    data = load_config(tmp_path).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["checks"][0] == {
        "name": "lint",
        "run": "ruff check .",
        "kind": "ruff",
        "test_timeout_seconds": 60,
        "gate": False,
    }


def files(repo: Path) -> Callable[[str], str | None]:
    """The repository's files, as checks_of reads them (None: no such file)."""
    return lambda rel: (repo / rel).read_text() if (repo / rel).is_file() else None


def test_without_checks_the_test_command_and_gates_keep_their_meaning(tmp_path: Path) -> None:
    write(tmp_path, "gates: {lint: true, types: true}\n")
    always = checks_of(load_config(tmp_path), files(tmp_path))
    assert [(c.name, c.run, c.kind, c.gate) for c in always] == [
        ("lint", "python -m ruff check .", "ruff", True),  # "no new findings" gates ...
        ("types", "python -m mypy .", "mypy", True),
        ("tests", "python -m pytest", "pytest", False),  # ... then the tests, which must pass
    ]
    write(tmp_path, "test_command: ruff check .\ngates: {lint: true, types: false}\n")
    legacy = checks_of(load_config(tmp_path), files(tmp_path))
    # A test command that is not pytest is one test, judged by its exit code, as before.
    assert [(c.name, c.run, c.kind, c.gate) for c in legacy] == [
        ("lint", "python -m ruff check .", "ruff", True),
        ("tests", "ruff check .", "command", False),
    ]
    write(tmp_path, "gates: {lint: false, types: false}\n")
    (tmp_path / "ruff.toml").write_text("line-length = 99\n")
    assert [c.name for c in checks_of(load_config(tmp_path), files(tmp_path))] == ["tests"]


# (the repository's root files, the gates "auto" turns on): each tool where it is configured.
AUTO_GATES = [
    ({}, []),  # neither configured: ruff's and mypy's own defaults bind nobody
    ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"}, []),
    ({"ruff.toml": "line-length = 99\n"}, ["lint"]),
    ({".ruff.toml": ""}, ["lint"]),
    ({"pyproject.toml": "[tool.ruff]\nline-length = 99\n"}, ["lint"]),
    ({"pyproject.toml": "[tool.ruff.lint]\nselect = ['F']\n"}, ["lint"]),
    ({"mypy.ini": "[mypy]\nstrict = True\n"}, ["types"]),
    ({"setup.cfg": "[mypy]\nstrict = True\n"}, ["types"]),
    ({"setup.cfg": "[flake8]\nmax-line-length = 99\n"}, []),
    # setup.cfg as mypy's configparser reads it: a comment after the header is still [mypy],
    # an indented "[mypy]" is a value's continuation line, not a section
    ({"setup.cfg": "[mypy]  # ours\nstrict = True\n"}, ["types"]),
    ({"setup.cfg": "[flake8]\nexclude =\n  [mypy]\n"}, []),
    ({"pyproject.toml": "[tool.mypy]\nstrict = true\n[tool.ruff]\n"}, ["lint", "types"]),
    ({"sub/ruff.toml": "line-length = 99\n", "sub/mypy.ini": "[mypy]\n"}, []),  # not the root
]


@pytest.mark.parametrize(("root", "gates"), AUTO_GATES)
def test_auto_gates_run_where_the_repository_configures_the_tool(
    tmp_path: Path, root: dict[str, str], gates: list[str]
) -> None:
    for rel, text in root.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    config = load_config(tmp_path)
    assert config.gates == Gates(lint="auto", types="auto")  # the default
    checks = checks_of(config, files(tmp_path))
    assert [c.name for c in checks] == [*gates, "tests"]
    assert all(c.gate for c in checks[:-1])
    write(tmp_path, "gates: {lint: auto, types: false}\n")
    only_lint = checks_of(load_config(tmp_path), files(tmp_path))
    assert [c.name for c in only_lint] == [*(g for g in gates if g == "lint"), "tests"]


# (file, the key the error names, what it says): what no schema can say about checks.
LOADER_ONLY = [
    ("checks:\n  - {name: t, run: pytest}\n  - {name: t, run: ruff check .}\n", "checks[1].name",
     "already the name of checks[0]"),
    ("checks:\n  - {name: fmt, run: ruff format .}\n", "checks[0].run", "ruff format --check"),
    ("checks:\n  - {name: fmt, run: ruff format ., kind: command}\n", "checks[0].run",
     "rewrites"),
    ("checks:\n  - {name: fix, run: ruff check --fix .}\n", "checks[0].run", "without --fix"),
    ("checks:\n  - {name: l, run: make lint, kind: ruff}\n", "checks[0].kind",
     "give it kind: command"),
    ("checks:\n  - {name: l, run: ruff check ., test_timeout_seconds: 5}\n",
     "checks[0].test_timeout_seconds", "inferred as ruff"),
    ("checks:\n  - {name: t, run: 'pytest -k \"a'}\n", "checks[0].run", "No closing quotation"),
    ("checks:\n  - {name: t, run: pytest}\ntest_command: pytest -x\n", "checks",
     "keep checks"),
    ("gates: {lint: false}\nchecks:\n  - {name: t, run: pytest}\n", "checks", "remove gates"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "key", "says"), LOADER_ONLY)
def test_a_bad_check_names_its_key_and_the_file(
    tmp_path: Path, text: str, key: str, says: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert caught.value.key == key and caught.value.file == str(path)
    assert says in str(caught.value)
    assert report.exit_code("error", report.error_kind(caught.value)) == 2


def test_never_fix_branches_are_globs_in_a_list(tmp_path: Path) -> None:
    write(tmp_path, "never_fix_branches: [release/*, legacy]\n")
    assert load_config(tmp_path).never_fix_branches == ("release/*", "legacy")
    assert load_config(tmp_path).to_dict()["never_fix_branches"] == ["release/*", "legacy"]


def test_setup_command_takes_one_command_or_a_list(tmp_path: Path) -> None:
    write(tmp_path, "setup_command: python -m pip install -e .\n")
    one = load_config(tmp_path)
    assert one.setup_commands == ("python -m pip install -e .",)
    write(tmp_path, "setup_command:\n  - pip install -r requirements.txt\n  - pip install -e .\n")
    many = load_config(tmp_path)
    assert many.setup_commands == ("pip install -r requirements.txt", "pip install -e .")
    assert many.to_dict()["setup_command"] == list(many.setup_commands)
    assert Config().setup_commands == ()


@pytest.mark.parametrize(
    ("command", "construct", "instead"),
    [
        ("pip install -r r.txt && pip install -e .", "&&", "list"),
        ("pip install -e .&&pytest", "&&", "list"),
        ("pip install . || true", "||", "list"),
        ("pip install .; echo done", "a ;", "list"),
        ("pip freeze > frozen.txt", "a redirection", "script"),
        ("cat reqs | xargs pip install", "a pipe", "script"),
        ("pip install numpy>=1.26", "a redirection", "script"),
        ("pip install -r $REQS", "a variable, $REQS", "script"),
    ],
)
def test_what_only_a_shell_runs_in_setup_command_says_what_to_write(
    tmp_path: Path, command: str, construct: str, instead: str
) -> None:
    write(tmp_path, yaml.safe_dump({"setup_command": [command]}))
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    message = str(caught.value)
    assert "setup_command" in message and "item 1" in message
    assert f"has {construct}, which only a shell understands" in message
    assert "never run by a shell" in message and instead in message


def test_leading_assignments_set_that_commands_environment() -> None:
    env, argv = setup_words("PIP_NO_BUILD_ISOLATION=0 A='b c' python -m pip install -e .")
    assert env == {"PIP_NO_BUILD_ISOLATION": "0", "A": "b c"}
    assert argv == ["python", "-m", "pip", "install", "-e", "."]
    # Only leading words: an argument that looks like one is an argument.
    assert setup_words("pip install x==1")[1] == ["pip", "install", "x==1"]
    with pytest.raises(ValueError, match="names no command"):
        setup_words("A=1 B=2")


@pytest.mark.parametrize(
    ("text", "names_none"),
    [
        ("", True),
        ("gates: {lint: auto, types: auto}\n", True),
        ("gates: {lint: true, types: true}\n", True),  # the default before `auto`
        ("gates: {lint: true}\n", True),
        ("gates: {types: false}\n", False),  # a gate turned off is a choice of checks
        ("test_command: python -m pytest -q\n", False),
        ("checks:\n  - {name: tests, run: pytest}\n", False),
    ],
)
def test_the_action_takes_the_cis_checks_only_where_the_config_names_none(
    tmp_path: Path, text: str, names_none: bool
) -> None:
    write(tmp_path, text)
    assert names_no_checks(load_config(tmp_path)) is names_none
