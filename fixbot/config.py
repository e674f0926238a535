""".fixbot.yml + command-line overrides -> a frozen, validated `Config`.

Precedence: command line > file > defaults. `protected_paths` is the exception: every layer
ADDS globs to `DEFAULT_PROTECTED_PATHS`, so nothing can unprotect the tests.

The rules live once, on the dataclass fields (type hints, plus JSON Schema bounds as field
metadata); `fixbot/schema/fixbot.schema.json` states the same rules for editors, and
tests/test_config.py holds the two to agreement.
"""

from __future__ import annotations

import difflib
import json
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from importlib import resources
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import yaml

from fixbot.commands import (
    CheckSpec,
    InvalidCheck,
    gate_config,
    legacy_checks,
    resolve_checks,
    setup_words,
    split_words,
)
from fixbot.errors import ConfigError

DEFAULT_PROTECTED_PATHS: tuple[str, ...] = (
    "tests/**", "test_*.py", "**/test_*.py", "*_test.py", "**/*_test.py", "noxfile.py",
    ".github/**", ".fixbot.yml",
    # Test and gate configuration wherever it is: pytest, ruff and mypy read nested copies, and
    # pytest reads pytest.toml and .pytest.* before pytest.ini; ruff skips what .ignore names.
    "**/conftest.py", "**/pytest.ini", "**/.pytest.ini", "**/pytest.toml", "**/.pytest.toml",
    "**/tox.ini", "**/setup.cfg", "**/pyproject.toml", "**/ruff.toml", "**/.ruff.toml",
    "**/mypy.ini", "**/.mypy.ini", "**/.ignore",
    # What Python runs at start-up from any folder on its path.
    "**/sitecustomize.py", "**/usercustomize.py", "**/*.pth",
)  # fmt: skip
CONFIG_FILE = ".fixbot.yml"
DEFAULT_TEST_COMMAND = "python -m pytest"
COMMAND_LINE = "command line"  # the `file` named in errors about overrides


def _bounded(default: float | None, **bounds: float) -> Any:
    """A field whose value must lie within JSON Schema-style `bounds` (minimum, maximum, ...)."""
    return field(default=default, metadata=bounds)


# A gate's setting: on, off, or "auto": on where the repository configures the tool (a root
# ruff or mypy configuration, as commands/configs.py finds it), off where it does not.
GateSetting = bool | Literal["auto"]


@dataclass(frozen=True)
class Gates:
    lint: GateSetting = "auto"  # ruff
    types: GateSetting = "auto"  # mypy


@dataclass(frozen=True)
class SandboxSettings:
    backend: Literal["auto", "docker", "bwrap"] = "auto"
    timeout_seconds: int = _bounded(300, minimum=1, maximum=86400)
    memory_mb: int = _bounded(2048, minimum=64)
    cpus: float = _bounded(2.0, exclusiveMinimum=0)
    disk_mb: int = _bounded(1024, minimum=16)  # what one attempt may write (capped as root)
    image: str | None = None  # Docker: a user-named image with its own toolchain


@dataclass(frozen=True)
class Budget:
    tokens: int = _bounded(200_000, minimum=1)
    wall_clock_seconds: int = _bounded(1800, minimum=1)
    cost_usd: float | None = _bounded(None, exclusiveMinimum=0)  # needs a price per model used


@dataclass(frozen=True)
class Price:
    prompt: float = _bounded(0.0, minimum=0)  # USD per million prompt tokens
    completion: float = _bounded(0.0, minimum=0)  # USD per million completion tokens


@dataclass(frozen=True)
class Verification:
    # The first baseline run runs everything; each further one reproduces the failing checks
    # and tests. A fix's first verification run is the attempt's own full run on a clean copy;
    # each further one re-runs the originally failing checks and tests (docs/checks.md).
    baseline_runs: int = _bounded(2, minimum=1, maximum=5)  # reproduce before any model call
    final_runs: int = _bounded(2, minimum=1, maximum=5)  # clean-copy passes before finalize
    minimize: bool = True  # drop hunks that are not needed for the pass
    full_reruns: bool = False  # the further baseline and final runs run everything


@dataclass(frozen=True)
class ResumeLimits:
    default_extra_iterations: int = _bounded(2, minimum=1, maximum=10)
    max_extra_iterations: int = _bounded(3, minimum=1, maximum=10)  # no one grants more
    extra_tokens: int = _bounded(100_000, minimum=1)
    extra_seconds: int = _bounded(900, minimum=1)
    extra_cost_usd: float = _bounded(1.0, minimum=0)  # added to a money cap, where one is set


@dataclass(frozen=True)
class Stuck:
    similarity: float = _bounded(0.85, minimum=0, maximum=1)  # of consecutive candidates
    stagnation_attempts: int = _bounded(3, minimum=2, maximum=50)  # same failures this long


@dataclass(frozen=True)
class Parallel:
    candidates: int = _bounded(1, minimum=1, maximum=8)  # at once after the first failure
    temperatures: tuple[float, ...] = field(
        default=(0.2, 0.7, 1.0), metadata={"items": {"minimum": 0, "maximum": 2}, "minItems": 1}
    )  # candidate i asks at temperatures[i % len]


@dataclass(frozen=True)
class Sampling:
    # Attempt 1 asks at the first (0: deterministic), a retry at the second, and each strike
    # (a repeat, a reply that changes nothing) moves the next attempt one step further.
    temperatures: tuple[float, ...] = field(
        default=(0.0, 0.5, 0.8), metadata={"items": {"minimum": 0, "maximum": 2}, "minItems": 1}
    )
    # Every second attempt on a whole file writes the failing functions' bodies anew from
    # their docstrings, a task of its own (loop/plan.py); false: every retry gets the feedback.
    rewrite: bool = True


@dataclass(frozen=True)
class ReviewSettings:
    # A second model's eye on the verified diff, before it ships (loop/review.py); None: none.
    model: str | None = None
    base_url: str | None = None  # its OpenAI-compatible endpoint; None: the fixer's


@dataclass(frozen=True)
class Config:
    checks: tuple[CheckSpec, ...] = ()  # the CI's checks, in its order (replaces the next two)
    test_command: str = field(default=DEFAULT_TEST_COMMAND, metadata={"shell_words": True})
    # one command or a list, each split into words (setup_words), never run by a shell
    setup_command: str | tuple[str, ...] | None = field(
        default=None, metadata={"setup_commands": True}
    )
    protected_paths: tuple[str, ...] = DEFAULT_PROTECTED_PATHS
    gates: Gates = Gates()
    max_iterations: int = _bounded(4, minimum=1, maximum=50)
    model: str | None = None
    strong_model: str | None = None  # used from attempt strong_after + 1 on
    strong_after: int = _bounded(2, minimum=1, maximum=50)  # failed attempts before it
    prices: dict[str, Price] = field(default_factory=dict)  # model -> USD per million tokens
    base_url: str | None = None
    request_timeout_seconds: int = _bounded(120, minimum=1, maximum=3600)  # one try of a call
    sandbox: SandboxSettings = SandboxSettings()
    budget: Budget = Budget()
    policy: Literal["strict", "lenient", "off"] = "strict"
    verification: Verification = Verification()
    base: str | None = None  # the base branch or commit, to label pre-existing failures
    resume: ResumeLimits = ResumeLimits()
    stuck: Stuck = Stuck()
    retention_days: int = _bounded(30, minimum=1, maximum=3650)  # `fixbot prune` default age
    prompt_budget_tokens: int = _bounded(8000, minimum=1000, maximum=200_000)  # task prompt
    # The model's context window: the whole request (every message and the reply reserve)
    # fits it. None: as the endpoint states it, else 8,192.
    model_context_tokens: int | None = _bounded(None, minimum=1024, maximum=10_000_000)
    reflection: bool = False  # a diagnosis call before each retry (docs/benchmarks.md)
    parallel: Parallel = Parallel()  # K candidates at once after the first failed attempt
    never_fix_branches: tuple[str, ...] = ()  # the Action: branch globs never fixed
    sampling: Sampling = Sampling()  # the temperatures one attempt at a time asks at
    review: ReviewSettings = ReviewSettings()  # the reviewer of the final diff; off by default
    source: str | None = field(default=None, metadata={"internal": True})

    @property
    def setup_commands(self) -> tuple[str, ...]:
        """setup_command as the list of commands the prepare step runs, in order."""
        if self.setup_command is None:
            return ()
        if isinstance(self.setup_command, str):
            return (self.setup_command,)
        return self.setup_command

    def to_dict(self) -> dict[str, object]:
        """JSON-ready settings. Leaves out `source`, so equal settings give equal thread ids."""
        data = asdict(self)
        del data["source"]
        data["protected_paths"] = list(self.protected_paths)
        data["checks"] = [asdict(check) for check in self.checks]
        data["never_fix_branches"] = list(self.never_fix_branches)
        data["parallel"]["temperatures"] = list(self.parallel.temperatures)
        if isinstance(self.setup_command, tuple):
            data["setup_command"] = list(self.setup_command)
        data["sampling"]["temperatures"] = list(self.sampling.temperatures)
        return data


# What a shell reads as a chain of commands: the one construct a list of commands replaces.
@dataclass(frozen=True)
class Inputs:
    """What a root was told over the config file: a command-line flag, an Action input, a
    server run's settings; the model and the endpoint fall back to FIXBOT_MODEL and
    OPENAI_BASE_URL. Every root (the CLI, the Action, the server, the bench) turns its own into
    this, and `overrides()` is the one rule of inputs over the config."""

    model: str | None = None
    base_url: str | None = None
    sandbox: str | None = None
    max_iterations: int | None = None
    base: str | None = None

    def over(self, environ: Mapping[str, str]) -> Inputs:
        """These inputs, the model and endpoint an environment names where none was given."""
        return Inputs(
            model=self.model or environ.get("FIXBOT_MODEL") or None,
            base_url=self.base_url or environ.get("OPENAI_BASE_URL") or None,
            sandbox=self.sandbox,
            max_iterations=self.max_iterations,
            base=self.base,
        )

    def overrides(self) -> dict[str, object]:
        """The inputs given, as load_config's dotted overrides."""
        values = {
            "model": self.model,
            "base_url": self.base_url,
            "max_iterations": self.max_iterations,
            "sandbox.backend": self.sandbox,
            "base": self.base,
        }
        return {key: value for key, value in values.items() if value not in (None, "")}


def load_config(
    repo: Path, *, config_file: Path | None = None, overrides: Mapping[str, object] | None = None
) -> Config:
    """Read `config_file` (default: repo/.fixbot.yml, if present), apply `overrides`, validate.

    `overrides` maps dotted keys (`"sandbox.backend"`) to already-typed values; they obey the
    same rules as the file. Raises ConfigError naming the dotted key and the file.
    """
    path = config_file if config_file is not None else repo / CONFIG_FILE
    source = str(path) if config_file is not None or path.exists() else None
    layers = [] if source is None else [_parse_section(Config, _read_yaml(path), "", source)]
    if overrides:
        layers.append(_parse_section(Config, _nest(overrides), "", COMMAND_LINE))
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = _merge(merged, layer)
    _one_form_of_checks(layers, source)
    extra = [glob for layer in layers for glob in layer.get("protected_paths", ())]
    merged["protected_paths"] = tuple(dict.fromkeys((*DEFAULT_PROTECTED_PATHS, *extra)))
    config: Config = _construct(Config, {**merged, "source": source})
    return config


def checks_of(config: Config, read: Callable[[str], str | None]) -> tuple[CheckSpec, ...]:
    """The checks a run runs, in order: `checks`, else the legacy equivalent of `test_command`
    and `gates` (the gates as "no new findings" gates, then the tests; see legacy_checks).
    `read`: the repository's files at the failing commit, for the gates set to "auto"."""
    if config.checks:
        return config.checks
    lint = _gate_on(config.gates.lint, "ruff", read)
    types = _gate_on(config.gates.types, "mypy", read)
    return legacy_checks(config.test_command, lint=lint, types=types)


def _gate_on(
    setting: GateSetting, tool: Literal["ruff", "mypy"], read: Callable[[str], str | None]
) -> bool:
    """An "auto" gate runs where the repository configures its tool: a project that runs no
    ruff (or mypy) is not held to the tool's own defaults, which its CI never applies."""
    return setting if isinstance(setting, bool) else gate_config(tool, read) is not None


def names_no_checks(config: Config) -> bool:
    """Neither `checks` nor a test command of its own, nor a gate turned off: the Action may
    take the checks from the failed CI run instead. (A gate at `auto`, or `true`, the default
    it had before `auto`, is no choice of checks.)"""
    gates = (config.gates.lint, config.gates.types)
    default = config.test_command == DEFAULT_TEST_COMMAND and False not in gates
    return default and not config.checks


def _one_form_of_checks(layers: list[dict[str, Any]], source: str | None) -> None:
    keys = " and ".join(k for k in ("test_command", "gates") if any(k in la for la in layers))
    if keys and any("checks" in layer for layer in layers):
        message = f"set either checks or {keys}, not both: keep checks (with the test command "
        message += f"as one of them) and remove {keys}, or remove checks"
        raise ConfigError(message, key="checks", file=source)


def config_schema() -> dict[str, object]:
    """The JSON Schema (draft 2020-12) for .fixbot.yml shipped with the package."""
    schema_file = resources.files("fixbot").joinpath("schema/fixbot.schema.json")
    schema: dict[str, object] = json.loads(schema_file.read_text(encoding="utf-8"))
    return schema


class _NoDuplicateKeysLoader(yaml.SafeLoader):
    """SafeLoader that refuses a repeated key instead of silently keeping the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key_node.value!r}", key_node.start_mark
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep)


def _read_yaml(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file: {exc}", file=str(path)) from None
    try:
        data = yaml.load(text, Loader=_NoDuplicateKeysLoader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or exc
        raise ConfigError(f"invalid YAML{where}: {problem}", file=str(path)) from None
    return {} if data is None else data  # an empty or all-comment file means defaults


def _nest(overrides: Mapping[str, object]) -> dict[str, Any]:
    """{"sandbox.backend": "bwrap"} -> {"sandbox": {"backend": "bwrap"}}."""
    tree: dict[str, Any] = {}
    for dotted, value in overrides.items():
        *parents, leaf = dotted.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError("conflicts with another override", key=dotted, file=COMMAND_LINE)
        if leaf in node:
            raise ConfigError("conflicts with another override", key=dotted, file=COMMAND_LINE)
        node[leaf] = dict(value) if isinstance(value, Mapping) else value
    return tree


def _parse_section(cls: type, data: object, prefix: str, source: str) -> dict[str, Any]:
    """Validate a (partial) mapping for dataclass `cls`; returns the converted values."""
    if not isinstance(data, dict):
        where = prefix.rstrip(".") or None
        message = f"expected a mapping of keys to values, got {_kind(data)}"
        raise ConfigError(message, key=where, file=source)
    known = {f.name: f for f in fields(cls) if not f.metadata.get("internal")}
    hints = get_type_hints(cls)
    values: dict[str, Any] = {}
    for name, value in data.items():
        key = f"{prefix}{name}"
        if name not in known:
            close = difflib.get_close_matches(str(name), known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            message = f"unknown key{hint}; allowed keys: {', '.join(known)}"
            raise ConfigError(message, key=key, file=source)
        if is_dataclass(hints[name]):
            values[name] = _parse_section(hints[name], value, f"{key}.", source)
            continue
        if hints[name] == tuple[CheckSpec, ...]:
            values[name] = _parse_checks(value, key, source)
            continue
        if get_origin(hints[name]) is dict:  # name -> section, e.g. prices: {model: {...}}
            section = get_args(hints[name])[1]
            if not isinstance(value, dict):
                raise ConfigError(f"expected a mapping, got {_kind(value)}", key=key, file=source)
            values[name] = {
                str(item): _parse_section(section, entry, f"{key}.{item}.", source)
                for item, entry in value.items()
            }
            continue
        try:
            values[name] = _coerce(hints[name], value, known[name].metadata)
        except ValueError as exc:
            raise ConfigError(str(exc), key=key, file=source) from None
    return values


def _parse_checks(data: object, key: str, source: str) -> tuple[CheckSpec, ...]:
    if not isinstance(data, list):
        raise ConfigError(f"expected a list of checks, got {_kind(data)}", key=key, file=source)
    if not data:
        message = "needs at least one check (without checks, test_command and gates apply)"
        raise ConfigError(message, key=key, file=source)
    items = [_parse_section(CheckSpec, item, f"{key}[{i}].", source) for i, item in enumerate(data)]
    try:
        return resolve_checks(items)
    except InvalidCheck as exc:
        raise ConfigError(str(exc), key=f"{key}[{exc.index}].{exc.key}", file=source) from None


def _coerce(hint: Any, value: object, rules: Mapping[str, Any]) -> object:
    """Check `value` against a field's type and rules; raise ValueError saying what is wrong."""
    origin, args = get_origin(hint), get_args(hint)
    # `X | None`, `str | tuple[str, ...] | None` (one or a list), `bool | Literal["auto"]`
    if origin in (UnionType, Union):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        words = [word for a in options if get_origin(a) is Literal for word in get_args(a)]
        if words:  # one of the words, else a value of the other type
            if isinstance(value, str) and value in words:
                return value
            other = next(a for a in options if get_origin(a) is not Literal)
            try:
                return _coerce(other, value, rules)
            except ValueError:
                wanted = f"{_KINDS[other]} or {' or '.join(map(repr, words))}"
                raise ValueError(f"expected {wanted}, got {_kind(value)}") from None
        lists = [a for a in options if get_origin(a) is tuple]
        chosen = lists[0] if isinstance(value, list) and lists else options[0]
        return _coerce(chosen, value, rules)
    if origin is Literal:
        if isinstance(value, str) and value in args:
            return value
        raise ValueError(f"must be one of {', '.join(map(repr, args))}, got {value!r}")
    if origin is tuple:  # tuple[str, ...] or tuple[float, ...], written as a YAML list
        items = _coerce_list(args[0], value, rules)
        if rules.get("setup_commands"):
            if not items:
                raise ValueError("needs at least 1 command (or leave setup_command out)")
            for number, item in enumerate(items, 1):
                _check_setup(str(item), f"item {number}: ")
        return items
    scalar = _scalar(hint, value)
    _check_bounds(scalar, rules)
    if rules.get("shell_words"):
        split_words(str(scalar))
    if rules.get("setup_commands"):
        _check_setup(str(scalar), "")
    return scalar


def _check_setup(command: str, where: str) -> None:
    try:
        setup_words(command)
    except ValueError as exc:
        raise ValueError(f"{where}{exc}") from None


def _coerce_list(item_type: type, value: object, rules: Mapping[str, Any]) -> tuple[Any, ...]:
    if item_type is str:
        if not isinstance(value, list):
            raise ValueError(f"expected a list of strings, got {_kind(value)}")
        for number, item in enumerate(value, 1):
            if not isinstance(item, str) or not item:
                raise ValueError(f"item {number} must be a non-empty string, got {item!r}")
        return tuple(value)
    if not isinstance(value, list):
        raise ValueError(f"expected a list of numbers, got {_kind(value)}")
    if len(value) < rules.get("minItems", 0):
        raise ValueError(f"needs at least {rules['minItems']} item(s), got {len(value)}")
    items = []
    for number, item in enumerate(value, 1):
        try:
            scalar = _scalar(item_type, item)
            _check_bounds(scalar, rules.get("items", {}))
        except ValueError as exc:
            raise ValueError(f"item {number}: {exc}") from None
        items.append(scalar)
    return tuple(items)


def _scalar(hint: type, value: object) -> object:
    if isinstance(value, bool) and hint is not bool:
        pass  # bool is a subclass of int, but `true` is not a number
    elif hint is float and isinstance(value, int | float):
        if math.isfinite(value):
            return float(value)
        raise ValueError(f"must be a finite number, got {value}")
    elif hint is int and isinstance(value, float) and value.is_integer():
        return int(value)  # JSON Schema counts 2.0 as an integer; agree with it
    elif isinstance(value, hint):
        return value
    raise ValueError(f"expected {_KINDS[hint]}, got {_kind(value)}")


def _check_bounds(value: Any, rules: Mapping[str, Any]) -> None:
    limits = {name: rules[name] for name in _BOUNDS if name in rules}
    if not all(_BOUNDS[name][1](value, limit) for name, limit in limits.items()):
        wanted = " and ".join(f"{_BOUNDS[name][0]} {limit}" for name, limit in limits.items())
        raise ValueError(f"must be {wanted}, got {value}")


_BOUNDS: dict[str, tuple[str, Callable[[Any, Any], bool]]] = {
    "minimum": (">=", operator.ge),
    "maximum": ("<=", operator.le),
    "exclusiveMinimum": (">", operator.gt),
}
_KINDS: dict[type, str] = {
    bool: "a boolean", int: "an integer", float: "a number", str: "a string",
    list: "a list", dict: "a mapping", type(None): "null",
}  # fmt: skip


def _kind(value: object) -> str:
    return _KINDS.get(type(value), type(value).__name__)


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        merged[key] = _merge(merged.get(key, {}), value) if isinstance(value, dict) else value
    return merged


def _construct(cls: Any, values: Mapping[str, Any]) -> Any:
    if get_origin(cls) is dict:
        section = get_args(cls)[1]
        return {name: _construct(section, entry) for name, entry in values.items()}
    hints = get_type_hints(cls)
    return cls(
        **{
            name: _construct(hints[name], v) if isinstance(v, dict) else v
            for name, v in values.items()
        }
    )
