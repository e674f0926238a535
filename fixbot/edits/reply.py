"""A model's reply -> one canonical Patch (pure), whatever shape its edit came in.

The fenced unified diff stays the documented contract; small models often cannot write one
that applies, so when a reply has none, these shapes are accepted too:

    SEARCH/REPLACE blocks       path line, then <<<<<<< SEARCH / ======= / >>>>>>> REPLACE;
                                the search text must occur exactly once in the file (after
                                trailing whitespace is ignored)
    a whole definition          a fenced block naming an existing file (```python calc.py, or
                                the path alone on the line before the fence) holding complete
                                top-level functions or classes of that file: each replaces
                                the definition of the same name; a block that names no file
                                counts when exactly one file defines all its definitions
    a whole file                the same, holding the whole file (it defines every top-level
                                name the file defines)

Everything becomes FileChanges and then the one canonical diff, so policy, evidence and the PR
see a diff as always. A shape that does not fit exactly is a named problem, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fixbot.edits.definitions import fenced, owner, replace_definitions
from fixbot.edits.fences import extract_diff
from fixbot.edits.patch import DiffRejected, FileChange, Patch, render_diff, repo_path
from fixbot.edits.search_replace import apply_search_replace, search_replace_blocks
from fixbot.edits.unified import plan_patch

Reader = Callable[[str], str | None]
NO_EDIT = (
    "the reply contains no ```diff block with a unified diff (nor SEARCH/REPLACE "
    "blocks, nor a ```block naming a file)"
)


def parse_reply(reply: str, read: Reader, files: Sequence[str] = ()) -> Patch:
    """The one canonical patch a reply asks for; DiffRejected naming every problem otherwise
    (no edit at all, a hunk that does not apply, a block that fits no file)."""
    text = extract_diff(reply)
    if text is not None:
        try:
            return plan_patch(text, read)
        except DiffRejected as exc:
            raise DiffRejected(*(f"the diff does not apply: {p}" for p in exc.problems)) from exc
    try:
        found = parse_edits(reply, read, files)
    except DiffRejected as exc:
        raise DiffRejected(*(f"the edit does not apply: {p}" for p in exc.problems)) from exc
    if found is None:
        raise DiffRejected(NO_EDIT)
    return found


def parse_edits(reply: str, read: Reader, files: Sequence[str] = ()) -> Patch | None:
    """The patch the reply's other-shaped edits make, None when it holds none of them;
    DiffRejected naming each problem when it holds some that do not fit. `files` (the
    repository's) lets a ```python block that names no file count when its definitions are
    those of exactly one file."""
    text = reply.replace("\r\n", "\n")
    changes: dict[str, str] = {}
    originals: dict[str, str] = {}
    problems: list[str] = []

    def current(path: str) -> str | None:
        if path not in changes:
            found = read(path)
            if found is None:
                return None
            originals[path] = changes[path] = found
        return changes[path]

    found_any = False
    for path, search, replace in search_replace_blocks(text):
        found_any = True
        apply_search_replace(path, search, replace, current, changes, problems)
    if not found_any:
        for block in fenced(text):
            named = block.path or owner(block.body, files, read)
            if named is None:
                continue
            try:
                path = repo_path(named)
            except DiffRejected:
                continue
            content = current(path)
            if content is None:
                continue
            found_any = True
            replaced = replace_definitions(content, block.body)
            if replaced is None:
                problems.append(
                    f"{path}: the ```block is neither the whole file nor complete top-level "
                    "definitions of it; send a unified diff"
                )
            else:
                changes[path] = replaced
    if not found_any:
        return None
    if problems:
        raise DiffRejected(*problems)
    edited = [
        FileChange(path, originals[path], new)
        for path, new in changes.items()
        if new != originals[path]
    ]
    if not edited:
        raise DiffRejected("the edits change nothing")
    return Patch(changes=tuple(edited), diff=render_diff(edited))
