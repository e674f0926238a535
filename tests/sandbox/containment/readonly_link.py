"""The repository commits its protected conftest.py as a link to a host file: read it."""

from probe import attempt


def read(path):
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "replace")


def attack():
    attempt("read linked conftest", lambda: read("conftest.py"))
