"""derive.py: a CI's steps, and the repository scripts they call, as fixbot's checks."""

from __future__ import annotations

import os
from pathlib import Path

from fixbot.config import load_config
from fixbot.forge.github import derive, parse_workflow, proposed_checks, proposed_setup
from fixbot.forge.github.derive import Found

WORKFLOW = """\
jobs:
  test:
    steps:
      - uses: actions/checkout@v4
      - uses: astral-sh/setup-uv@v5
      - name: CI
        run: .ci/run
      - run: Get-ChildItem
        shell: pwsh
      - run: make html
        working-directory: docs
"""
RUN = """\
#!/usr/bin/env bash
# CI: what the tests need, then the checks.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo apt-get install -y libpq-dev
python -m pip install -e '.[dev]'
bash .ci/lint.sh
pytest -q | tee pytest.log
python -m pytest -q
python scripts/smoke.py
"""
LINT = """\
set -e
ruff check src tests
ruff format --check src tests
mypy src
"""


def repo(tmp_path: Path, **files: str) -> Path:
    for rel, text in {".github/workflows/ci.yml": WORKFLOW, ".ci/run": RUN, **files}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def derived_from(root: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]], Path]:
    workflow = parse_workflow((root / ".github/workflows/ci.yml").read_text(), "ci.yml")
    derived = derive(workflow.steps, root, label="ci.yml")
    unmapped = [(left.text, left.why) for left in derived.unmapped]
    ignored = [(left.text, left.why) for left in derived.ignored]
    return unmapped, ignored, root


def test_a_script_the_step_runs_is_followed_line_by_line(tmp_path: Path) -> None:
    root = repo(tmp_path, **{".ci/lint.sh": LINT, "scripts/smoke.py": "print('ok')\n"})
    workflow = parse_workflow((root / ".github/workflows/ci.yml").read_text(), "ci.yml")
    derived = derive(workflow.steps, root, label="ci.yml")
    assert [(found.argv, found.kind) for found in derived.checks] == [
        (("ruff", "check", "src", "tests"), "ruff"),
        (("ruff", "format", "--check", "src", "tests"), "ruff-format"),
        (("mypy", "src"), "mypy"),
        (("python", "-m", "pytest", "-q"), "pytest"),
        (("python", "scripts/smoke.py"), "command"),
    ]
    assert (
        derived.checks[0].where
        == "ci.yml, job test, step 'CI' > .ci/run line 7 > .ci/lint.sh line 2"
    )
    assert proposed_setup(derived.installs) == "python -m pip install -e '.[dev]'"
    assert [(left.text, left.why.split(":")[0]) for left in derived.unmapped] == [
        ("astral-sh/setup-uv@v5", "the action astral-sh/setup-uv"),
        ("sudo apt-get install -y libpq-dev", "runs as another user (sudo)"),
        ("pytest -q | tee pytest.log", "needs a shell (a pipe); fixbot runs argv lists, never one"),
        ("Get-ChildItem", "runs in the pwsh shell; fixbot runs argv lists, never a shell"),
        ("make html", "runs in docs; fixbot runs checks at the repository root"),
    ]
    assert [left.why for left in derived.ignored] == [
        "sets up the checkout or Python",
        "shell options",
        "goes to the repository root",
        "shell options",
    ]


def test_the_checks_are_named_by_kind_once_each_and_load_as_config(tmp_path: Path) -> None:
    found = [
        Found("a", ("ruff", "check", "."), "ruff"),
        Found("b", ("pytest", "-q"), "pytest"),
        Found("c", ("pytest", "-q"), "pytest"),  # a matrix runs it again: one check
        Found("d", ("python", "-m", "pytest", "tests/integration"), "pytest"),
        Found("e", ("python", "-m", "build"), "command"),
        Found("f", ("mkdocs", "build", "--strict"), "command"),
        Found("g", ("python", "tools/check links.py"), "command"),
    ]
    checks = proposed_checks(found)
    assert [(check.name, check.run) for check in checks] == [
        ("lint", "ruff check ."),
        ("tests", "pytest -q"),
        ("tests-2", "python -m pytest tests/integration"),
        ("build", "python -m build"),
        ("mkdocs", "mkdocs build --strict"),
        ("check-links", "python 'tools/check links.py'"),
    ]
    lines = ["checks:"]
    lines += [f"  - {{name: {c.name}, run: {c.run!r}, kind: {c.kind}}}" for c in checks]
    (tmp_path / ".fixbot.yml").write_text("\n".join(lines) + "\n")
    assert load_config(tmp_path).checks == checks


def test_the_installs_become_one_setup_command() -> None:
    installs = [
        Found("a", ("python", "-m", "pip", "install", "-q", "-r", "requirements.txt"), None),
        Found("b", ("python", "-m", "pip", "install", "-q", "-r", "dev.txt", "-e", "."), None),
        Found("c", ("uv", "pip", "install", "--system", "-r", "requirements.txt", "tox"), None),
    ]
    assert proposed_setup(installs) == (
        "python -m pip install -q -r requirements.txt -r dev.txt -e . tox"
    )
    assert proposed_setup([]) is None


def test_a_script_outside_the_tree_missing_or_linked_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.sh"
    outside.write_text("pytest\n")
    root = tmp_path / "repo"
    run = "bash .ci/missing.sh\n./../outside.sh\n.ci/linked.sh\n.ci/self.sh\n.ci/args.sh -x\n"
    run += "tools/check --all\n"
    repo(
        root,
        **{".ci/run": run, ".ci/self.sh": "#!/bin/sh\n.ci/self.sh\n", ".ci/args.sh": "pytest\n"},
    )
    (root / "tools").mkdir()
    (root / "tools/check").write_text("#!/usr/bin/env python3\nprint('ok')\n")
    os.symlink(outside, root / ".ci/linked.sh")
    unmapped, _, _ = derived_from(root)
    assert [why for text, why in unmapped if ".ci/" in text or "outside" in text] == [
        ".ci/missing.sh is not a file in the repository",
        "../outside.sh is not a file in the repository",
        ".ci/linked.sh is not a file in the repository",
        ".ci/self.sh runs nothing fixbot can (not mapped: 1; the first, '.ci/self.sh': calls "
        "scripts too deep, or in a circle)",
        "passes arguments to a script fixbot follows line by line",
    ]
    # A script with another interpreter is a check of its own, run as the CI runs it.
    workflow = parse_workflow((root / ".github/workflows/ci.yml").read_text(), "ci.yml")
    [found] = derive(workflow.steps, root).checks
    assert (found.argv, found.kind) == (("tools/check", "--all"), "command")
