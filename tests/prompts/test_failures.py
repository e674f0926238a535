"""What a small model is shown of a failure and asked to return: the line each test failed at,
object addresses left out, the tests as the read-only specification, and the one small file
under repair asked for whole."""

from __future__ import annotations

from pathlib import Path

from fixbot import prompts
from fixbot.prompts.failures import assertion, cleaned
from tests.prompts.test_excerpts import check_of, write

# pytest's traceback of a HumanEvalFix-shaped failure, as JUnit records it.
DETAIL = """def test_check():
>       check(has_close_elements)

tests/test_solution.py:18:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

has_close_elements = <function has_close_elements at 0x7ff6f3d56200>

    def check(has_close_elements):
        assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True
>       assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False
E       assert True == False
E        +  where True = <function has_close_elements at 0x7ff6f3d56200>([1.0, 2.0], 0.05)

tests/test_solution.py:9: AssertionError"""
MESSAGE = (
    "assert True == False\n +  where True = "
    "<function has_close_elements at 0x7ff6f3d56200>([1.0, 2.0], 0.05)"
)
SOLUTION = '''from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    """ Check if any two numbers are closer to each other than the threshold. """
    for idx, elem in enumerate(numbers):
        for idx2, elem2 in enumerate(numbers):
            if idx != idx2:
                distance = elem - elem2
                if distance < threshold:
                    return True

    return False
'''
TEST = """from solution import has_close_elements


def check(has_close_elements):
    assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True
    assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False


def test_check():
    check(has_close_elements)
"""
ID = "tests.test_solution::test_check"
PROTECTED = {"tests/test_solution.py": ""}


def test_the_assertion_is_the_innermost_marked_line_with_its_place() -> None:
    assert assertion(DETAIL) == (
        "tests/test_solution.py:9: "
        "assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False"
    )
    assert assertion("no traceback at all") == ""


def test_object_addresses_are_left_out() -> None:
    assert cleaned(MESSAGE) == (
        "assert True == False\n +  where True = has_close_elements([1.0, 2.0], 0.05)"
    )


def test_one_small_file_under_repair_is_asked_for_whole(tmp_path: Path) -> None:
    files = write(tmp_path, {"solution.py": SOLUTION, "tests/test_solution.py": TEST})
    check = check_of({ID: (MESSAGE, DETAIL)})
    found = prompts.file_to_return(check, tmp_path, files, protected=PROTECTED, reply_tokens=2048)
    assert found == "solution.py"
    # A reply reserve too small for the file: a diff is asked for instead.
    assert (
        prompts.file_to_return(check, tmp_path, files, protected=PROTECTED, reply_tokens=300) == ""
    )


def test_two_source_files_named_ask_for_a_diff(tmp_path: Path) -> None:
    helper = "def distance(a, b):\n    return a - b\n"
    files = write(
        tmp_path,
        {"solution.py": SOLUTION, "helper.py": helper, "tests/test_solution.py": TEST},
    )
    detail = DETAIL + "\nhelper.py:2: in distance\nsolution.py:9: in has_close_elements"
    check = check_of({ID: (MESSAGE, detail)})
    assert (
        prompts.file_to_return(check, tmp_path, files, protected=PROTECTED, reply_tokens=2048) == ""
    )


def test_the_whole_file_prompt_is_short_and_shows_what_the_tests_check(
    tmp_path: Path,
) -> None:
    files = write(
        tmp_path,
        {"solution.py": SOLUTION, "tests/test_solution.py": TEST, "meta.json": "{}"},
    )
    check = check_of({ID: (MESSAGE, DETAIL)})
    messages = prompts.task_messages(
        check,
        tree=tmp_path,
        files=files,
        manifest=PROTECTED,
        protected_globs=["tests/**"],
        commit="0" * 40,
        hint="",
        ci_jobs=[],
        lessons=[],
        budget_tokens=8000,
        room_tokens=5000,
        ask=prompts.Ask("whole_file", "solution.py"),
    )
    system, user = messages
    text = user["content"]
    assert text.startswith("`solution.py` has a bug: the test below fails because of it.")
    assert "failed at tests/test_solution.py:9: assert has_close_elements(" in text
    assert "0x7ff6f3d56200" not in text
    # What the tests check, as text: their assert lines, not their source (a small model
    # copies a test's source when shown it as code).
    checks = text.index("## What the tests check (read-only: the specification")
    assert (
        text.index("assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True")
        > checks
    )
    assert "def test_check" not in text and "def check" not in text
    assert text.index("## solution.py (whole file)") > checks
    assert "## Tracebacks" not in text and "## Repository files" not in text  # short
    assert "meta.json" not in text
    assert text.rstrip().endswith(
        "Reply with the complete corrected `solution.py` in one ```python block."
    )
    assert "These paths are protected" not in system["content"]
    short = prompts.task_messages(
        check,
        tree=tmp_path,
        files=files,
        manifest=PROTECTED,
        protected_globs=["tests/**"],
        commit="0" * 40,
        hint="",
        ci_jobs=[],
        lessons=[],
        budget_tokens=8000,
        room_tokens=5000,
        ask=prompts.Ask("whole_file", "solution.py", spec=False),
    )
    assert "What the tests check" not in short[1]["content"]  # the first prompt: shorter still


def test_a_retry_asked_afresh_has_no_reply_to_copy(tmp_path: Path) -> None:
    files = write(tmp_path, {"solution.py": SOLUTION, "tests/test_solution.py": TEST})
    check = check_of({ID: (MESSAGE, DETAIL)})
    common = {
        "tree": tmp_path,
        "files": files,
        "manifest": PROTECTED,
        "protected_globs": ["tests/**"],
        "commit": "0" * 40,
        "hint": "",
        "ci_jobs": [],
        "lessons": [],
        "budget_tokens": 8000,
        "room_tokens": 5000,
        "previous": ("my old reply", "Attempt 1 did not pass."),
    }
    kept = prompts.task_messages(check, ask=prompts.Ask("whole_file", "solution.py"), **common)  # type: ignore[arg-type]
    assert [m["role"] for m in kept] == ["system", "user", "assistant", "user"]
    assert kept[2]["content"] == "my old reply"
    fresh = prompts.task_messages(  # type: ignore[arg-type]
        check, ask=prompts.Ask("whole_file", "solution.py", history=False), **common
    )
    assert [m["role"] for m in fresh] == ["system", "user"]
    assert "my old reply" not in fresh[1]["content"]
    assert "## The last attempt\n\nAttempt 1 did not pass." in fresh[1]["content"]
