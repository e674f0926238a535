"""Rewrite the tests that judge this code, at run time."""

import os

from probe import attempt


def write(path, text, mode="a"):
    with open(path, mode) as handle:
        handle.write(text)


def attack():
    attempt("append", lambda: write("tests/test_hostile.py", "\ndef test_extra(): pass\n"))
    attempt("truncate", lambda: write("tests/test_hostile.py", "", "w"))
    attempt("remove", lambda: os.remove("tests/test_hostile.py"))
    attempt("rename folder", lambda: os.rename("tests", "tests-gone"))
    attempt("new conftest", lambda: write("tests/conftest.py", "collect_ignore = ['.']\n", "w"))
    attempt("chmod", lambda: os.chmod("tests/test_hostile.py", 0o777))
    attempt("replace probe", lambda: os.replace("hostile.py", "probe.py"))
