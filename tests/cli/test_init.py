"""`fixbot init`: a .fixbot.yml from the CI's workflows, through the real CLI, on real files.

Three shapes: this repository's own CI (a workflow that runs `.ci/run`, a bash script), a
matrix workflow with one command per step, and a tox/make-driven one mixing shell constructs.
Each written file is loaded back with fixbot's own loader."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixbot import cli
from fixbot.checks.trial import reader
from fixbot.config import checks_of, load_config

ROOT = Path(__file__).resolve().parent.parent.parent

MATRIX = """\
name: tests
on: [push, pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with: {python-version: "3.12"}
      - run: pip install -e .[test]
      - run: ruff check .
      - run: ruff format --check .
      - name: Types
        run: mypy src
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        python: ["3.10", "3.11", "3.12"]
        os: [ubuntu-latest, macos-latest]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with: {python-version: "${{ matrix.python }}"}
      - name: Install
        run: |
          python -m pip install --upgrade pip
          pip install -e .[test]
      - name: Test
        run: pytest -q
"""

MIXED = """\
name: CI
on: push
jobs:
  build:
    runs-on: ubuntu-22.04
    services:
      postgres: {image: "postgres:16"}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/cache@v4
        with: {path: ~/.cache/pip, key: pip}
      - run: sudo apt-get install -y libpq-dev
      - run: python -m pip install -r requirements.txt -r requirements-dev.txt
      - run: make lint
      - run: tox -e py311
      - run: pytest tests/unit | tee unit.log
      - name: Integration
        run: |
          export DATABASE_URL=postgres://localhost/test
          python -m pytest tests/integration
      - run: python -m pytest tests/unit --maxfail=1
      - run: npm ci && npm test
      - run: python -m build
      - run: echo "${{ github.sha }}" > sha.txt
      - run: |
          if [ "$RUNNER_OS" = Linux ]; then
            mypy src
          fi
"""


def init(path: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(["init", str(path), "--log-format", "json", *args], {})
    out, err = capsys.readouterr()
    return code, out, err


def make(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def proposed(repo: Path) -> list[tuple[str, str, str]]:
    return [(c.name, c.run, c.kind) for c in checks_of(load_config(repo), reader(repo))]


def test_this_repositorys_own_ci_through_its_script(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for rel in (".github/workflows/ci.yml", ".github/workflows/fixbot.yml", ".ci/run"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    shutil.copy2(ROOT / ".ci/docker-setup.sh", tmp_path / ".ci/docker-setup.sh")
    code, out, err = init(tmp_path, capsys=capsys)
    assert (code, out) == (0, "")
    # What .ci/run runs after its installs and services, in its order.
    assert proposed(tmp_path) == [
        ("lint", "ruff check fixbot tests benchmarks", "ruff"),
        ("format", "ruff format --check fixbot tests benchmarks", "ruff-format"),
        ("types", "mypy fixbot", "mypy"),
        ("tests", "python -m pytest", "pytest"),
    ]
    config = load_config(tmp_path)
    assert config.setup_command == "python -m pip install -q -e '.[dev]'"
    text = (tmp_path / ".fixbot.yml").read_text()
    # Each proposed check names where it came from: the script's line that runs it.
    script = (ROOT / ".ci/run").read_text().splitlines()
    line = script.index("python -m pytest") + 1
    assert f"# .github/workflows/ci.yml, job test, step '.ci/run' > .ci/run line {line}" in text
    for left in ("apt-get update -qq", "bash .ci/docker-setup.sh", "su postgres -c"):
        assert f": {left}" in text, left
    assert "installs system packages (apt-get)" in text
    assert "runs as another user (su)" in text
    assert "the action actions/cache/restore" in text  # fixbot.yml's own steps
    assert '"init_proposed"' in err


def test_a_matrix_workflow_with_one_command_per_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make(tmp_path, {".github/workflows/tests.yml": MATRIX})
    code, _, _ = init(repo, capsys=capsys)
    assert code == 0
    assert proposed(repo) == [
        ("lint", "ruff check .", "ruff"),
        ("format", "ruff format --check .", "ruff-format"),
        ("types", "mypy src", "mypy"),
        ("tests", "pytest -q", "pytest"),  # six matrix runs, one check
    ]
    assert load_config(repo).setup_command == "python -m pip install -e '.[test]'"
    assert "What the CI runs that fixbot does not" not in (repo / ".fixbot.yml").read_text()


def test_a_tox_and_make_driven_workflow_mixing_shell_constructs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make(
        tmp_path,
        {
            ".github/workflows/ci.yml": MIXED,
            "tox.ini": "[tox]\nenvlist = py311, lint\n\n[testenv:docs]\ncommands = mkdocs build\n",
            "Makefile": "VERSION := 1\n\nlint:\n\truff check src\n\ntest: lint\n\tpytest\n",
            "noxfile.py": "import nox\n\n\n@nox.session\ndef tests(session):\n    pass\n",
        },
    )
    code, _, _ = init(repo, capsys=capsys)
    assert code == 0
    assert proposed(repo) == [
        ("tests", "python -m pytest tests/integration", "pytest"),
        ("tests-2", "python -m pytest tests/unit --maxfail=1", "pytest"),
        ("build", "python -m build", "command"),
    ]
    config = load_config(repo)
    assert config.setup_command == (
        "python -m pip install -r requirements.txt -r requirements-dev.txt"
    )
    text = (repo / ".fixbot.yml").read_text()
    for command, why in [
        ("actions/cache@v4", "the action actions/cache"),
        ("sudo apt-get install -y libpq-dev", "runs as another user (sudo)"),
        ("make lint", "runs make targets"),
        ("tox -e py311", "runs tox sessions"),
        ("pytest tests/unit | tee unit.log", "needs a shell (a pipe)"),
        ("export DATABASE_URL=postgres://localhost/test", "sets environment variables (export)"),
        ("npm ci && npm test", "another language's tool (npm)"),
        ('echo "${{ github.sha }}" > sha.txt', "a ${{ }} expression"),
        ('if [ "$RUNNER_OS" = Linux ]; then mypy src fi', "a multi-line if block"),
    ]:
        [line] = [i for i, line in enumerate(text.splitlines()) if line.endswith(f": {command}")]
        assert why in text.splitlines()[line + 1], command
    assert "#   tox.ini: environments py311, lint, docs" in text
    assert "#   Makefile: targets lint, test" in text
    assert "#   noxfile.py: sessions tests" in text


def test_an_existing_config_is_kept_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make(tmp_path, {".github/workflows/tests.yml": MATRIX, ".fixbot.yml": "model: m\n"})
    code, _, err = init(repo, capsys=capsys)
    assert code == 2 and "exists; --force to overwrite it" in err
    assert (repo / ".fixbot.yml").read_text() == "model: m\n"
    code, out, _ = init(repo, "--print", capsys=capsys)
    assert code == 0 and "  - name: lint\n    run: ruff check .\n" in out
    assert (repo / ".fixbot.yml").read_text() == "model: m\n"
    code, _, _ = init(repo, "--force", capsys=capsys)
    assert code == 0 and (repo / ".fixbot.yml").read_text() == out


def test_untrusted_names_and_commands_stay_inside_their_comments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow = (
        "jobs:\n  t:\n    steps:\n"
        '      - name: "x\\nchecks: []\\nsetup_command: evil"\n        run: pytest\n'
        '      - run: "echo a\\rchecks: [] | cat"\n'
    )
    repo = make(tmp_path, {".github/workflows/ci.yml": workflow})
    assert init(repo, capsys=capsys)[0] == 0
    assert proposed(repo) == [("tests", "pytest", "pytest")]
    assert load_config(repo).setup_command is None
    for line in (repo / ".fixbot.yml").read_text().splitlines():
        assert line.startswith(("#", "  #", "checks:", "  - name:", "    ")) or not line, line


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ({"README.md": "x\n"}, "no workflow files in"),
        ({".github/workflows/ci.yml": "jobs: [\n"}, ".github/workflows/ci.yml: not valid YAML"),
        ({".github/workflows/ci.yml": "on: push\n"}, "not a workflow (no `jobs:` mapping)"),
    ],
)
def test_bad_input_exits_2_saying_what(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], says: str
) -> None:
    code, _, err = init(make(tmp_path, files), capsys=capsys)
    assert code == 2 and says in err
    assert not (tmp_path / ".fixbot.yml").exists()


def test_a_path_that_is_not_a_folder_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = init(tmp_path / "missing", capsys=capsys)
    assert code == 2 and "is not a folder" in err
