"""The policy's rules on what added code looks up by a name: a module's or namespace's member
by a name computed at run time, and the process's environment. A name the screen can fold
(`getattr(builtins, "ex" + "ec")`, `os.environ["PY" + "TEST_CURRENT_TEST"]`) is judged by what
it names, in the other rules; these refuse the lookups it cannot read.

    computes-a-name           `getattr`/`setattr`/`vars()[...]`/`globals()[...]`/`attrgetter`
                              with a computed name on a module, a namespace or the builtins
                              (on an object or a parameter it is ordinary code)
    probes-the-environment    an environment variable whose name is built from the code's own
                              literals in a way the screen cannot fold, the environment
                              iterated, `sys.orig_argv`, `__main__`, `/proc/self/cmdline` (a
                              name from the caller's data, `f"{prefix}_HOME"`, is the caller's)
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Iterator

from fixbot.screen.folding import assembles
from fixbot.screen.reach import attribute_call, call_of, mapping_use, namespace
from fixbot.screen.source import SCOPES, Hit, Source, line, under

# Namespaces whose members are capabilities: reaching one by a computed name is refused.
CAPABLE = frozenset(
    {
        *("builtins", "sys", "os", "posix", "nt", "importlib", "gc", "inspect", "types"),
        *("ctypes", "_ctypes", "operator", "io", "_io", "atexit", "weakref", "signal"),
        *("marshal", "pickle", "runpy", "code", "codeop", "subprocess", "socket", "pytest"),
        *("_pytest", "pluggy", "unittest", "__main__", "threading", "_thread", "traceback"),
        *("faulthandler", "site", "sysconfig", "pty", "fcntl", "mmap", "shutil"),
    }
)
ENVIRON = ("os.environ", "os.environb", "posix.environ", "nt.environ")
GETENV = ("os.getenv", "os.getenvb", "posix.getenv")
PROCESS = ("sys.orig_argv", "__main__")
PROCESS_PATH = re.compile(r"/proc/(?:self|thread-self|\d+|\{[^}]*\})/cmdline\b")
LITERAL_SOURCES = frozenset({"codecs", "base64", "binascii", "operator", "functools", "string"})
LITERAL_SOURCES |= {"itertools", "zlib", "bz2", "lzma"}
BUILTINS = frozenset(dir(builtins))


# --- computes-a-name ------------------------------------------------------------------------


def computes_a_name(source: Source) -> Iterator[Hit]:
    for node in source.new(ast.Call, ast.Subscript):
        what = _computed(source, node)
        if what:
            yield Hit(
                "computes-a-name",
                line(node),
                f"{source.snippet(node)} {what} by a name computed at run time, which the "
                "screen cannot read: name what the code uses",
            )


def _computed(source: Source, node: ast.AST) -> str:
    if isinstance(node, ast.Subscript):
        unread = isinstance(node.ctx, ast.Load) and source.folded(node.slice) is None
        return "reads a namespace" if unread and _namespace(source, node.value) else ""
    assert isinstance(node, ast.Call)
    func = source.name(node.func) or ""
    first = node.args[0] if node.args else None
    if attribute_call(source, node) and source.folded(node.args[1]) is None:
        return "reaches into a module or namespace" if _capable(source, node.args[0]) else ""
    if func in ("operator.attrgetter", "operator.methodcaller") and first is not None:
        return f"builds `{func}`" if source.folded(first) is None else ""
    getter = isinstance(node.func, ast.Attribute) and node.func.attr == "get"
    if getter and first is not None and source.folded(first) is None:
        assert isinstance(node.func, ast.Attribute)
        return "reads a namespace" if _namespace(source, node.func.value) else ""
    return ""


def _namespace(source: Source, node: ast.AST) -> bool:
    """A module's or function's namespace (reach.namespace), or the builtins."""
    return bool(namespace(source, node)) or source.name(node) == "builtins"


def _capable(source: Source, node: ast.AST, depth: int = 4) -> bool:
    """A namespace, `sys.modules[...]` (but this module's own), an imported module whose
    members are capabilities (builtins, sys, os, importlib, ...), or a name bound to one."""
    if _namespace(source, node):
        return True
    if isinstance(node, ast.Subscript) and source.name(node.value) == "sys.modules":
        return not (isinstance(node.slice, ast.Name) and node.slice.id == "__name__")
    if isinstance(node, ast.Call):
        return under(source.name(node.func) or "", ("importlib", "__import__", "builtins"))
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    bound = source.bound(root)
    if bound is not None:
        return depth > 0 and root is node and _capable(source, bound, depth - 1)
    imported = root.id in source.aliases and (source.scope(root), root.id) not in source.bindings
    name = source.name(node) or ""
    return name.split(".")[0] in CAPABLE and (imported or name.startswith("builtins"))


# --- probes-the-environment -----------------------------------------------------------------


def probes_the_environment(source: Source) -> Iterator[Hit]:
    for node, name in source.references():
        env = next((m for m in ENVIRON if under(name, (m,))), None)
        if env and (found := mapping_use(source, node, name, env, copied_is_whole=False)):
            kind, key = found
            if kind == "whole":
                yield _probe(source, node, "goes through the whole environment")
            elif key is not None and _hidden(source, key):
                yield _probe(source, node, NAME_BUILT)
        elif name in GETENV and (call := call_of(source, node)) and call.args:
            if _hidden(source, call.args[0]):
                yield _probe(source, call, NAME_BUILT)
        elif under(name, PROCESS):
            yield _probe(source, node, f"reads `{name}`, what runs the process")
    for spelled, text in source.strings():
        if PROCESS_PATH.search(text) and not isinstance(source.parents.get(spelled), ast.Expr):
            yield _probe(source, spelled, "reads what runs the process")
    for statement in source.new(ast.Import, ast.ImportFrom):
        assert isinstance(statement, ast.Import | ast.ImportFrom)
        names = [a.name for a in statement.names]
        names += [statement.module or ""] if isinstance(statement, ast.ImportFrom) else []
        if "__main__" in names:
            yield _probe(source, statement, "imports `__main__`, what runs the process")


NAME_BUILT = "reads an environment variable whose name is built from literals"


def _hidden(source: Source, key: ast.AST) -> bool:
    """A name the code builds from its own literals in a way the screen cannot fold (a name it
    can fold is judged by what it says; one from the caller's data is the caller's)."""
    if source.folded(key) is not None:
        return False
    if isinstance(key, ast.Name):
        bound = source.bound(key)
        return bound is not None and _hidden(source, bound)
    return assembles(key) and _from_literals(source, key, set())


def _from_literals(source: Source, node: ast.AST, local: set[str], depth: int = 6) -> bool:
    """Whether every leaf of `node` is a literal, a builtin, a function of the codec modules or
    a name bound to such an expression: no parameter, attribute of an object or call of the
    code's own functions."""
    if depth < 0:
        return False
    for inner in ast.walk(node):
        if isinstance(inner, ast.comprehension):
            local |= {n.id for n in ast.walk(inner.target) if isinstance(n, ast.Name)}
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
            if inner.id in local or (inner.id in BUILTINS and source.bound(inner) is None):
                continue
            bound = source.bound(inner)
            root = (source.aliases.get(inner.id) or "").split(".")[0]
            if root in LITERAL_SOURCES:
                continue
            if bound is None or not _from_literals(source, bound, local, depth - 1):
                return False
        elif isinstance(inner, SCOPES):
            return False
    return True


def _probe(source: Source, node: ast.AST, what: str) -> Hit:
    return Hit(
        "probes-the-environment",
        line(node),
        f"{source.snippet(node)} {what}: code that looks at the process it runs in can tell "
        "the test run from any other; read the configuration by name, as documented",
    )


LOOKUP_RULES: dict[str, Callable[[Source], Iterator[Hit]]] = {
    "computes-a-name": computes_a_name,
    "probes-the-environment": probes_the_environment,
}
