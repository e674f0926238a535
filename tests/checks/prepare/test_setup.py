"""The prepare step as a maintainer's CI runs it: the host's package-index settings, a list of
commands, what the install generates into the tree, a whole failure report, and an environment
sealed against the code it was built from. Real sandboxes, real files; the setup scripts write
what they saw into the tree, which the prepare step keeps (generated.py)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixbot.checks import IndexSettings, index_settings, prune_environments, run_trial
from fixbot.checks.prepare import prepared_environment
from fixbot.checks.prepare.base import whole_tail
from fixbot.checks.prepare.generated import TREE
from fixbot.checks.prepare.scm import scm_env, scm_version
from fixbot.config import Config, Gates
from fixbot.errors import SetupFailed
from fixbot.sandbox import BwrapSandbox, Limits, Sandbox
from fixbot.snapshot import Snapshot, pin_commit, take_snapshot
from tests.conftest import ENGINE_PROBLEM, make_repo

SETUP_LIMITS = Limits(timeout_seconds=300)

SHOW = """\
import json, os, subprocess, sys
from pathlib import Path

seen = {key: os.environ.get(key) for key in sys.argv[1:]}
cert = os.environ.get("PIP_CERT")
seen["cert text"] = Path(cert).read_text() if cert else None
links = os.environ.get("PIP_FIND_LINKS")
seen["links"] = sorted(os.listdir(links)) if links else None
config = subprocess.run(
    [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
)
seen["pip config"] = config.stdout.splitlines()
for line in seen["pip config"]:
    if line.startswith("global.constraint="):
        seen["constraint text"] = Path(line.split("=", 1)[1].strip("'")).read_text()
Path("seen.json").write_text(json.dumps(seen))
"""


@pytest.fixture(params=["bwrap", "docker"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    if request.param == "bwrap":
        if shutil.which("bwrap") is None:
            pytest.skip("bubblewrap (bwrap) is not installed here; CI installs it")
        yield BwrapSandbox()
        return
    if ENGINE_PROBLEM is not None:
        pytest.skip(f"{ENGINE_PROBLEM}; CI starts one with .ci/docker-setup.sh")
    from fixbot.sandbox import DockerSandbox

    with DockerSandbox() as docker_sandbox:
        yield docker_sandbox


@pytest.fixture
def bwrap() -> BwrapSandbox:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed here; CI installs it")
    return BwrapSandbox()


def snapshot_of(repo: Path, work: Path) -> Snapshot:
    work.mkdir()
    return take_snapshot(repo, ["tests/**"], work, pin_commit(repo))


def kept(env: Path, rel: str) -> Path:
    return env / TREE / rel


def test_a_setup_command_sees_the_hosts_package_index_settings(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    host = tmp_path / "host"
    (host / "home").mkdir(parents=True)
    cert = host / "corp-ca.pem"
    cert.write_text("-----BEGIN CERTIFICATE----- corp\n")
    cert.chmod(0o600)  # only fixbot's user can read it here
    wheels = host / "wheels"
    wheels.mkdir()
    (wheels / "depmod-1.0-py3-none-any.whl").write_text("")
    wheels.chmod(0o755)
    host.chmod(0o755)
    constraints = host / "constraints.txt"
    constraints.write_text("torch<=2.0\n")
    named = host / "pip.conf"
    named.write_text(f"[global]\nconstraint = {constraints}\ntimeout = 33\n")
    environ = {
        "PIP_CONFIG_FILE": str(named),
        "PIP_CERT": str(cert),
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "OPENAI_API_KEY": "sk-test-SECRET-never-carried",
    }
    settings = index_settings(environ, home=host / "home", etc=host / "etc")
    repo = make_repo(tmp_path / "repo", {"tools/show.py": SHOW})
    snapshot = snapshot_of(repo, tmp_path / "work")
    setup = "python tools/show.py PIP_CERT PIP_FIND_LINKS OPENAI_API_KEY PIP_CONFIG_FILE"
    env = prepared_environment(sandbox, snapshot, setup, SETUP_LIMITS, settings)
    assert env is not None
    seen = json.loads(kept(env, "seen.json").read_text())
    assert seen["cert text"] == cert.read_text()
    assert seen["links"] == ["depmod-1.0-py3-none-any.whl"]
    assert seen["OPENAI_API_KEY"] is None
    assert "global.timeout='33'" in seen["pip config"]
    assert seen["constraint text"] == "torch<=2.0\n"


def test_this_machines_own_pip_settings_reach_the_setup(
    bwrap: BwrapSandbox, tmp_path: Path
) -> None:
    """Whatever pip is configured with where the suite runs (here: /etc/pip.conf, PIP_CERT,
    PIP_FIND_LINKS), the setup's pip is configured with the same keys."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
    ).stdout.splitlines()
    keys = sorted({line.split("=", 1)[0].split(".", 1)[-1] for line in listed if "=" in line})
    if not keys:
        pytest.skip("pip has no configuration on this machine: nothing to carry")
    repo = make_repo(tmp_path / "repo", {"tools/show.py": SHOW})
    snapshot = snapshot_of(repo, tmp_path / "work")
    settings = index_settings(os.environ)
    env = prepared_environment(bwrap, snapshot, "python tools/show.py", SETUP_LIMITS, settings)
    assert env is not None
    seen = json.loads(kept(env, "seen.json").read_text())
    inside = {line.split("=", 1)[0].split(".", 1)[-1] for line in seen["pip config"]}
    assert set(keys) <= inside, (keys, seen["pip config"])
    if os.environ.get("PIP_CERT"):
        assert seen["cert text"] == Path(os.environ["PIP_CERT"]).read_text()


def test_a_list_of_commands_each_with_its_own_environment(
    bwrap: BwrapSandbox, tmp_path: Path
) -> None:
    first = "import os\nopen('greeting.txt', 'w').write(os.environ.get('GREETING', 'unset'))\n"
    second = (
        "import os\ntext = open('greeting.txt').read()\n"
        "open('greeting.txt', 'w').write(text + ' ' + os.environ.get('GREETING', 'unset'))\n"
    )
    repo = make_repo(tmp_path / "repo", {"tools/a.py": first, "tools/b.py": second})
    snapshot = snapshot_of(repo, tmp_path / "work")
    setup = ["GREETING='hello there' python tools/a.py", "python tools/b.py"]
    env = prepared_environment(bwrap, snapshot, setup, SETUP_LIMITS)
    assert env is not None
    assert kept(env, "greeting.txt").read_text() == "hello there unset"


def test_a_failing_step_is_reported_whole_from_a_lines_start(
    bwrap: BwrapSandbox, tmp_path: Path
) -> None:
    noisy = (
        "import sys\n"
        "for n in range(400):\n"
        "    print(f'resolving dependency number {n} of the project, please wait')\n"
        "print('ERROR: No matching distribution found for depmod==9 (from the index at '\n"
        "      'https://ci:hunter22@corp.invalid/simple)')\n"
        "sys.exit(3)\n"
    )
    repo = make_repo(tmp_path / "repo", {"tools/noisy.py": noisy})
    snapshot = snapshot_of(repo, tmp_path / "work")
    settings = IndexSettings(secrets=("hunter22",))
    with pytest.raises(SetupFailed) as failed:
        prepared_environment(bwrap, snapshot, "python tools/noisy.py", SETUP_LIMITS, settings)
    message = str(failed.value)
    assert message.startswith("the prepare step failed (exit code 3): python tools/noisy.py\n")
    assert "No matching distribution found for depmod==9" in message
    assert "hunter22" not in message
    body = message.split("\n", 2)[2]  # after the header and the elision note
    assert message.split("\n")[1].startswith("[... ") and "characters before ...]" in message
    assert body.startswith("resolving dependency number ")  # never cut mid-line


def test_whole_tail_cuts_at_a_line_or_word_start() -> None:
    assert whole_tail("short\n") == "short"
    lines = "\n".join(f"line {n}" for n in range(100))
    tail = whole_tail(lines, 50)
    assert tail.split("\n", 1)[1].startswith("line ")
    assert tail.endswith("line 99")
    one = " ".join(f"word{n}" for n in range(100))
    cut = whole_tail(one, 40).split("\n", 1)[1]
    assert cut.startswith("word") and one.endswith(cut)


GENERATE = """\
from pathlib import Path

Path("pkg").mkdir(exist_ok=True)
Path("pkg/_generated.py").write_text("VALUE = 42\\n")
Path("calc.py").write_text("raise SystemExit('the install rewrote a committed file')\\n")
Path("build").mkdir(exist_ok=True)
Path("build/temp.o").write_text("object code")
"""
TEST_GENERATED = """\
from pkg._generated import VALUE


def test_the_generated_module_is_there() -> None:
    assert VALUE == 42
"""


def test_what_the_install_writes_into_the_tree_reaches_every_check(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "tools/generate.py": GENERATE,
            "pkg/__init__.py": "",
            "tests/test_generated.py": TEST_GENERATED,
        },
    )
    snapshot = snapshot_of(repo, tmp_path / "work")
    config = Config(setup_command="python tools/generate.py", gates=Gates(lint=False, types=False))
    result, _ = run_trial(sandbox, snapshot, config, "")
    outcomes = {test: case["outcome"] for test, case in result["tests"].items()}
    assert outcomes["tests.test_generated::test_the_generated_module_is_there"] == "passed"
    assert outcomes["tests.test_calc::test_add"] == "passed"  # calc.py as committed
    env = prepared_environment(sandbox, snapshot, config.setup_command, SETUP_LIMITS)
    assert env is not None
    assert sorted(p.relative_to(env / TREE).as_posix() for p in (env / TREE).rglob("*.*")) == [
        "pkg/_generated.py"
    ]


POISON = """\
import sysconfig
from pathlib import Path

Path(sysconfig.get_paths()["purelib"], "zz-poison.pth").write_text("import sys\\n")
"""
CHECK_SEAL = """\
from pathlib import Path


def test_the_prepared_environment_is_read_only() -> None:
    try:
        Path("/fixbot-env/planted.pth").write_text("import os\\n")
    except OSError:
        return
    raise AssertionError("a check wrote into the prepared environment")
"""


def test_the_environment_is_sealed_once_built(bwrap: BwrapSandbox, tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo", {"tools/poison.py": POISON, "tests/test_seal.py": CHECK_SEAL}
    )
    snapshot = snapshot_of(repo, tmp_path / "work")
    config = Config(setup_command="python tools/poison.py", gates=Gates(lint=False, types=False))
    result, _ = run_trial(bwrap, snapshot, config, "")
    test = "tests.test_seal::test_the_prepared_environment_is_read_only"
    assert result["tests"][test]["outcome"] == "passed", result["log_tail"]
    env = prepared_environment(bwrap, snapshot, config.setup_command, SETUP_LIMITS)
    assert env is not None
    for path in [env, *env.rglob("*")]:
        info = path.lstat()
        assert info.st_uid == os.getuid(), path
        if not stat.S_ISLNK(info.st_mode):
            assert info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) == 0, path
            assert info.st_mode & stat.S_IROTH, path  # the sandbox's user reads it


def test_a_git_metadata_project_gets_the_pinned_commits_version(tmp_path: Path) -> None:
    pyproject = (
        '[project]\nname = "My.Pkg-name"\ndynamic = ["version"]\n\n'
        '[build-system]\nrequires = ["hatchling", "hatch-vcs"]\n'
        'build-backend = "hatchling.build"\n'
    )
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": pyproject})
    snapshot = snapshot_of(repo, tmp_path / "work")
    version = scm_version(snapshot.commit)
    assert len(snapshot.commit) == 40 and version == f"0.0.0+g{snapshot.commit[:12]}"
    assert scm_env(snapshot) == {
        "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_MY_PKG_NAME": version,
        "SETUPTOOLS_SCM_PRETEND_VERSION": version,
    }
    plain = make_repo(tmp_path / "plain", {"pyproject.toml": '[project]\nname = "calc"\n'})
    assert scm_env(snapshot_of(plain, tmp_path / "work2")) == {
        "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_CALC": scm_version(pin_commit(plain))
    }


def test_environments_unused_for_the_retention_age_are_pruned(
    bwrap: BwrapSandbox, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    snapshot = snapshot_of(repo, tmp_path / "work")
    env = prepared_environment(bwrap, snapshot, "python -c pass", SETUP_LIMITS)
    assert env is not None
    leftover = env.parent / f"{env.name}.partial-crashed"
    leftover.mkdir()
    (leftover / "half").write_text("")
    os.utime(leftover, (0, 0))
    now = env.stat().st_mtime
    assert prune_environments(env.parent, 86400, now + 3600) == [leftover.name]
    os.utime(env / ".fixbot-prepared", (now - 10, now - 10))
    # Using it again renews it.
    assert prepared_environment(bwrap, snapshot, "python -c pass", SETUP_LIMITS) == env
    assert prune_environments(env.parent, 86400, now + 3600) == []
    assert prune_environments(env.parent, 86400, now + 2 * 86400) == [env.name]
    assert not env.exists()
