"""Write outside the workspace: plain paths, dotfiles, system folders, and through links."""

import os

from probe import CASE, MARKER, attempt


def append(path):
    with open(path, "a") as handle:
        handle.write(f"pwned {MARKER}\n")


def attack():
    for path in CASE["targets"]:
        attempt(f"write {path}", lambda p=path: append(p))
    for link, target in CASE["links"].items():
        attempt(f"link {link}", lambda lk=link, t=target: os.symlink(t, lk))
        attempt(f"write through {link}", lambda lk=link: append(lk))
    attempt("write into linked folder", lambda: append(f"linked-folder/{MARKER}"))
    attempt("write into linked /etc", lambda: append(f"linked-etc/{MARKER}"))
