"""How each decisive test is judged the second time, read from the protected files alone: plain
where a plain call is what pytest would do, unittest for a TestCase method, and pytest for
everything a plain call could get wrong (never more lenient than pytest itself)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from fixbot.checks.rejudge import plans
from fixbot.checks.rejudge.modes import plan

TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def judged(files: Mapping[str, str], nodeid: str, *, cwd: bool = False) -> tuple[str, ...]:
    found = plan("t", nodeid, files.get, cwd_on_path=cwd)
    return found.mode, found.module, found.name, ",".join(found.paths), str(found.line)


def test_a_plain_function_is_called_as_pytest_would_import_it() -> None:
    files = {"tests/test_calc.py": TEST}
    assert judged(files, "tests/test_calc.py::test_add") == (
        "plain",
        "test_calc",
        "test_add",
        "tests",
        "4",
    )


def test_a_package_of_tests_is_imported_from_its_first_folder_without_an_init() -> None:
    files = {"tests/__init__.py": "", "tests/unit/__init__.py": "", "tests/unit/test_c.py": TEST}
    mode, module, _, paths, _ = judged(files, "tests/unit/test_c.py::test_add", cwd=True)
    assert (mode, module, paths) == ("plain", "tests.unit.test_c", ".")


def test_the_configurations_pythonpath_comes_first() -> None:
    files = {
        "tests/test_calc.py": TEST,
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src", "."]\n',
    }
    assert judged(files, "tests/test_calc.py::test_add")[3] == "src,.,tests"
    ini = {"tests/test_calc.py": TEST, "pytest.ini": "[pytest]\npythonpath = lib\n"}
    assert judged(ini, "tests/test_calc.py::test_add")[3] == "lib,tests"


UNITTEST = """import unittest


class Base(unittest.TestCase):
    pass


class TestAdd(Base):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    @unittest.skipIf(False, "never")
    def test_decorated(self):
        pass
"""


def test_a_testcase_method_is_run_by_unittest() -> None:
    files = {"test_u.py": UNITTEST}
    assert judged(files, "test_u.py::TestAdd::test_add") == (
        "unittest",
        "test_u",
        "TestAdd.test_add",
        ".",
        "9",
    )


@pytest.mark.parametrize(
    ("files", "nodeid", "why"),
    [
        ({"t.py": TEST}, "t.py::test_add[1-2]", "parametrized"),
        ({"t.py": "def test_x(tmp_path):\n    pass\n"}, "t.py::test_x", "takes fixtures"),
        (
            {"t.py": "import pytest\n\n@pytest.mark.xfail\ndef test_x():\n    pass\n"},
            "t.py::test_x",
            "decorated",
        ),
        ({"t.py": TEST, "conftest.py": ""}, "t.py::test_add", "conftest.py"),
        ({"a/t.py": TEST, "conftest.py": "x = 1\n"}, "a/t.py::test_add", "conftest.py"),
        (
            {
                "t.py": "import pytest\n\n@pytest.fixture(autouse=True)\ndef f():\n    pass\n\n\n"
                + TEST
            },
            "t.py::test_add",
            "fixtures",
        ),
        ({"t.py": "pytestmark = []\n" + TEST}, "t.py::test_add", "fixtures"),
        ({"t.py": "def setup_module():\n    pass\n\n\n" + TEST}, "t.py::test_add", "module setup"),
        (
            {"t.py": TEST, "pytest.ini": "[pytest]\naddopts = -p xdist\n"},
            "t.py::test_add",
            "addopts -p",
        ),
        (
            {"t.py": TEST, "setup.cfg": "[tool:pytest]\naddopts = --import-mode=importlib\n"},
            "t.py::test_add",
            "--import-mode",
        ),
        (
            {"t.py": TEST, "tox.ini": "[pytest]\nusefixtures = db\n"},
            "t.py::test_add",
            "usefixtures",
        ),
        ({"t.py": UNITTEST}, "t.py::TestAdd::test_decorated", "TestCase"),
        (
            {"t.py": "class TestPlain:\n    def test_x(self):\n        pass\n"},
            "t.py::TestPlain::test_x",
            "TestCase",
        ),
        ({"t.py": "def test_x(:\n"}, "t.py::test_x", "does not parse"),
        ({}, "t.py::test_x", "not in the snapshot"),
        ({"t.py": TEST}, "t.py::test_gone", "not a plain function"),
        (
            {"mod.py": "def f():\n    '''\n    >>> f()\n    '''\n"},
            "mod.py::mod.f",
            "not a plain function",
        ),
    ],
)
def test_anything_a_plain_call_could_get_wrong_is_pytests_to_judge(
    files: Mapping[str, str], nodeid: str, why: str
) -> None:
    found = plan("t", nodeid, files.get, cwd_on_path=False)
    assert found.mode == "pytest"
    assert why in found.why, found.why


def test_each_test_gets_its_own_plan() -> None:
    files = {"t.py": TEST, "u.py": UNITTEST}
    found = plans(
        [("a", "t.py::test_add"), ("b", "u.py::TestAdd::test_add")], files.get, cwd_on_path=False
    )
    assert [(p.test, p.mode) for p in found] == [("a", "plain"), ("b", "unittest")]
