"""Wait for input that never comes: on stdin, through input(), from a terminal."""

import os
import sys

from probe import attempt


def attack():
    attempt("read fd 0", lambda: repr(os.read(0, 100)))
    attempt("input", lambda: repr(input()))
    attempt("sys.__stdin__", lambda: repr(sys.__stdin__.readline()))
    attempt("tty", lambda: open("/dev/tty").close())
