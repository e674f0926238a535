"""A model's reply -> one canonical Patch (pure), whatever shape its edit came in.

The fenced unified diff stays the documented contract; small models often cannot write one
that applies, so when a reply has none, these shapes are accepted too:

    SEARCH/REPLACE blocks       path line, then <<<<<<< SEARCH / ======= / >>>>>>> REPLACE;
                                the search text must occur exactly once in the file (after
                                trailing whitespace is ignored)
    a whole file                a code block naming an existing file (```python calc.py, or
                                the path alone on a line before the block, e.g. a bold
                                `**calc.py**:` heading; the block fenced, or indented four
                                spaces) holding the whole file: every top-level definition
                                the file has (imports it drops are kept)
    whole definitions           the same, holding complete functions, classes or methods of
                                that file: each replaces the definition of the same name (a
                                class missing some methods replaces only those it holds), a
                                new one (a helper) joins them

A code block that names no file (or one that does not exist) counts when exactly one file
defines its definitions; else each definition goes to the one file that defines it (the
test's helper to the test file, where the screen drops it; the fixed function to its module).
A diff of a file that does not exist applies to the one existing file all its hunks fit, else
the problem names the files that exist.

Everything becomes FileChanges and then the one canonical diff, so policy, evidence and the PR
see a diff as always. A shape that does not fit exactly is a named problem, never a guess;
an edit that leaves every file as it is, is refused with NO_CHANGE. Which changes may be kept
(a reply that also edits a protected test) is the screen's to say, not this module's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fixbot.edits.blocks import code_blocks, is_code
from fixbot.edits.definitions import asked_of, owned_parts, replace_definitions
from fixbot.edits.fences import extract_diff
from fixbot.edits.patch import NO_CHANGE, DiffRejected, FileChange, Patch, render_diff, repo_path
from fixbot.edits.search_replace import apply_search_replace, search_replace_blocks
from fixbot.edits.tidied import module_names
from fixbot.edits.unchanged import same_code
from fixbot.edits.unified import plan_patch

Reader = Callable[[str], str | None]
NO_EDIT = (
    "the reply contains no edit: no ```python block with the corrected code (nor a ```diff "
    "block with a unified diff, nor SEARCH/REPLACE blocks)"
)


def parse_reply(
    reply: str, read: Reader, files: Sequence[str] = (), asked: Sequence[str] = ()
) -> Patch:
    """The one canonical patch a reply asks for; DiffRejected naming every problem otherwise
    (no edit at all, a hunk that does not apply, a block that fits no file, no change).
    `asked`: the definitions the reply was asked for (`path::name`, `path::Class.method`: a
    definition sent alone goes to that file, a method several classes define to that
    class)."""
    text = extract_diff(reply)
    if text is not None:
        try:
            return plan_patch(text, read, files)
        except DiffRejected as exc:
            problems = (_plainly("the diff does not apply", p) for p in exc.problems)
            raise DiffRejected(*problems) from exc
    try:
        found = parse_edits(reply, read, files, asked)
    except DiffRejected as exc:
        problems = (_plainly("the edit does not apply", p) for p in exc.problems)
        raise DiffRejected(*problems) from exc
    if found is None:
        raise DiffRejected(NO_EDIT)
    return found


def _plainly(lead: str, problem: str) -> str:
    return problem if problem == NO_CHANGE else f"{lead}: {problem}"


def parse_edits(
    reply: str, read: Reader, files: Sequence[str] = (), asked: Sequence[str] = ()
) -> Patch | None:
    """The patch the reply's other-shaped edits make, None when it holds none of them;
    DiffRejected naming each problem when it holds some that do not fit. `files` (the
    repository's) lets a code block that names no file count when its definitions are those
    of exactly one file."""
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
        found_any = _apply_blocks(text, read, files, asked, current, changes, problems)
    if not found_any:
        return None
    if problems:
        raise DiffRejected(*problems)
    edited = [
        FileChange(path, originals[path], new)
        for path, new in changes.items()
        if not same_code(new, originals[path], path)
    ]
    if not edited:
        raise DiffRejected(NO_CHANGE)
    return Patch(changes=tuple(edited), diff=render_diff(edited))


def _apply_blocks(
    text: str,
    read: Reader,
    files: Sequence[str],
    asked: Sequence[str],
    current: Callable[[str], str | None],
    changes: dict[str, str],
    problems: list[str],
) -> bool:
    """Each code block put into the file it names (or the one file defining its
    definitions); whether any block was for an existing file."""
    found_any = False
    for block in code_blocks(text):
        if not is_code(block):
            continue
        for path, part in _targets(block.path, block.body, read, files, asked):
            content = current(path)
            if content is None:
                continue
            found_any = True
            replaced = replace_definitions(content, part, module_names(path), asked_of(asked, path))
            if replaced is None:
                problems.append(
                    f"{path}: the code block is neither the whole file nor complete "
                    "definitions of it (functions, classes or methods); send the whole "
                    "corrected function"
                )
            else:
                changes[path] = replaced
    return found_any


def _targets(
    named: str | None, body: str, read: Reader, files: Sequence[str], asked: Sequence[str]
) -> list[tuple[str, str]]:
    """The existing files a block is for, and its part for each: the one it names, else
    (naming none, or one that does not exist) the files that define its definitions."""
    try:
        path = repo_path(named) if named else None
    except DiffRejected:
        return []
    if path is not None and read(path) is not None:
        return [(path, body)]
    return owned_parts(body, files, read, asked)
