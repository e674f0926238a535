"""The audit of code a run wrote: package data, never imported by fixbot.

fixbot screens the code a candidate adds; code written while the checks run (a module copied out
of a data file at import, a bytecode file, an extension module) was never read. fixbot stages
this file beside its pytest plugin as `sitecustomize.py`, with `laid.json`: the digest of every
code file of the tree as fixbot laid it, before any check ran. `auditor` makes the audit hook
(`sys.addaudithook`: hooks cannot be removed) that finds each code file Python is about to run
with bytes fixbot did not lay: a source file under the tree compiled, a bytecode file read or an
extension module loaded from the tree, or bytecode cached for the tree elsewhere (a
`pycache_prefix`). It also finds each
change to a `PYTHON*` or `FIXBOT_*` variable of the environment, which decides whether the
Pythons the run starts are audited. Its state lives in its closure, and it calls only what was
bound when it was made, built-in functions and the methods of built-in types (code that rebinds
`posixpath.normpath` does not blind it).

Every Python the run starts imports this file at start-up as `sitecustomize` (the staged folder
is first on PYTHONPATH) and adds the guard: what the audit finds is refused there (the import
fails, saying why), before any code of the tree's can run. In pytest's own process, fixbot's
plugin adds the audit that names each finding on the report channel instead, then hands off from
its module's own top-level code in this folder (HANDOFF), and only then does the guard stand
down; a second hand-off (code that got there first) is refused. A process the tests start is
never handed off. A `sitecustomize` of the environment's own is run after the guard, as site
would have run it. It imports nothing but the standard library, and runs under the project's
Python.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from typing import Any

LAID = "laid.json"
HANDOFF = "fixbot.audit.handoff"  # the plugin's audit event: its own audit reports now
SOURCE, BYTECODE = (".py", ".pyw"), (".pyc", ".pyo")
ENVIRONMENT = "(environment)"
WATCHED_VARIABLES = ("PYTHON", "FIXBOT_")
_HERE = os.path.dirname(os.path.abspath(__file__))


def laid(folder: str = _HERE) -> tuple[list[str], dict[str, str]]:
    """(every path at which the run sees the tree; path in the tree -> digest), or ([], {})
    where fixbot staged none (nothing is named then)."""
    try:
        with open(os.path.join(folder, LAID), encoding="utf-8") as handle:
            found = json.load(handle)
        files = {str(k): str(v) for k, v in dict(found["files"]).items()}
        return [str(root) for root in found["roots"]], files
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return [], {}


def auditor(roots: list[str], digests: dict[str, str], unread: Any) -> Any:
    """The audit hook: `unread(path, digest)` for each code file Python is about to run with
    bytes other than fixbot laid (`compile` of a .py, `open` of a .pyc, `import` of an extension
    module, under one of `roots`, the tree as the run sees it; an `open` of bytecode cached for
    it elsewhere), and `unread("(environment) KEY", "set" | "unset")` for each change to a
    watched variable. It fails closed: a check that raises (a `RecursionError` at the edge of
    the stack, a file it cannot read) is a finding, "unchecked"; where naming that raises too,
    the audited operation fails."""
    state = threading.local()
    sha256, fspath, getcwd = hashlib.sha256, os.fspath, os.getcwd
    encoding, read, text, raw = sys.getfilesystemencoding(), open, str, bytes
    startswith = str.startswith

    def absolute(path: str) -> str:
        """The path made absolute and normal by str methods alone (not posixpath's)."""
        if not startswith(path, "/"):
            path = getcwd() + "/" + path
        parts: list[str] = []
        for part in path.split("/"):
            if part == "..":
                if parts:
                    parts.pop()
            elif part not in ("", "."):
                parts.append(part)
        return "/" + "/".join(parts)

    bases = tuple(absolute(root) + "/" for root in roots)

    def decoded(path: Any) -> str | None:
        try:
            path = fspath(path)
        except TypeError:
            return None
        if isinstance(path, raw):
            path = raw.decode(path, encoding, "surrogateescape")
        return path if isinstance(path, text) and path and not startswith(path, "<") else None

    def digest(path: str, source: object) -> str | None:
        """sha256's first 16 hex digits of what is compiled: the bytes given, else the file's
        (an AST, as pytest's assertion rewriting passes); None with no file (nothing runs:
        pytest looks for bytecode it never wrote); "unreadable" for a file it cannot read."""
        if not isinstance(source, (bytes, bytearray, memoryview)):
            try:
                with read(path, "rb") as handle:
                    source = handle.read()
            except FileNotFoundError:
                return None
            except OSError:
                return "unreadable"
        return sha256(source).hexdigest()[:16]

    def changed(name: str, source: object) -> tuple[str, str] | None:
        full = absolute(name)
        base = next((b for b in bases if startswith(full, b)), "")
        cached_for_the_tree = full.endswith(BYTECODE) and any(b[1:] in full for b in bases)
        if not (base or cached_for_the_tree):
            return None  # the environment's, the standard library's, a test's temporary files
        rel = full[len(base) :] if base else full
        found = digest(full, source)
        return None if found is None or digests.get(rel) == found else (rel[:300], found)

    def variable(args: tuple[Any, ...], event: str) -> None:
        key = decoded(args[0]) if args else None
        if key is not None and startswith(key, WATCHED_VARIABLES):
            unread(f"{ENVIRONMENT} {key}"[:300], "set" if event == "os.putenv" else "unset")

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event in ("os.putenv", "os.unsetenv"):
            variable(args, event)
            return
        if event == "compile":
            at, suffixes, source = 1, SOURCE, (args[0] if args else None)
        elif event == "open":
            at, suffixes, source = 0, BYTECODE, None
        elif event == "import":
            at, suffixes, source = 1, None, None
        else:
            return
        name = decoded(args[at]) if len(args) > at and args[at] is not None else None
        if name is None or (suffixes is not None and not name.endswith(suffixes)):
            return
        if getattr(state, "busy", False):
            return
        state.busy = True
        try:
            found = changed(name, source)
        except BaseException:  # fail closed: what the audit could not check is a finding
            found = (name[:300], "unchecked")
        finally:
            state.busy = False
        if found is not None:
            unread(*found)

    return audit


class UnscreenedCode(RuntimeError):
    """Raised where the guard stands: a code file written during the run is about to run."""


def _refuse(path: str, digest: str) -> None:
    if path.startswith(ENVIRONMENT):
        if path.startswith(f"{ENVIRONMENT} FIXBOT_") and digest == "set":
            raise UnscreenedCode(f"fixbot: {path} is fixbot's; no code of the run sets it")
        return  # PYTHON*: pip and the like set them for their own children (pytest's are named)
    raise UnscreenedCode(
        f"fixbot: {path} was written while the checks ran and is not the code fixbot laid; "
        "no screen read it, so it does not run (put the code in the diff)"
    )


def guard(roots: list[str], digests: dict[str, str]) -> Any:
    """The start-up hook: the audit, refusing what it finds, until fixbot's plugin hands off
    from its module's top-level code in this folder; a second hand-off is refused."""
    audit = auditor(roots, digests, _refuse)
    standing = [True]
    frame_of, here, own = sys._getframe, _HERE, os.path.abspath(__file__)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == HANDOFF:
            code = frame_of(1).f_code  # who raised it: str methods only, nothing rebindable
            folder = str.rpartition(code.co_filename, "/")[0]
            plugin = code.co_name == "<module>" and code.co_filename != own and folder == here
            if not (plugin and standing[0]):
                raise UnscreenedCode("fixbot: the audit is handed off once, by fixbot's plugin")
            standing[0] = False
        elif standing[0]:
            audit(event, args)

    return hook


def _next_sitecustomize() -> None:
    """The environment's own `sitecustomize`, the first past this folder on the path, run as
    site would have run it."""
    import importlib.util

    for entry in sys.path:
        folder = os.path.abspath(entry or os.curdir)
        path = os.path.join(folder, "sitecustomize.py")
        if folder == _HERE or not os.path.isfile(path):
            continue
        spec = importlib.util.spec_from_file_location("sitecustomize", path)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)
        return


if __name__ == "sitecustomize":
    sys.addaudithook(guard(*laid()))
    _next_sitecustomize()
