"""What a reply sends back when the file under repair is too large to come back whole: the
definitions the failing tests' tracebacks and imports name, each whole, when each can be put
back in its place without a guess; else a diff is asked for."""

from __future__ import annotations

from pathlib import Path

from fixbot import prompts
from fixbot.prompts.excerpts import assert_lines
from fixbot.prompts.returned import DEFINITIONS_CHARS
from fixbot.prompts.sources import Excerpt
from tests.prompts.test_excerpts import check_of, write

PADS = "".join(f"\n\ndef pad_{i}(x):\n    return x + {i}\n" for i in range(400))
SHOP = (
    "import math\n\n\n"
    "def total(prices):\n    return sum(prices) + 1\n\n\n"
    "class Cart:\n    def __init__(self):\n        self.items = []\n\n"
    "    def add(self, price):\n        self.items.append(-price)\n\n"
    "    def count(self):\n        return len(self.items)\n"
    "\n\nclass Till:\n    def __init__(self):\n        self.open = True\n" + PADS
)
TEST = (
    "from shop import Cart, total\n\n\n"
    "def test_total():\n    assert total([1, 2]) == 3\n\n\n"
    "def test_cart():\n    cart = Cart()\n    cart.add(2)\n    assert cart.items == [2]\n"
)
PROTECTED = {"tests/test_shop.py": ""}


def trace(*frames: tuple[str, int, str]) -> str:
    lines = ["Traceback (most recent call last):"]
    lines += [f'  File "/workspace/{path}", line {line}, in {name}' for path, line, name in frames]
    return "\n".join([*lines, "AssertionError"])


def line_of(text: str, needle: str) -> int:
    return text.splitlines().index(needle) + 1


def asked(tree: Path, files: list[str], **tests: tuple[str, str]) -> tuple[str, tuple[str, ...]]:
    check = check_of({f"tests.test_shop::{name}": value for name, value in tests.items()})
    found = prompts.definitions_to_return(
        check, tree, files, protected=PROTECTED, reply_tokens=2048
    )
    assert found.text.count("def ") == len(found.names)  # their text, one after another
    return found.file, found.names


def test_the_functions_a_large_files_tracebacks_name_are_asked_for_whole(tmp_path: Path) -> None:
    files = write(tmp_path, {"shop.py": SHOP, "tests/test_shop.py": TEST})
    bug = line_of(SHOP, "        self.items.append(-price)")
    detail = trace(("tests/test_shop.py", 11, "test_cart"), ("shop.py", bug, "add"))
    # The method the traceback names (its class's name with it: `add` is defined once), then
    # what the failing tests use by name, nearest the raise first; not the whole class.
    found = asked(tmp_path, files, test_cart=("AssertionError", detail))
    assert found == ("shop.py", ("Cart.add",))
    found = asked(
        tmp_path, files, test_cart=("AssertionError", detail), test_total=("assert 4 == 3", "")
    )
    assert found == ("shop.py", ("Cart.add", "total"))
    assert (
        prompts.file_to_return(
            check_of({"tests.test_shop::test_total": ("assert 4 == 3", "")}),
            tmp_path,
            files,
            protected=PROTECTED,
            reply_tokens=2048,
        )
        == ""
    )  # the file itself is too large to come back whole


def test_a_method_two_classes_define_is_asked_for_with_its_class(tmp_path: Path) -> None:
    files = write(tmp_path, {"shop.py": SHOP, "tests/test_shop.py": TEST})
    init = line_of(SHOP, "        self.items = []")
    detail = trace(("tests/test_shop.py", 10, "test_cart"), ("shop.py", init, "__init__"))
    # Cart.__init__ and Till.__init__: the ask names the class, the reply's `def __init__` goes
    # there (tests/edits/test_edits.py).
    found = asked(tmp_path, files, test_other=("AssertionError", detail))
    assert found == ("shop.py", ("Cart.__init__",))


def test_a_name_a_class_defines_twice_is_never_asked_for(tmp_path: Path) -> None:
    twice = SHOP.replace(
        "    def count(self):",
        "    @property\n    def size(self):\n        return 0\n\n"
        "    @size.setter\n    def size(self, value):\n        self.items = value\n\n"
        "    def count(self):",
    )
    files = write(tmp_path, {"shop.py": twice, "tests/test_shop.py": TEST})
    setter = line_of(twice, "        self.items = value")
    detail = trace(("tests/test_shop.py", 10, "test_cart"), ("shop.py", setter, "size"))
    assert asked(tmp_path, files, test_other=("AssertionError", detail)) == ("", ())


def test_two_files_or_too_much_code_ask_for_a_diff(tmp_path: Path) -> None:
    other = "def helper():\n    return 1\n" + PADS
    files = write(tmp_path, {"shop.py": SHOP, "other.py": other, "tests/test_shop.py": TEST})
    detail = trace(("shop.py", 5, "total"), ("other.py", 2, "helper"))
    assert asked(tmp_path, files, test_total=("AssertionError", detail)) == ("", ())
    huge = SHOP.replace(
        "    return sum(prices) + 1\n",
        f"    {'x = 1; ' * (DEFINITIONS_CHARS // 7)}\n    return sum(prices) + 1\n",
    )
    files = write(tmp_path, {"shop.py": huge, "other.py": ""})
    assert asked(tmp_path, files, test_total=("assert 4 == 3", "")) == ("", ())


def test_unittest_assertions_are_what_the_tests_check_each_on_one_line() -> None:
    text = (
        "    def test_repeat(self):\n"
        "        self.assertEqual(\n"
        "            list(mi.partial_product(iter('abc'), repeat=2)),\n"
        "            list(mi.partial_product('abc', repeat=2)),\n"
        "        )\n"
        "        assert mi.first(['a  b']) == 'a  b'  # spaces in a string are its value\n"
        "        self.helper(1)\n"
    )
    excerpt = Excerpt(title="t", text=text, fence="```", path="tests/test_more.py", whole=False)
    assert assert_lines([excerpt]) == [
        "self.assertEqual(list(mi.partial_product(iter('abc'), repeat=2)), "
        "list(mi.partial_product('abc', repeat=2)))",
        "assert mi.first(['a  b']) == 'a  b'",
    ]


def test_what_the_tests_check_keeps_a_strings_value_and_reads_a_column_0_string() -> None:
    """A red team's breaks: an assertion spanning lines lost its string's inner lines; a string
    at column 0 in a test method hid all the method's assertions."""
    multi = 'def test_render():\n    assert render(2) == """\\\na\n    b\n"""\n'
    excerpt = Excerpt(title="t", text=multi, fence="```", path="tests/test_r.py", whole=False)
    assert assert_lines([excerpt]) == ["assert render(2) == 'a\\n    b\\n'"]
    column0 = (
        "    def test_render(self):\n"
        '        expected = """\\\nline one\n"""\n'
        "        self.assertEqual(render(), expected)\n"
    )
    excerpt = Excerpt(title="t", text=column0, fence="```", path="tests/test_r.py", whole=False)
    assert assert_lines([excerpt]) == ["self.assertEqual(render(), expected)"]


def test_two_methods_of_one_name_are_never_asked_for_together(tmp_path: Path) -> None:
    shop = (
        "class Cart:\n    def __init__(self):\n        self.items = [0]\n\n\n"
        "class Till:\n    def __init__(self):\n        self.cart = Cart()\n" + PADS
    )
    files = write(tmp_path, {"shop.py": shop, "tests/test_shop.py": "from shop import Till\n"})
    detail = trace(
        ("tests/test_shop.py", 1, "test_till"),
        ("shop.py", line_of(shop, "        self.cart = Cart()"), "__init__"),
        ("shop.py", line_of(shop, "        self.items = [0]"), "__init__"),
    )
    # Nearest the raise first: Cart.__init__; Till.__init__ would be a second `def __init__`.
    found = asked(tmp_path, files, test_till=("AssertionError", detail))
    assert found == ("shop.py", ("Cart.__init__",))


def test_a_raise_in_what_no_reply_can_replace_asks_for_a_diff(tmp_path: Path) -> None:
    """The line that raised is in a property's setter (a name its class defines twice) or a
    `test*` method: asking for its caller instead would point away from it."""
    shop = (
        "class Cart:\n    @property\n    def size(self):\n        return 0\n\n"
        "    @size.setter\n    def size(self, value):\n        raise ValueError(value)\n\n"
        "    def resize(self, n):\n        self.size = n\n\n"
        "    def test(self, value):\n        return value > 1\n" + PADS
    )
    files = write(tmp_path, {"shop.py": shop, "tests/test_shop.py": "from shop import Cart\n"})
    detail = trace(
        ("tests/test_shop.py", 1, "test_resize"),
        ("shop.py", line_of(shop, "        self.size = n"), "resize"),
        ("shop.py", line_of(shop, "        raise ValueError(value)"), "size"),
    )
    assert asked(tmp_path, files, test_resize=("ValueError: 3", detail)) == ("", ())
    detail = trace(
        ("tests/test_shop.py", 1, "test_rule"),
        ("shop.py", line_of(shop, "        return value > 1"), "test"),
    )
    assert asked(tmp_path, files, test_rule=("AssertionError", detail)) == ("", ())
