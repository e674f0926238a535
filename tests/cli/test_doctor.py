"""`fixbot doctor` on the checks' environment: it makes the virtualenv the checks run in (offline:
no pytest is fetched for it) and names anything on its sys.path outside it and the standard
library; it says which pytest the checks get and whether it is built here."""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import pytest

from fixbot.checks.prepare import PYTEST_PIN, IndexSettings, shared_environment
from fixbot.cli import doctor
from fixbot.sandbox import BwrapSandbox, Limits

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


def test_doctor_names_what_the_checks_environment_sees_outside_itself(tmp_path: Path) -> None:
    sandbox = BwrapSandbox()
    machine = IndexSettings(cache=str(tmp_path / "cache"))  # a machine with nothing built yet
    python = doctor.Check("python", True, "", "")
    clean = doctor._environment_in(sandbox, python, machine)
    assert clean.ok, clean
    assert "a virtualenv of its own" in clean.detail and "nothing of fixbot's" in clean.detail
    pytest_check = doctor._pytest_for(sandbox, python, machine)
    assert pytest_check.ok and pytest_check.version == PYTEST_PIN.split("==")[1]
    assert "not built here yet" in pytest_check.detail
    # What a .pth in the environment would add (the old view of fixbot's own packages).
    env = shared_environment(sandbox, Limits(timeout_seconds=300), machine, None)
    (site,) = env.glob("lib/python*/site-packages")
    site.chmod(0o755)
    (site / "outside.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    shadowed = doctor._environment_in(sandbox, python, machine)
    assert not shadowed.ok
    assert f"sees {sysconfig.get_paths()['purelib']}" in shadowed.detail
    assert "would shadow the project's" in shadowed.detail
