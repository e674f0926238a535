"""What a small model is shown of a failure and asked to return: the line each test failed at
and its evidence (head and tail), object addresses left out, the tests as the read-only
specification, and the one small file under repair asked for whole."""

from __future__ import annotations

from pathlib import Path

from fixbot import prompts
from fixbot.model.window import estimate_tokens
from fixbot.prompts.failures import EVIDENCE_LINES, assertion, cleaned, evidence
from fixbot.records import CheckResult
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


def whole_file_ask(
    tree: Path, files: list[str], check: CheckResult, ask: prompts.Ask, room_tokens: int = 5000
) -> list[prompts.Message]:
    """The conversation that asks for solution.py whole, as generate builds it."""
    return prompts.task_messages(
        check,
        tree=tree,
        files=files,
        manifest=PROTECTED,
        protected_globs=["tests/**"],
        commit="0" * 40,
        hint="",
        ci_jobs=[],
        lessons=[],
        budget_tokens=8000,
        room_tokens=room_tokens,
        ask=ask,
    )


def test_the_whole_file_prompt_is_short_and_shows_what_the_tests_check(
    tmp_path: Path,
) -> None:
    files = write(
        tmp_path,
        {"solution.py": SOLUTION, "tests/test_solution.py": TEST, "meta.json": "{}"},
    )
    check = check_of({ID: (MESSAGE, DETAIL)})
    system, user = whole_file_ask(tmp_path, files, check, prompts.Ask("whole_file", "solution.py"))
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
    short = whole_file_ask(
        tmp_path, files, check, prompts.Ask("whole_file", "solution.py", spec=False)
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


def short_ask(tmp_path: Path, check: CheckResult, room_tokens: int = 5000) -> str:
    """The first whole-file ask (the short one) for solution.py."""
    files = write(tmp_path, {"solution.py": SOLUTION, "tests/test_solution.py": TEST})
    ask = prompts.Ask("whole_file", "solution.py", spec=False)
    system, user = whole_file_ask(tmp_path, files, check, ask, room_tokens)
    assert estimate_tokens(system["content"] + user["content"]) <= room_tokens
    return user["content"]


def test_the_short_ask_carries_the_assertion_and_the_values_pytest_printed(
    tmp_path: Path,
) -> None:
    text = short_ask(tmp_path, check_of({ID: (MESSAGE, DETAIL)}))
    assert text.startswith(
        f"`solution.py` has a bug; the test `{ID}` fails:\n\n```text\n{ID}\n"
        "    failed at tests/test_solution.py:9: "
        "assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False\n"
        "    assert True == False\n"
        "     +  where True = has_close_elements([1.0, 2.0], 0.05)\n```\n\n"
        "Reply with the complete corrected `solution.py` in one ```python block.\n\n"
        "solution.py:\n```python\n"
    )
    assert "What the tests check" not in text and "def test_check" not in text  # still short


def test_a_long_message_keeps_its_head_and_tail_and_the_ask_fits_a_small_window(
    tmp_path: Path,
) -> None:
    lines = [f"E   line {n} of the comparison" for n in range(2_000)]
    message = "AssertionError: the distinctive head\n" + "\n".join(lines) + "\nthe distinctive tail"
    text = short_ask(tmp_path, check_of({ID: (message, DETAIL)}))
    assert "the distinctive head" in text and "the distinctive tail" in text
    assert "line 1000 of" not in text and "lines elided ...]" in text
    shown = text.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    assert len(shown) <= 2 + EVIDENCE_LINES + 1  # the id, where it failed, a few lines
    # A window with little room: the message gives way, the id and the file stay.
    small = short_ask(tmp_path, check_of({ID: ("x" * 5_000, DETAIL)}), room_tokens=1_500)
    assert f"\n{ID}\n" in small and "def has_close_elements" in small
    assert "x" * 1_000 not in small and "x" * 100 in small


COMMAND = "command: python smoke.py"
OUTPUT = "\n".join([*(f"warming up {n}" for n in range(300)), "AssertionError: smoke fails"])


def test_a_check_that_is_not_a_test_run_shows_its_output_tail_once() -> None:
    check = check_of({COMMAND: ("exit code 1", OUTPUT)})
    shown = evidence(COMMAND, check["tests"][COMMAND])
    assert shown.startswith("exit code 1\nwarming up 0\n")
    assert shown.endswith("warming up 299\nAssertionError: smoke fails")
    assert "warming up 150" not in shown
    (told,) = prompts.failing(check)  # the feedback: the same evidence, the log in full too
    assert told["message"] == shown and told["detail"] == OUTPUT
    # A short output is the evidence whole: the feedback does not repeat it.
    few = check_of({"check: lint": ("ruff: 1 finding", "app.py:2: F821 Undefined name `sys`")})
    (told,) = prompts.failing(few)
    assert told["message"] == "ruff: 1 finding\napp.py:2: F821 Undefined name `sys`"
    assert told["detail"] == ""
    # A test's traceback is not its evidence: the message and the marked line say it.
    assert evidence(ID, check_of({ID: (MESSAGE, DETAIL)})["tests"][ID]) == cleaned(MESSAGE)


def test_in_pythons_own_traceback_the_innermost_workspace_frame_is_where_it_failed() -> None:
    """unittest's tracebacks have no `>` marks: the innermost frame of the repository's code
    (the sandbox's /workspace), not the standard library's, is where it failed."""
    detail = (
        "Traceback (most recent call last):\n"
        '  File "/workspace/tests/test_more.py", line 41, in test_iterator_input\n'
        "    mi.product_index(iter([1]), iter([1, 2]))\n"
        '  File "/workspace/more_itertools/more.py", line 4334, in product_index\n'
        "    if len(element) != len(args):\n"
        "       ^^^^^^^^^^^^\n"
        '  File "/usr/lib/python3.11/functools.py", line 12, in wrapper\n'
        "    return f()\n"
        "TypeError: object of type 'list_iterator' has no len()"
    )
    assert assertion(detail) == "more_itertools/more.py:4334: if len(element) != len(args):"


def test_a_syntax_error_fails_at_the_broken_line_not_the_import() -> None:
    detail = (
        "ImportError: Failed to import test module: tests.test_syn\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/unittest/loader.py", line 362, in _get_module_from_name\n'
        "    __import__(name)\n"
        '  File "/workspace/tests/test_syn.py", line 2, in <module>\n'
        "    from pkg import broken\n"
        '  File "/workspace/pkg/broken.py", line 1\n'
        "    def f(:\n"
        "          ^\n"
        "SyntaxError: invalid syntax"
    )
    assert assertion(detail) == "pkg/broken.py:1: def f(:"
