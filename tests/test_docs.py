"""The docs against the code: what a user reads must not drift from what fixbot does.

Each check is a pure function over text (a page, and what the code says) that returns the
problems it finds, so that each can be shown to fail on a drifted copy (the `*_fails_*` tests).
`python -m tests.test_docs` writes the generated blocks again (the run diagram, the sample
report) into README.md and docs/run.md.
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
import sys
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
README = "README.md"
RUN_PAGE = "docs/run.md"
CONFIG_PAGE = "docs/config.md"
ACTION_PAGE = "docs/action.md"
CLI_PAGE = "docs/cli.md"
END_GENERATED = "<!-- end generated -->"


def pages() -> dict[str, str]:
    """Every page a reader can reach: README.md, CONTRIBUTING.md and docs/*.md, by path."""
    found = [ROOT / README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    return {path.relative_to(ROOT).as_posix(): path.read_text() for path in found}


def page(name: str) -> str:
    return (ROOT / name).read_text()


# --- Markdown, read the way GitHub renders it --------------------------------------------------

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
QUOTE = re.compile(r"^(?: {0,3}> ?)+")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")


def prose_lines(text: str) -> Iterator[str]:
    """The lines outside fenced code blocks (blockquote markers dropped: a quoted fence is one)."""
    fence = ""
    for raw in text.splitlines():
        line = QUOTE.sub("", raw)
        match = FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
            continue
        if match:
            fence = match.group(1)
            continue
        yield line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text, lower case, punctuation dropped, spaces -> '-'."""
    text = LINK.sub(lambda m: m.group(0)[1 : m.group(0).index("](")], heading)
    text = text.replace("`", "").replace("*", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in prose_lines(text):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(text: str) -> list[str]:
    """Every inline link's target, outside code blocks and code spans."""
    return [
        target for line in prose_lines(text) for target in LINK.findall(CODE_SPAN.sub("", line))
    ]


def link_problems(docs: Mapping[str, str], exists: Callable[[str], bool]) -> list[str]:
    """Every relative link in `docs` (path -> text) names a file that exists, and every
    `#anchor` a heading of the page it points into."""
    problems = []
    for name, text in docs.items():
        for target in links(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), path))
            resolved = resolved if path else name
            if resolved not in docs and not exists(resolved):
                problems.append(f"{name}: the link {target!r} names no file ({resolved})")
            elif anchor and resolved not in docs:
                problems.append(f"{name}: the link {target!r} has an anchor into a non-page")
            elif anchor and anchor not in anchors(docs[resolved]):
                problems.append(f"{name}: the link {target!r}: {resolved} has no #{anchor}")
    return problems


def unlinked_pages(readme: str, docs_pages: list[str]) -> list[str]:
    """The pages under docs/ that the README does not link to."""
    linked = {posixpath.normpath(target.partition("#")[0]) for target in links(readme)}
    return [
        f"docs page not linked from the README: {name}" for name in docs_pages if name not in linked
    ]


REPO_PATH = re.compile(r"`((?:fixbot|tests|benchmarks|examples|docs|\.github|\.ci)/[\w./-]*)`")


def path_problems(docs: Mapping[str, str], exists: Callable[[str], bool]) -> list[str]:
    """Every repository path a page names in a code span exists (globs and patterns aside)."""
    problems = []
    for name, text in docs.items():
        for line in prose_lines(text):
            for path in REPO_PATH.findall(line):
                if not exists(path.rstrip(".")):
                    problems.append(f"{name}: names `{path}`, which does not exist")
    return problems


def table(text: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header row is `header` (cells stripped)."""
    lines = text.splitlines()
    rows: list[list[str]] = []
    for at, line in enumerate(lines):
        if line.strip() != header:
            continue
        for row in lines[at + 2 :]:
            if not row.startswith("|"):
                break
            cells = re.split(r"(?<!\\)\|", row.strip())[1:-1]
            rows.append([cell.strip() for cell in cells])
    return rows


def code(cell: str) -> str | None:
    """The text of a cell that is exactly one code span, else None."""
    match = re.fullmatch(r"`([^`]*)`", cell)
    return match.group(1) if match else None


def generated(text: str, name: str) -> str | None:
    """The text between `<!-- generated: NAME -->` and the end marker, or None."""
    start = f"<!-- generated: {name} -->\n"
    if start not in text:
        return None
    body = text.split(start, 1)[1]
    return body.split(END_GENERATED, 1)[0] if END_GENERATED in body else None


def regenerate(text: str, name: str, body: str) -> str:
    start = f"<!-- generated: {name} -->\n"
    head, rest = text.split(start, 1)
    return head + start + body + END_GENERATED + rest.split(END_GENERATED, 1)[1]


def lines_of(text: str) -> list[str]:
    """A block's lines without indentation: an editor may turn LangGraph's tabs into spaces."""
    return [line.strip() for line in text.strip().splitlines()]


# --- The run diagram: LangGraph's own drawing of fixbot.loop.build_graph() ------------------


@cache
def drawn_graph() -> str:
    """`get_graph().draw_mermaid()` of the compiled graph: LangGraph's own drawing."""
    from fixbot.loop import build_graph

    return build_graph().get_graph().draw_mermaid()


def undeclared_routers() -> list[str]:
    """Conditional edges that declare no targets: LangGraph (and Studio) would draw each as
    going to the end, and the drawing would lie."""
    from fixbot.loop import build_graph

    builder = build_graph().builder
    return sorted(
        node
        for node, branches in builder.branches.items()
        for spec in branches.values()
        if spec.ends is None and not _annotated(spec.path.func)  # type: ignore[attr-defined]
    )


def _annotated(router: Callable[..., object]) -> bool:
    """A router whose return type names its targets (a Literal), as LangGraph reads them."""
    return "Literal" in str(typing.get_type_hints(router).get("return", ""))


def diagram_block(drawing: str) -> str:
    return f"```mermaid\n{drawing.strip()}\n```\n"


def diagram_problems(text: str, drawing: str) -> list[str]:
    shown = generated(text, "run-diagram")
    if shown is None:
        return ["no <!-- generated: run-diagram --> block"]
    if lines_of(shown) != lines_of(diagram_block(drawing)):
        return [
            "the run diagram is not the graph's own drawing (python -m tests.test_docs writes "
            f"it again); expected:\n{diagram_block(drawing)}"
        ]
    return []


EDGE = re.compile(r"^\s*([\w-]+) -\.?->? ([\w-]+);?\s*$")


def edges(drawing: str) -> set[tuple[str, str]]:
    found = (EDGE.match(line.strip()) for line in drawing.splitlines())
    return {(m.group(1), m.group(2)) for m in found if m}


def route_table_problems(text: str, graph_edges: set[tuple[str, str]]) -> list[str]:
    rows = {(code(r[0]) or r[0], code(r[1]) or r[1]) for r in table(text, "| from | to | when |")}
    missing = sorted(graph_edges - rows)
    extra = sorted(rows - graph_edges)
    return [f"an edge of the graph has no row: {a} -> {b}" for a, b in missing] + [
        f"a row names no edge of the graph: {a} -> {b}" for a, b in extra
    ]


# --- The configuration: docs/config.md against the schema and the loader --------------------


def schema_keys(node: Mapping[str, Any], prefix: str = "") -> set[str]:
    """Every key a user can write: the leaves, and each list of objects (`checks`) too."""
    keys: set[str] = set()
    for name, sub in node.get("properties", {}).items():
        key = prefix + name
        items = sub.get("items", {})
        if "properties" in sub:
            keys |= schema_keys(sub, key + ".")
        elif isinstance(items, dict) and "properties" in items:
            keys |= {key} | schema_keys(items, key + "[].")
        else:
            keys.add(key)
    return keys


def documented_keys(text: str) -> dict[str, str]:
    """docs/config.md's table: each key's default cell."""
    return {code(row[0]) or row[0]: row[1] for row in table(text, "| key | default | meaning |")}


def config_key_problems(text: str, keys: set[str]) -> list[str]:
    documented = set(documented_keys(text))
    return [f"a key of the schema is not documented: {k}" for k in sorted(keys - documented)] + [
        f"a documented key is not in the schema: {k}" for k in sorted(documented - keys)
    ]


def flat(data: Mapping[str, Any], prefix: str = "") -> dict[str, object]:
    found: dict[str, object] = {}
    for name, value in data.items():
        if isinstance(value, dict) and value and name != "prices":
            found |= flat(value, f"{prefix}{name}.")
        else:
            found[prefix + name] = value
    return found


@cache
def loader_defaults() -> dict[str, object]:
    """What the loader gives each key when the file sets nothing."""
    from fixbot.commands import CheckSpec
    from fixbot.config import load_config

    defaults = flat(load_config(Path("/nonexistent-repository")).to_dict())
    for spec_field in fields(CheckSpec):
        if not spec_field.metadata.get("internal"):
            defaults[f"checks[].{spec_field.name}"] = spec_field.default
    return defaults


def config_default_problems(text: str, defaults: Mapping[str, object]) -> list[str]:
    """A default written as one code span is the loader's; "none" is no value."""
    problems = []
    for key, cell in documented_keys(text).items():
        if key not in defaults:
            continue
        actual = defaults[key]
        actual = list(actual) if isinstance(actual, tuple) else actual
        shown = code(cell)
        if shown is not None and yaml.safe_load(shown) != actual:
            problems.append(f"{key}: documented default {cell}, the loader's is {actual!r}")
        if cell == "none" and actual not in (None, [], {}):
            problems.append(f"{key}: documented default none, the loader's is {actual!r}")
    return problems


# --- The Action: docs/action.md against action.yml and the shipped workflow ------------------


def action_problems(text: str, action_yml: str) -> list[str]:
    action = yaml.safe_load(action_yml)
    problems = []
    inputs = {
        code(row[0]) or row[0]: row[1] for row in table(text, "| input | default | meaning |")
    }
    outputs = {code(row[0]) or row[0] for row in table(text, "| output | meaning |")}
    for kind, shown, shipped in (
        ("input", set(inputs), set(action["inputs"])),
        ("output", outputs, set(action["outputs"])),
    ):
        problems += [
            f"an {kind} of action.yml is not documented: {n}" for n in sorted(shipped - shown)
        ]
        problems += [
            f"a documented {kind} is not in action.yml: {n}" for n in sorted(shown - shipped)
        ]
    for name, cell in inputs.items():
        if name in action["inputs"]:
            default = str(action["inputs"][name].get("default", ""))
            if (code(cell) or cell) != default:
                problems.append(
                    f"input {name}: documented default {cell!r}, action.yml's {default!r}"
                )
    return problems


def workflow_problems(text: str, workflow: str) -> list[str]:
    if f"```yaml\n{workflow}```" in text:
        return []
    return ["the page does not show .github/workflows/fixbot.yml exactly as shipped"]


# --- The exit codes and the command line: docs/cli.md against fixbot.report and the parser ----


def exit_code_problems(text: str, constants: Mapping[str, int]) -> list[str]:
    rows = {
        (row[0], code(row[1]) or row[1]) for row in table(text, "| code | constant | meaning |")
    }
    problems = [
        f"exit code {number} is documented as {name}, which is {constants.get(name)!r}"
        for number, name in sorted(rows)
        if constants.get(name) != (int(number) if number.isdigit() else number)
    ]
    named = {name for _, name in rows}
    problems += [
        f"{name} ({value}) has no row" for name, value in constants.items() if name not in named
    ]
    return problems


def exit_constants() -> dict[str, int]:
    import fixbot.report

    return {
        name: getattr(fixbot.report, name)
        for name in dir(fixbot.report)
        if name.startswith("EXIT_")
    }


COMMON_OPTIONS = {"--help", "--log-format"}  # every command's, documented once


def synopsis(text: str) -> dict[str, set[str]]:
    """The synopsis block (every line starting `fixbot `): each command's long options."""
    block = next(b for b in re.findall(r"```\n(.*?)```", text, re.S) if b.startswith("fixbot "))
    commands: dict[str, set[str]] = {}
    command = ""
    for line in block.splitlines():
        if line.startswith("fixbot"):
            words = line.split()[1:]
            names = re.match(r"(?:[a-z]+ )*", " ".join(words) + " ")
            command = names.group(0).strip() if names else ""
            commands.setdefault(command, set())
        commands[command] |= set(re.findall(r"--[a-z][a-z-]*", line))
    return {name: options - COMMON_OPTIONS for name, options in commands.items()}


def parser_options(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    options = {o for a in parser._actions for o in a.option_strings if o.startswith("--")}
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers or options - COMMON_OPTIONS:
        found[prefix.strip()] = options - COMMON_OPTIONS
    for action in subparsers:
        for name, sub in action.choices.items():
            found |= parser_options(sub, f"{prefix}{name} ")
    return found


def synopsis_problems(text: str, parsed: Mapping[str, set[str]]) -> list[str]:
    shown = synopsis(text)
    problems = [f"`fixbot {c}` is not in the synopsis" for c in sorted(set(parsed) - set(shown))]
    problems += [f"`fixbot {c}` is not a command" for c in sorted(set(shown) - set(parsed))]
    for command in sorted(set(parsed) & set(shown)):
        for option in sorted(parsed[command] - shown[command]):
            problems.append(f"`fixbot {command}` takes {option}, which the synopsis leaves out")
        for option in sorted(shown[command] - parsed[command]):
            problems.append(f"`fixbot {command}` has no {option}, which the synopsis shows")
    return problems


# --- The sample report: the README shows what the renderer writes ----------------------------


def sample_diff() -> str:
    """fixbot's canonical diff of the fix to examples/calc."""
    from fixbot.edits import FileChange, render_diff

    old = page("examples/calc/calc.py")
    new = old.replace("sum(values) / (len(values) + 1)", "sum(values) / len(values)")
    assert new != old
    return str(render_diff([FileChange("calc.py", old, new)]))


def sample_result() -> Any:
    """A fix of examples/calc: one failed attempt, then a pass, verified and minimal."""
    from fixbot.report import FixResult

    def check(name: str, kind: str, status: str, summary: str, gate: bool) -> dict[str, Any]:
        return {"name": name, "kind": kind, "status": status, "summary": summary, "gate": gate}

    def attempt(number: int, verdict: str, problems: list[str], tokens: tuple[int, int]) -> Any:
        return {
            "number": number,
            "model": "gpt-4o-mini",
            "temperature": 0.0 if number == 1 else 0.5,
            "round_size": 1,
            "reply": "",
            "prompt_tokens": tokens[0],
            "completion_tokens": tokens[1],
            "cost_usd": tokens[0] * 0.15e-6 + tokens[1] * 0.6e-6,
            "diff": sample_diff() if verdict == "pass" else "",
            "verdict": verdict,
            "problems": problems,
            "check": None,
        }

    failing = {"outcome": "failed"}
    return FixResult(
        status="fixed",
        reason="attempt 2 passed and was verified on a clean copy",
        thread_id="fix-3f2a9c0d1e4b5a6c7d8e",
        repo="/home/you/calc",
        commit="9c1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e",
        sandbox="bubblewrap 0.8.0 (memory and processes capped per sandbox)",
        manifest_sha256="5d41402abc4b2a76b9719d911017c592ae2f2e3d7b6f1a0c9e8d7c6b5a4f3e2d",
        protected=["tests/test_calc.py", ".fixbot.yml"],
        baseline={
            "tests": {
                "tests/test_calc.py::test_mean": failing,
                "tests/test_calc.py::test_mean_single": failing,
                "tests/test_calc.py::test_add": {"outcome": "passed"},
                "tests/test_calc.py::test_clamp": {"outcome": "passed"},
            },
            "checks": [
                check("lint", "ruff", "passed", "1 finding, already there at baseline", True),
                check("types", "mypy", "passed", "no findings", True),
                check("tests", "pytest", "failed", "2 failed, 2 passed", False),
            ],
        },
        attempts=[
            attempt(
                1,
                "fail",
                ["tests/test_calc.py::test_mean_single still failed (it must pass)"],
                (1412, 131),
            ),
            attempt(2, "pass", [], (1650, 128)),
        ],
        verification={
            "tests": {
                "tests/test_calc.py::test_mean": {"outcome": "passed"},
                "tests/test_calc.py::test_mean_single": {"outcome": "passed"},
            },
            "checks": [
                check("lint", "ruff", "passed", "1 finding, already there at baseline", True),
                check("types", "mypy", "passed", "no findings", True),
                check("tests", "pytest", "passed", "4 passed", False),
            ],
        },
        diff=sample_diff(),
        tokens={"total": 3321, "prompt": 3062, "completion": 259},
        cost_usd=3062 * 0.15e-6 + 259 * 0.6e-6,
        classification="code",
        reproduce="fixbot verify .fixbot/out/evidence.json --repo /home/you/calc",
        version="0.1.0",
    )


def quoted(text: str) -> str:
    return "".join(f"> {line}\n" if line else ">\n" for line in text.splitlines())


def layout_problems(text: str, tree: Mapping[str, int]) -> list[str]:
    """CONTRIBUTING.md's Layout against the package: every package (and foundation module) of
    the root is drawn, and the modules over 300 lines are exactly those it names.
    `tree`: each module's path (fixbot/...) and its line count."""
    problems = []
    block = text.split("## Layout", 1)[-1]
    drawn = block.split("```", 2)[1] if block.count("```") >= 2 else ""
    parts = {path.split("/")[1].removesuffix(".py") for path in tree}
    parts |= {"/".join(path.split("/")[1:3]) for path in tree if path.count("/") >= 3}
    for part in sorted(parts - {"__init__", "__main__"}):
        name = part.rsplit("/", 1)[-1]
        if not re.search(rf"(^|\s){re.escape(name)}(/|\.py|\s)", drawn, re.MULTILINE):
            problems.append(f"the Layout does not draw {part}")
    listed = block.split("<!-- over-300: begin -->", 1)[-1].split("<!-- over-300: end -->")[0]
    named = set(re.findall(r"`(fixbot/[\w/]+\.py)`", listed))
    over = {path for path, lines in tree.items() if lines > 300}
    problems += [
        f"{path} is over 300 lines and the Layout does not say why" for path in sorted(over - named)
    ]
    problems += [f"{path} is named as over 300 lines but is not" for path in sorted(named - over)]
    return problems


def package_tree() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): len(path.read_text().splitlines())
        for path in sorted((ROOT / "fixbot").rglob("*.py"))
    }


def sample_problems(text: str, rendered: str) -> list[str]:
    shown = generated(text, "sample-report")
    if shown is None:
        return ["no <!-- generated: sample-report --> block"]
    if shown != quoted(rendered):
        return ["the sample report is not the renderer's output (python -m tests.test_docs)"]
    return []


def rendered_sample() -> str:
    from fixbot.report import render_markdown

    return str(render_markdown(sample_result()))


# --- The tests: the docs as they are ----------------------------------------------------------


def exists(path: str) -> bool:
    return (ROOT / path).exists()


def test_the_run_diagram_is_the_graphs_own_drawing() -> None:
    for name in (README, RUN_PAGE):
        assert diagram_problems(page(name), drawn_graph()) == [], name


def test_every_edge_of_the_graph_has_a_row_saying_when() -> None:
    assert route_table_problems(page(RUN_PAGE), edges(drawn_graph())) == []


def test_every_config_key_is_documented_and_every_documented_key_exists() -> None:
    schema = json.loads((ROOT / "fixbot" / "schema" / "fixbot.schema.json").read_text())
    assert config_key_problems(page(CONFIG_PAGE), schema_keys(schema)) == []
    assert set(loader_defaults()) <= schema_keys(schema) | {"checks"}


def test_the_documented_defaults_are_the_loaders() -> None:
    assert config_default_problems(page(CONFIG_PAGE), loader_defaults()) == []


def test_every_action_input_and_output_is_documented() -> None:
    assert action_problems(page(ACTION_PAGE), page("action.yml")) == []


def test_the_action_page_shows_the_workflow_exactly_as_shipped() -> None:
    assert workflow_problems(page(ACTION_PAGE), page(".github/workflows/fixbot.yml")) == []


def test_the_exit_codes_are_the_reports() -> None:
    assert exit_code_problems(page(CLI_PAGE), exit_constants()) == []


def test_the_synopsis_names_every_command_and_option() -> None:
    from fixbot.cli import build_parser

    assert synopsis_problems(page(CLI_PAGE), parser_options(build_parser())) == []


def test_the_sample_report_is_the_renderers_output() -> None:
    assert sample_problems(page(README), rendered_sample()) == []


def test_every_docs_page_is_linked_from_the_readme() -> None:
    docs = [name for name in pages() if name.startswith("docs/")]
    assert docs
    assert unlinked_pages(page(README), docs) == []


def test_every_link_and_anchor_resolves() -> None:
    assert link_problems(pages(), exists) == []


def test_every_repository_path_named_exists() -> None:
    assert path_problems(pages(), exists) == []


def test_the_developers_test_command_is_what_ci_runs_last() -> None:
    last = [line for line in page(".ci/run").splitlines() if line.strip()][-1]
    assert last == "python -m pytest"
    assert f"```\npip install -e '.[dev]'\n{last} " in page(README)


def test_the_layout_draws_the_package_and_names_its_long_modules() -> None:
    assert layout_problems(page("CONTRIBUTING.md"), package_tree()) == []


# --- Each check fails on drift ----------------------------------------------------------------


def drop_line(text: str, containing: str) -> str:
    lines = text.splitlines(keepends=True)
    hits = [line for line in lines if containing in line]
    assert len(hits) == 1, (containing, hits)
    return "".join(line for line in lines if line is not hits[0])


def swap(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_a_changed_diagram_fails() -> None:
    drawing = drawn_graph()
    assert diagram_problems(drop_line(page(README), "pick -.-> verify;"), drawing)
    assert diagram_problems(page(README), drawing + "\tpick --> __end__;\n")  # the graph changed
    assert diagram_problems(page(README).replace("generated: run-diagram", "x"), drawing)


def test_every_router_declares_its_targets() -> None:
    assert undeclared_routers() == []


def test_a_changed_edge_fails_the_route_table() -> None:
    graph_edges = edges(drawn_graph())
    assert ("pick", "verify") in graph_edges
    assert route_table_problems(drop_line(page(RUN_PAGE), "| `pick` | `verify` |"), graph_edges)
    assert route_table_problems(page(RUN_PAGE), graph_edges | {("verify", "__end__")})


def test_a_removed_or_unknown_config_key_fails() -> None:
    schema = json.loads((ROOT / "fixbot" / "schema" / "fixbot.schema.json").read_text())
    keys = schema_keys(schema)
    assert {"sandbox.memory_mb", "checks", "checks[].run", "prices"} <= keys
    text = page(CONFIG_PAGE)
    assert config_key_problems(drop_line(text, "| `sandbox.memory_mb` |"), keys)
    assert config_key_problems(text, keys | {"sandbox.swap_mb"})  # a key added to the schema
    assert config_key_problems(text, keys - {"reflection"})  # a key removed from it


def test_a_changed_default_fails() -> None:
    text = page(CONFIG_PAGE)
    defaults = loader_defaults()
    assert config_default_problems(
        swap(text, "| `max_iterations` | `4` |", "| `max_iterations` | `5` |"), defaults
    )
    assert config_default_problems(text, {**defaults, "budget.tokens": 100_000})
    assert config_default_problems(text, {**defaults, "base": "main"})  # documented: none


def test_a_missing_action_input_or_output_fails() -> None:
    text, shipped = page(ACTION_PAGE), page("action.yml")
    assert action_problems(drop_line(text, "| `cgroup` |"), shipped)
    assert action_problems(drop_line(text, "| `pr-number` |"), shipped)
    assert action_problems(swap(text, "| `draft` | `true` |", "| `draft` | `false` |"), shipped)
    extra = swap(shipped, "\ninputs:\n", "\ninputs:\n  timeout:\n    default: '60'\n")
    assert action_problems(text, extra)


def test_a_changed_workflow_fails() -> None:
    workflow = page(".github/workflows/fixbot.yml")
    assert workflow_problems(
        page(ACTION_PAGE), swap(workflow, "timeout-minutes: 60", "timeout-minutes: 90")
    )


def test_a_changed_exit_code_fails() -> None:
    text, constants = page(CLI_PAGE), exit_constants()
    assert exit_code_problems(
        swap(text, "| 3 | `EXIT_ENVIRONMENT` |", "| 4 | `EXIT_ENVIRONMENT` |"), constants
    )
    assert exit_code_problems(text, {**constants, "EXIT_ENVIRONMENT": 4})
    assert exit_code_problems(text, {**constants, "EXIT_INTERRUPTED": 130})


def test_a_changed_option_fails_the_synopsis() -> None:
    from fixbot.cli import build_parser

    parsed = parser_options(build_parser())
    assert "--base" in parsed["fix"] and "--json" in parsed["lessons rm"]
    text = page(CLI_PAGE)
    assert synopsis_problems(swap(text, " [--base REF]", ""), parsed)
    assert synopsis_problems(text, {**parsed, "fix": parsed["fix"] | {"--dry-run"}})
    assert synopsis_problems(text, {**parsed, "undo": set()})


def test_a_changed_report_fails_the_sample() -> None:
    rendered = rendered_sample()
    assert sample_problems(page(README), rendered.replace("attempt 2 passed", "attempt 3 passed"))
    assert sample_problems(swap(page(README), "> | # | model |", "> | # | the model |"), rendered)


def test_a_broken_link_or_anchor_fails() -> None:
    docs = pages()
    broken = {**docs, README: swap(docs[README], "(docs/run.md#bounds)", "(docs/run.md#limits)")}
    assert link_problems(broken, exists)
    moved = {**docs, README: swap(docs[README], "(docs/cli.md)", "(docs/commands.md)")}
    assert link_problems(moved, exists)
    renamed = {**docs, RUN_PAGE: swap(docs[RUN_PAGE], "## Bounds", "## Limits")}
    assert link_problems(renamed, exists)


def test_a_page_the_readme_does_not_link_fails() -> None:
    readme = page(README)
    docs = [name for name in pages() if name.startswith("docs/")]
    assert unlinked_pages(readme, [*docs, "docs/faq.md"]) == [
        "docs page not linked from the README: docs/faq.md"
    ]
    assert unlinked_pages(readme.replace("(docs/refused.md)", "(#)"), docs)


def test_a_missing_path_fails() -> None:
    assert path_problems({"docs/x.md": "see `tests/test_nothing_here.py`"}, exists)
    assert path_problems({"docs/x.md": "see `tests/**` and `fixbot/fix-*`"}, exists) == []


def test_slugs_and_anchors_are_githubs() -> None:
    assert slug("`fixbot fix`") == "fixbot-fix"
    assert slug("The configuration: `.fixbot.yml`") == "the-configuration-fixbotyml"
    assert slug("The model's context window") == "the-models-context-window"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n> ## Quoted\n") == {"a", "a-1", "quoted"}


# --- Writing the generated blocks again -------------------------------------------------------


def main() -> None:
    blocks = {
        README: {
            "run-diagram": diagram_block(drawn_graph()),
            "sample-report": quoted(rendered_sample()),
        },
        RUN_PAGE: {"run-diagram": diagram_block(drawn_graph())},
    }
    for name, bodies in blocks.items():
        text = page(name)
        for block, body in bodies.items():
            text = regenerate(text, block, body)
        if text != page(name):
            (ROOT / name).write_text(text)
            print(f"wrote {name}", file=sys.stderr)


if __name__ == "__main__":
    main()


def test_a_layout_that_misses_a_package_or_a_long_module_fails() -> None:
    text, tree = page("CONTRIBUTING.md"), package_tree()
    assert layout_problems(text, {**tree, "fixbot/newstage/__init__.py": 3}) == [
        "the Layout does not draw newstage"
    ]
    grown = {**tree, "fixbot/loop/graph.py": 301}
    assert layout_problems(text, grown) == [
        "fixbot/loop/graph.py is over 300 lines and the Layout does not say why"
    ]
    shrunk = {**tree, "fixbot/secrets.py": 200}
    assert layout_problems(text, shrunk) == [
        "fixbot/secrets.py is named as over 300 lines but is not"
    ]
