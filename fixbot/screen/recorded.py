"""A recorded diff read as data, for the publish step: nothing in it is trusted, nothing runs.

The publish job gets fix.diff from another job (an artifact anyone in that job could have
replaced), so it checks the diff again before git sees it, by the same rules as the fix phase
and more strictly:

    * the shape is exactly what fixbot renders (edits.render_diff): `diff --git a/P b/P`, an
      optional `new file mode 100644` or `deleted file mode 100644`, `---`/`+++` naming P, and
      hunks whose line counts hold. Anything else git would act on is refused by name: a mode
      change (`old mode`/`new mode`, an executable bit), a symlink (120000), a submodule
      (160000), a rename or copy, a binary patch, a stray line between files;
    * every path: never editable (case-insensitively: `.GitHub/...`, `.GITMODULES`), not
      protected by the trusted config's globs or the defaults (case-insensitively), not a
      test file, and a plain relative path (no `..`, no absolute path, no control character).

`refused_paths` is the path rule alone, for what git itself reports it would touch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from fixbot.screen.paths import never_editable
from fixbot.screen.policy import is_test_path
from fixbot.snapshot import is_protected

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_MODES = {"new file mode 100644", "deleted file mode 100644"}
_NAMED = (  # what a header line git understands does, for the refusal
    ("old mode", "changes a file's mode"),
    ("new mode", "changes a file's mode"),
    ("new file mode 120000", "adds a symbolic link"),
    ("new file mode 160000", "adds a submodule"),
    ("new file mode", "adds a file with a mode other than 100644 (an executable?)"),
    ("deleted file mode", "deletes a file that is not a plain file"),
    ("rename ", "renames a file"),
    ("copy ", "copies a file"),
    ("similarity index", "renames or copies a file"),
    ("dissimilarity index", "rewrites a file"),
    ("index ", "names blobs (fixbot's diffs never do)"),
    ("GIT binary patch", "is a binary patch"),
    ("Binary files", "changes a binary file"),
    ("Subproject commit", "changes a submodule"),
)


def refused_paths(paths: Iterable[str], protected: Sequence[str]) -> list[str]:
    """Why each path may not be published (no human can open a protected file here)."""
    globs = [glob.lower() for glob in protected]
    problems = []
    for path in paths:
        low = path.lower()
        parts = path.split("/")
        if path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in path:
            problems.append(f"it changes {path!r}, which is not a plain relative path")
        elif any(not ch.isprintable() for ch in path):
            problems.append(f"it changes {path!r}, whose name holds a control character")
        elif never_editable(low):
            problems.append(f"it changes {path!r}: CI, git's or fixbot's own file")
        elif is_protected(low, globs) or is_test_path(low):
            problems.append(f"it changes {path!r}: a test, or test or gate configuration")
    return problems


def recorded_problems(diff: str, protected: Sequence[str]) -> list[str]:
    """Every reason to refuse publishing `diff`; [] when it is a canonical diff of allowed
    paths."""
    problems: list[str] = []
    paths: list[str] = []
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        header = lines[i]
        if not header.startswith("diff --git a/"):
            problems.append(f"line {i + 1} is not a canonical diff's file header: {header!r:.80}")
            break
        i, path, why = _file(lines, i)
        paths.append(path)
        if why:
            problems.append(f"its section for {path!r} {why}")
            break
    if not paths and not problems:
        problems.append("it changes nothing")
    return problems + refused_paths(dict.fromkeys(paths), protected)


def _file(lines: list[str], i: int) -> tuple[int, str, str]:
    """One file's section from line i: (the next line, its path, why it is refused or "")."""
    names = lines[i].removeprefix("diff --git ")
    half = (len(names) - 1) // 2
    path = names[2:half]
    if names != f"a/{path} b/{path}":
        return i, names, "names two different paths (a rename?)"
    i += 1
    old, new = f"--- a/{path}", f"+++ b/{path}"
    if i < len(lines) and lines[i] in _MODES:
        if lines[i].startswith("new"):
            old = "--- /dev/null"
        else:
            new = "+++ /dev/null"
        i += 1
    if i + 1 >= len(lines) or (lines[i], lines[i + 1]) != (old, new):
        shown = lines[i] if i < len(lines) else "the end of the diff"
        return i, path, _named(shown)
    i += 2
    hunks = 0
    while i < len(lines) and (hunk := _HUNK.fullmatch(lines[i])):
        old_count = int(hunk[2]) if hunk[2] is not None else 1
        new_count = int(hunk[4]) if hunk[4] is not None else 1
        i, why = _hunk(lines, i + 1, old_count, new_count)
        if why:
            return i, path, why
        hunks += 1
    if not hunks:
        return i, path, "has no hunk"
    return i, path, ""


def _hunk(lines: list[str], i: int, old: int, new: int) -> tuple[int, str]:
    while old > 0 or new > 0:
        if i >= len(lines):
            return i, "ends inside a hunk"
        mark = lines[i][:1]
        if mark == " ":
            old, new = old - 1, new - 1
        elif mark == "-":
            old -= 1
        elif mark == "+":
            new -= 1
        elif lines[i] != "\\ No newline at end of file":
            return i, f"has a line its hunk does not count: {lines[i]!r:.80}"
        if old < 0 or new < 0:
            return i, "has a hunk longer than its header says"
        i += 1
    while i < len(lines) and lines[i] == "\\ No newline at end of file":
        i += 1
    return i, ""


def _named(line: str) -> str:
    for start, meaning in _NAMED:
        if line.startswith(start):
            return f"{meaning} ({line!r:.80}), which fixbot never publishes"
    return f"has a header line fixbot never writes: {line!r:.80}"
