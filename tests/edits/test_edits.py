"""Other reply shapes (SEARCH/REPLACE, whole definitions, whole files) -> the canonical diff,
which then applies with real `git apply`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from fixbot.edits import NO_CHANGE, DiffRejected, Patch, placeable, plan_patch
from fixbot.edits.reply import parse_edits
from tests.conftest import RunFixbot, make_repo
from tests.fake_openai import ScriptedOpenAI

CALC = '''"""Small numeric helpers."""

import math


def add(a: float, b: float) -> float:
    return a + b


def mean(values: list[float]) -> float:
    """The arithmetic mean of a non-empty list."""
    return sum(values) / (len(values) + 1)


def clamp(x: float, low: float, high: float) -> float:
    return max(low, min(x, high))
'''
FILES = {"calc.py": CALC, "pkg/util.py": "def f():\n    return 1\n"}


def read(path: str) -> str | None:
    return FILES.get(path)


def applies(diff: str, tmp_path: Path) -> dict[str, str]:
    """The files after `git apply` of the diff on a real repository holding FILES."""
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "apply", "-"], input=diff, text=True, check=True)
    return {rel: (tmp_path / rel).read_text() for rel in FILES}


def test_search_replace_block(tmp_path: Path) -> None:
    reply = """The mean divides by one too many.

calc.py
```python
<<<<<<< SEARCH
    return sum(values) / (len(values) + 1)
=======
    return sum(values) / len(values)
>>>>>>> REPLACE
```
"""
    patch = parse_edits(reply, read)
    assert patch is not None and patch.paths == ("calc.py",)
    after = applies(patch.diff, tmp_path)
    assert "return sum(values) / len(values)\n" in after["calc.py"]
    assert plan_patch(patch.diff, read).diff == patch.diff  # canonical: it plans to itself


def test_search_text_must_match_exactly_once() -> None:
    missing = "calc.py\n<<<<<<< SEARCH\n    return nothing\n=======\n    pass\n>>>>>>> REPLACE\n"
    with pytest.raises(DiffRejected, match="does not occur"):
        parse_edits(missing, read)
    twice = {"calc.py": "x = 1\nx = 1\n"}
    with pytest.raises(DiffRejected, match="occurs 2 times"):
        parse_edits("calc.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n", twice.get)
    with pytest.raises(DiffRejected, match="names no file"):
        parse_edits("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", read)


def test_a_whole_function_in_a_block_naming_the_file(tmp_path: Path) -> None:
    reply = """Fixed:

```python calc.py
import statistics


def mean(values: list[float]) -> float:
    \"\"\"The arithmetic mean of a non-empty list.\"\"\"
    return statistics.fmean(values)
```
"""
    patch = parse_edits(reply, read)
    assert patch is not None
    after = applies(patch.diff, tmp_path)["calc.py"]
    assert "return statistics.fmean(values)" in after
    assert "import math\nimport statistics\n" in after  # the new import, after the old ones
    assert "def add(" in after and "def clamp(" in after  # the rest untouched


def test_a_whole_file_with_the_path_on_the_line_before(tmp_path: Path) -> None:
    fixed = CALC.replace("(len(values) + 1)", "len(values)")
    reply = f"**calc.py**\n```python\n{fixed}```\n"
    patch = parse_edits(reply, read)
    assert patch is not None
    assert applies(patch.diff, tmp_path)["calc.py"] == fixed


def test_shapes_that_do_not_fit_are_named_not_guessed() -> None:
    loose = "```python calc.py\nprint('hello')\n```\n"
    with pytest.raises(DiffRejected, match="neither the whole file nor complete"):
        parse_edits(loose, read)
    unknown_name = "```python calc.py\ndef median(v):\n    return v[0]\n```\n"
    with pytest.raises(DiffRejected, match="neither the whole file"):
        parse_edits(unknown_name, read)
    same = "```python pkg/util.py\ndef f():\n    return 1\n```\n"
    with pytest.raises(DiffRejected, match="changes nothing"):
        parse_edits(same, read)


def test_prose_and_unnamed_blocks_are_not_edits() -> None:
    assert parse_edits("I cannot fix this.", read) is None
    assert parse_edits("```python\ndef mean(v):\n    return 0\n```\n", read) is None
    assert parse_edits("```python nothere.py\ndef f():\n    pass\n```\n", read) is None
    assert parse_edits("```python ../etc/passwd.py\ndef f():\n    pass\n```\n", read) is None


# --- end to end: a SEARCH/REPLACE reply fixes the bundled example like a diff would ---

SEARCH_REPLACE = """The mean divides by one too many.

calc.py
<<<<<<< SEARCH
    return sum(values) / (len(values) + 1)
=======
    return sum(values) / len(values)
>>>>>>> REPLACE
"""


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_search_replace_reply_is_fixed_and_evidenced_as_a_diff(
    tmp_path: Path, run_fixbot: RunFixbot
) -> None:
    repo = make_repo(tmp_path / "repo", {".fixbot.yml": "gates: {lint: false, types: false}\n"})
    with ScriptedOpenAI([SEARCH_REPLACE]) as server:
        run = run_fixbot(repo, base_url=server.base_url)
    assert run.code == 0, run.stderr
    assert run.evidence["status"] == "fixed"
    assert "+    return sum(values) / len(values)" in run.evidence["diff"]
    assert (run.out / "fix.diff").read_text() == run.evidence["diff"]


def test_a_cut_off_search_replace_block_is_named_not_applied() -> None:
    cut = "calc.py\n<<<<<<< SEARCH\n    return sum(values) / (len(values) + 1)\n=======\n"
    with pytest.raises(DiffRejected, match="not closed"):
        parse_edits(cut, read)


def test_a_block_with_every_definition_but_not_the_imports_is_not_the_whole_file(
    tmp_path: Path,
) -> None:
    defs_only = CALC.split("import math\n", 1)[1].replace("(len(values) + 1)", "len(values)")
    patch = parse_edits(f"```python calc.py\n{defs_only}```\n", read)
    assert patch is not None
    after = applies(patch.diff, tmp_path)["calc.py"]
    assert "import math" in after and '"""Small numeric helpers."""' in after  # kept
    assert "return sum(values) / len(values)" in after


def test_a_block_naming_no_file_counts_when_one_file_defines_it(tmp_path: Path) -> None:
    fixed = "def mean(values: list[float]) -> float:\n    return sum(values) / len(values)\n"
    patch = parse_edits(f"Here:\n```python\n{fixed}```\n", read, list(FILES))
    assert patch is not None and patch.paths == ("calc.py",)
    assert "return sum(values) / len(values)" in applies(patch.diff, tmp_path)["calc.py"]
    both = {**FILES, "copy.py": CALC}  # two files define mean: no guess
    assert parse_edits(f"```python\n{fixed}```\n", both.get, list(both)) is None
    assert parse_edits(f"```python\n{fixed}```\n", read) is None  # no file list: no guess


SHAPES = """class Square:
    def __init__(self, side: float) -> None:
        self.side = side

    def area(self) -> float:
        return self.side * self.side


class Circle:
    def __init__(self, radius: float) -> None:
        self.radius = -radius
"""


def test_a_method_several_classes_define_goes_to_the_class_the_ask_named(tmp_path: Path) -> None:
    """`def __init__` alone could be Square's or Circle's: no guess, unless the reply was
    asked for `Circle.__init__`, which places it there (at the class's indentation)."""
    files = {"shapes.py": SHAPES}
    fixed = "def __init__(self, radius: float) -> None:\n    self.radius = radius\n"
    reply = f"```python\n{fixed}```\n"
    assert parse_edits(reply, files.get, list(files)) is None  # no file it fits: no edit
    patch = parse_edits(reply, files.get, list(files), asked=["shapes.py::Circle.__init__"])
    assert patch is not None and patch.paths == ("shapes.py",)
    changed = [line for line in patch.diff.splitlines()[3:] if line[:1] in "+-"]
    assert changed == ["-        self.radius = -radius", "+        self.radius = radius"]
    # A class the ask did not name, or two it named, place nothing.
    assert parse_edits(reply, files.get, list(files), asked=["shapes.py::Square.area"]) is None
    both = ["shapes.py::Square.__init__", "shapes.py::Circle.__init__"]
    assert parse_edits(reply, files.get, list(files), asked=both) is None


def test_star_imports_above_the_code_as_it_was_change_nothing() -> None:
    """A small model sends the function back as it was under `from typing import *` (HumanEval's
    files open with such lines): no change, refused as one, never run."""
    same = CALC.split("\n\n\ndef mean")[1].split("\n\n\ndef clamp")[0]
    star = f"```python\nfrom typing import *\nfrom collections import *\n\ndef mean{same}\n```\n"
    with pytest.raises(DiffRejected) as refused:
        parse_edits(star, read, list(FILES))
    assert refused.value.problems == (NO_CHANGE,)
    fixed = star.replace("(len(values) + 1)", "len(values)")
    patch = parse_edits(fixed, read, list(FILES))
    assert patch is not None and "+    return sum(values) / len(values)" in patch.diff


SHOP = (
    "class Cart:\n    def __init__(self):\n        self.items = []\n\n"
    "    def add(self, price):\n        self.items.append(-price)\n\n"
    "    def count(self):\n        return len(self.items)\n"
)


def asked_patch(reply: str, files: dict[str, str], asked: list[str]) -> Patch | None:
    return parse_edits(f"```python\n{reply}```\n", files.get, list(files), asked)


def test_an_asked_method_goes_to_the_file_asked_about_whatever_else_defines_it() -> None:
    """A test double in another file defines `add` too: the bare `def add` of a reply asked
    for shop.py's Cart.add goes to shop.py (a red team's break)."""
    double = "class FakeCart:\n    def add(self, price):\n        pass\n"
    files = {"shop.py": SHOP, "tests/test_shop.py": double}
    fixed = "def add(self, price):\n    self.items.append(price)\n"
    patch = asked_patch(fixed, files, ["shop.py::Cart.add"])
    assert patch is not None and patch.paths == ("shop.py",)
    assert asked_patch(fixed, files, []) is None  # not asked: two files define it, no guess


def test_a_definition_sent_from_its_def_line_keeps_its_decorators() -> None:
    """The ask shows a property with its decorator; a reply sent from the `def` line keeps it
    (a red team's break: the decorator was silently dropped)."""
    box = (
        "import functools\n\n\nclass Box:\n    @property\n    def size(self):\n"
        "        return -1\n\n    def other(self):\n        return 2\n\n\n"
        "@functools.cache\ndef area():\n    return -4\n"
    )
    files = {"box.py": box}
    patch = asked_patch("def size(self):\n    return 1\n", files, ["box.py::Box.size"])
    assert patch is not None and "-    @property" not in patch.diff
    assert "-        return -1\n+        return 1\n" in patch.diff
    patch = asked_patch("def area():\n    return 4\n", files, ["box.py::area"])
    assert patch is not None and "-@functools.cache" not in patch.diff
    # A reply that sends decorators replaces them: they are part of what it sent.
    patch = asked_patch("@functools.lru_cache\ndef area():\n    return 4\n", files, [])
    assert patch is not None and "-@functools.cache\n+@functools.lru_cache" in patch.diff


def test_a_helper_taking_self_beside_an_asked_method_joins_its_class() -> None:
    fixed = (
        "def add(self, price):\n    self.items.append(self._clean(price))\n\n\n"
        "def _clean(self, price):\n    return abs(price)\n"
    )
    patch = asked_patch(fixed, {"shop.py": SHOP}, ["shop.py::Cart.add"])
    assert patch is not None
    assert "+    def _clean(self, price):\n+        return abs(price)\n" in patch.diff
    assert "+def _clean" not in patch.diff


def test_a_star_import_the_code_may_need_is_a_change() -> None:
    """A star import counts as no change only where it can bring nothing the code uses: not
    in a package's __init__.py (a re-export), not where the module reads a name it does not
    bind (a NameError it fixes), not a relative one."""
    init = {"pkg/__init__.py": '"""Package."""\n\nfrom .utils import *\n'}
    reexport = (
        "pkg/__init__.py\n```\n<<<<<<< SEARCH\nfrom .utils import *\n=======\n"
        "from .core import *\nfrom .utils import *\n>>>>>>> REPLACE\n```\n"
    )
    patch = parse_edits(reexport, init.get, list(init))
    assert patch is not None and "+from .core import *" in patch.diff
    calc = {"calc.py": "def mean(values: List[float]) -> float:\n    return sum(values) / 2\n"}
    typed = "from typing import *\n\n" + calc["calc.py"]
    assert asked_patch(typed, calc, []) is not None  # List was read and never bound
    solution = {"solution.py": "def add(a: int, b: int) -> int:\n    return a - b\n"}
    with pytest.raises(DiffRejected) as refused:  # blank lines after the import: still none
        asked_patch("from typing import *\n\n\n" + solution["solution.py"], solution, [])
    assert refused.value.problems == (NO_CHANGE,)


def test_what_can_be_asked_for_is_what_can_be_placed() -> None:
    """edits.placeable, which the ask is chosen from, agrees with the reader: a class defined
    twice, a name a class defines twice, a `test*` method are never offered."""
    source = (
        "class A:\n    def m(self):\n        pass\n\n    def m(self):\n        pass\n\n\n"
        "class A:\n    pass\n\n\nclass B:\n    def m(self):\n        return 1\n\n"
        "    def n(self):\n        return 2\n\n    def test(self, v):\n        return v\n\n\n"
        "class C:\n    def n(self):\n        return 3\n\n\ndef f():\n    return 0\n"
    )
    assert placeable(source) == {"B.n", "C.n", "f"}
    for name in sorted(placeable(source)):
        cls, _, method = name.rpartition(".")
        sent = f"def {method}(self):\n    return 9\n" if cls else "def f():\n    return 9\n"
        patch = asked_patch(sent, {"m.py": source}, [f"m.py::{name}"])
        assert patch is not None, name
