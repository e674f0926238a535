"""Read the host's private files: keys, root's home, fixbot's checkpoint database."""

import os

from probe import CASE, attempt, record


def read(path):
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "replace")


def attack():
    for name, path in CASE["targets"].items():
        attempt(f"read {name}", lambda p=path: read(p))
    for folder in CASE["folders"]:
        attempt(f"list {folder}", lambda f=folder: sorted(os.listdir(f)))
    attempt("expanded ~/.ssh", lambda: sorted(os.listdir(os.path.expanduser("~/.ssh"))))
    record(home=os.path.expanduser("~"))
