"""The second judgement's persona: a run sees the host's facts, not the sandbox's usual ones."""

from __future__ import annotations

import getpass
import json
import shutil
import sys
from pathlib import Path

import pytest

from fixbot.sandbox import BwrapSandbox, RunSpec, host_persona

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

FACTS = (
    "import getpass, json, os, pwd, resource, socket\n"
    "print(json.dumps({'cwd': os.getcwd(), 'home': os.environ['HOME'],\n"
    " 'home_is_dir': os.path.isdir(os.environ['HOME']), 'ci': os.environ.get('CI'),\n"
    " 'user': getpass.getuser(), 'passwd': pwd.getpwuid(os.getuid()).pw_name,\n"
    " 'host': socket.gethostname(), 'fsize': resource.getrlimit(resource.RLIMIT_FSIZE)[0],\n"
    " 'files': sorted(os.listdir('.'))}))\n"
)


def facts(tmp_path: Path, persona: object) -> dict[str, object]:
    for name in ("ws", "out"):
        (tmp_path / name).mkdir(exist_ok=True)
    (tmp_path / "ws" / "calc.py").write_text("")
    spec = RunSpec(tmp_path / "ws", tmp_path / "out", persona=persona)  # type: ignore[arg-type]
    done = BwrapSandbox().run([sys.executable, "-c", FACTS], spec)
    assert done.returncode == 0, done.output
    found: dict[str, object] = json.loads(done.output.strip().splitlines()[-1])
    return found


def test_the_usual_run_has_the_sandboxs_facts(tmp_path: Path) -> None:
    seen = facts(tmp_path, None)
    assert (seen["cwd"], seen["home"], seen["ci"], seen["host"]) == (
        "/workspace",
        "/tmp",
        "true",
        "sandbox",
    )


def test_a_persona_run_has_the_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    repo = tmp_path / "home-like" / "calc"  # under /tmp: the sandbox's own, so not used as is
    persona = host_persona(repo, scratch_capped=True, file_size=1 << 29)
    seen = facts(tmp_path, persona)
    assert seen["cwd"] == persona.workspace != "/workspace"
    assert seen["cwd"] == f"{persona.home}/calc"
    assert seen["home"] == persona.home == str(Path.home()) and seen["home_is_dir"]
    assert seen["ci"] is None
    assert seen["user"] == getpass.getuser()
    assert seen["host"] not in ("sandbox", "")
    assert seen["files"] == ["calc.py"]  # the same tree
    if BwrapSandbox().privileged:  # root: a passwd of the run's own, the host's per-file limit
        assert seen["passwd"] == getpass.getuser()
        assert seen["fsize"] == -1 or seen["fsize"] == persona.file_size


def test_a_persona_keeps_fixbots_cap_where_the_scratch_is_not_capped(tmp_path: Path) -> None:
    persona = host_persona(tmp_path, scratch_capped=False, file_size=1 << 29)
    assert persona.file_size is not None and persona.file_size <= 1 << 29
