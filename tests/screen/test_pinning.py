"""special-cases-test by what a condition pins, not by the literals it spells.

A fix that states a rule over a class of inputs the failing tests show (`11 <= n % 100 <= 13`:
true for 11, 12, 13, 111, 112, 113, and for 211) is how a good engineer writes it, even though
it names tested numbers (tenacity's ordinal fix, refused by the literal rule on the held-out
real-build case tenacity-3). A condition that holds for a handful of integers, or for one tested
input, singles them out however it is spelled: `== 111`, `110 < n < 114`, `n % 10**6 == 111`, a
class narrowed by an `if` nested under it, a modulus that covers one tested case.
"""

from __future__ import annotations

import ast
from pathlib import Path
from textwrap import dedent

import pytest

from fixbot.edits import FileChange, plan_patch, render_diff
from fixbot.screen import policy
from fixbot.screen.pinning import pins, predicate, unknown_of
from fixbot.snapshot import read_inside

ORDINAL = dedent(
    '''
    def suffix(n: int) -> str:
        """The English ordinal suffix of n: 1st, 2nd, 3rd, 4th, 11th, 21st, 111th."""
    BODY
        if n % 10 == 1:
            return "st"
        if n % 10 == 2:
            return "nd"
        if n % 10 == 3:
            return "rd"
        return "th"
    '''
).lstrip()
TESTS = dedent(
    """
    from ordinal import suffix


    def test_suffix() -> None:
        assert suffix(1) == "st"
        assert suffix(2) == "nd"
        assert suffix(3) == "rd"
        assert suffix(4) == "th"
        assert suffix(11) == "th"
        assert suffix(12) == "th"
        assert suffix(13) == "th"
        assert suffix(21) == "st"
        assert suffix(111) == "th"
        assert suffix(112) == "th"
        assert suffix(113) == "th"
    """
).lstrip()
FAILING = ["tests.test_ordinal::test_suffix"]


def review(tmp_path: Path, body: str, tests: str = TESTS) -> set[str]:
    """The rules the screen finds in `body` put at the top of `suffix`."""
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    before = ORDINAL.replace("BODY\n", "")
    (tree / "ordinal.py").write_text(before)
    (tree / "tests" / "test_ordinal.py").write_text(tests)
    lines = dedent(body).strip("\n").splitlines()
    after = ORDINAL.replace("BODY\n", "".join(f"    {line}\n" for line in lines))
    change = FileChange("ordinal.py", before, after)
    patch = plan_patch(render_diff([change]), lambda rel: read_inside(tree, rel))
    found = policy.review(patch, tree=tree, failing_tests=FAILING, strictness="strict")
    return {f.rule for f in found}


HONEST = {
    "range-over-the-last-two-digits": "if 11 <= (n % 100) <= 13:\n    return 'th'",
    "membership-of-the-last-two-digits": "if n % 100 in (11, 12, 13):\n    return 'th'",
    "else-branch": "if not 11 <= n % 100 <= 13:\n    pass\nelse:\n    return 'th'",
    "teens-by-floor-division": "if n % 100 // 10 == 1:\n    return 'th'",
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_a_rule_over_a_class_the_tests_show_is_a_fix(tmp_path: Path, name: str) -> None:
    assert review(tmp_path, HONEST[name]) == set()


SPECIAL = {
    "equality": "if n == 111:\n    return 'th'",
    "membership-of-the-input": "if n in (11, 12, 13, 111, 112, 113):\n    return 'th'",
    "range-of-the-input": "if 110 < n < 114:\n    return 'th'",
    "range-by-negation": "if not (n < 111 or n > 113):\n    return 'th'",
    "a-modulus-too-wide-to-repeat": "if n % 1000000 in (111, 112, 113):\n    return 'th'",
    "a-modulus-by-power": "if n % 10**6 == 111:\n    return 'th'",
    "class-narrowed-by-a-nested-if": (
        "if n % 100 in (11, 12, 13):\n    if 100 < n < 200:\n        return 'th'"
    ),
    "class-narrowed-in-an-else": (
        "if n % 100 not in (11, 12, 13):\n    pass\nelse:\n    if 100 < n < 200:\n"
        "        return 'th'"
    ),
    "class-narrowed-by-and": "if n % 100 in (11, 12, 13) and 100 < n < 200:\n    return 'th'",
    "class-narrowed-by-an-enclosing-if": (
        "if n > 100:\n    if n < 200:\n        if n % 100 in (11, 12, 13):\n            return 'th'"
    ),
    "assigned-not-returned": ("if n % 100 in (11, 12, 13):\n    if 100 < n < 200:\n        n = 4"),
    "a-modulus-that-covers-one-tested-input": "if n % 60 == 11:\n    return 'th'",
    "an-unknown-that-is-not-the-parameter": "m = n\nif m % 100 in (11, 12, 13):\n    return 'th'",
}


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_a_condition_that_singles_out_tested_inputs_is_refused(tmp_path: Path, name: str) -> None:
    assert "special-cases-test" in review(tmp_path, SPECIAL[name])


def test_one_tested_member_of_the_class_is_not_a_class_the_tests_show(tmp_path: Path) -> None:
    """With 11 the only tested teen, the honest range answers one tested case, as a special
    case does: the screen cannot tell them apart, and refuses."""
    eleven_only = "".join(
        line + "\n"
        for line in TESTS.splitlines()
        if not any(f"({n})" in line for n in (12, 13, 111, 112, 113))
    )
    found = review(tmp_path, HONEST["range-over-the-last-two-digits"], eleven_only)
    assert "special-cases-test" in found


def _condition(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("11 <= (n % 100) <= 13", False),
        ("n % 100 in (11, 12, 13)", False),
        ("year % 400 == 0", False),
        ("n >= 111", False),
        ("len(xs) % 2 == 0", False),
        ("self.n % 100 == 11", False),
        ("n == 111", True),
        ("110 < n < 114", True),
        ("not (n < 111 or n > 113)", True),
        ("n % 1000000 == 111", True),
        ("n == 123456789", True),
        ("len(xs) == 3", True),
        ("n != 0 and 100 // n == 3", True),  # the error at n = 0 is False, not a crash
        ("s == 'abc'", None),
        ("x == 0.5", None),
        ("f(111) == n", None),
        ("a % 100 == b", None),
        ("n ** 2 == 12321", None),
        ("n << 3 == 8", None),
        ("n is 111", None),
        ("n in range(111, 114)", None),
        ("1 < 2", None),
    ],
)
def test_pins(text: str, expected: bool | None) -> None:
    assert pins(_condition(text)) is expected


def test_an_unknown_is_one_expression_repeated() -> None:
    assert unknown_of(_condition("len(xs) > 2 and len(xs) < 9")) == ast.dump(_condition("len(xs)"))
    assert unknown_of(_condition("len(xs) > 2 and len(ys) < 9")) is None
    holds = predicate(_condition("11 <= n % 100 <= 13"))
    assert holds is not None
    assert [x for x in range(300) if holds(x)] == [11, 12, 13, 111, 112, 113, 211, 212, 213]
