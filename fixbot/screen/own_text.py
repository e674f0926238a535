"""The module's own docstrings and source read as data (part of `special-cases-test`, with
prose.py): the prose examples are the tests' answers, and text no rule reads as code would
decide the result.

Refused where the diff adds it: `__doc__` however it is reached (`getattr(f, "__doc__")`, an
instance's), `help()`, `inspect.getdoc`/`getsource`/`getcomments`, `linecache`, `pydoc`, a read
of the module's own file or of a `.py` beside it (a path from `__file__`, `__spec__.origin`,
`inspect.getfile`, a module's `__file__`, through `resolve()`, `abspath`, `os.path.join`). Not
refused: a docstring handed on as help text (`ArgumentParser(description=__doc__)` whose result
is not read back, `print(__doc__)` to the terminal, `wrapper.__doc__ = func.__doc__`), and the
docstring of a function's parameter (`func.__doc__` in a registry: a caller's function).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fixbot.screen.folding import call_name
from fixbot.screen.source import Hit, Source, line, under

SHOWN = ("print", "logging", "logger", "log", "warnings.warn")
REDIRECTS = ("contextlib.redirect_stdout", "contextlib.redirect_stderr")
OWN_TEXT = (
    *("inspect.getdoc", "inspect.getsource", "inspect.getsourcelines", "inspect.getcomments"),
    *("inspect.findsource", "linecache", "pydoc", "tokenize.open", "help", "builtins.help"),
)
ORIGINS = ("inspect.getfile", "inspect.getsourcefile", "inspect.getabsfile")
SAME_PATH = ("resolve", "absolute", "abspath", "realpath", "normpath", "Path", "PurePath", "str")
READERS = ("open", "read_text", "read_bytes", "open_code", "readlines", "getlines")
HELP_SINKS = ("ArgumentParser", "add_parser", "add_argument", "command", "group", "option")
HELP_KEYWORDS = frozenset({"description", "epilog", "help", "usage"})


def is_named(source: Source, node: ast.AST, names: tuple[str, ...]) -> bool:
    return under(source.name(node) or "", names)


def only_shown(source: Source, node: ast.AST) -> bool:
    """A string printed (to the terminal: no `file=`), logged or warned, and nothing else."""
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, ast.Call):
            if any(k.arg == "file" for k in ancestor.keywords):
                return False
            return is_named(source, ancestor.func, SHOWN)
        if not isinstance(ancestor, ast.JoinedStr | ast.FormattedValue | ast.BinOp):
            return False
    return False


def redirected(source: Source) -> bool:
    """Whether the diff's file captures what it prints (`redirect_stdout`): then nothing it
    prints is only shown."""
    return any(is_named(source, n, REDIRECTS) for n, _ in source.references())


def own_text(source: Source) -> Iterator[Hit]:
    """Code the diff adds that reads the module's docstrings or source as data."""
    reads: list[ast.AST] = [
        node
        for node, name in source.references()
        if (is_named(source, node, OWN_TEXT) or _reads_doc(source, node, name))
        and not _of_a_parameter(source, node)
    ]
    reads += [n for n in source.new(ast.Attribute) if _instance_doc(source, n)]
    reads += [n for n in source.new(ast.Call) if _opens_own_source(source, n)]
    for node in reads:
        yield Hit(
            "special-cases-test",
            line(node),
            f"{source.snippet(node)} reads the module's own docstrings or source as data: "
            "answers parsed from prose decide the result where no rule reads them; compute them",
        )


def _reads_doc(source: Source, node: ast.AST, name: str) -> bool:
    if name.rpartition(".")[2] != "__doc__":
        return False
    if isinstance(node, ast.Attribute | ast.Name) and not isinstance(node.ctx, ast.Load):
        return False
    return not _handed_on(source, node)


def _instance_doc(source: Source, node: ast.AST) -> bool:
    """`_T().__doc__`: a docstring reached through an object the names do not follow."""
    assert isinstance(node, ast.Attribute)
    if node.attr != "__doc__" or source.name(node) or not isinstance(node.ctx, ast.Load):
        return False
    return not _handed_on(source, node) and not _of_a_parameter(source, node)


def _root(node: ast.AST) -> ast.AST:
    """The name an expression starts from: `f` of `f.__doc__`, `getattr(f, ...)`, `f().x`."""
    while True:
        if isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            method = isinstance(node.func, ast.Attribute)
            node = node.args[0] if node.args and not method else node.func
        else:
            return node


def _of_a_parameter(source: Source, node: ast.AST) -> bool:
    """Whether the object read is a parameter of the function around it (`func.__doc__` in a
    decorator or a registry: a caller's function, not the module's own text)."""
    parent = source.parents.get(node)
    if isinstance(parent, ast.Call) and parent.func is node and parent.args:
        node = parent.args[0]  # inspect.getdoc(func)
    root = _root(node)
    if not isinstance(root, ast.Name):
        return False
    scope = source.scope(node)
    arguments = getattr(scope, "args", None)
    if not isinstance(arguments, ast.arguments):
        return False
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return root.id in {a.arg for a in every} and root.id not in ("self", "cls")


def _handed_on(source: Source, node: ast.AST) -> bool:
    """`ArgumentParser(description=__doc__)` (its result not read back), `print(__doc__)`,
    `wrapper.__doc__ = func.__doc__`."""
    parent = source.parents.get(node)
    if isinstance(parent, ast.keyword):
        call = source.parents.get(parent)
        sink = isinstance(call, ast.Call) and _is_help_sink(source, call)
        return parent.arg in HELP_KEYWORDS and sink
    if isinstance(parent, ast.Assign) and parent.value is node:
        return all(getattr(t, "attr", getattr(t, "id", "")) == "__doc__" for t in parent.targets)
    if isinstance(parent, ast.Call) and node in parent.args:
        return only_shown(source, node) or _is_help_sink(source, parent)
    return False


def _is_help_sink(source: Source, call: ast.Call) -> bool:
    read_back = isinstance(source.parents.get(call), ast.Attribute)
    return call_name(call) in HELP_SINKS and not read_back


def _opens_own_source(source: Source, node: ast.AST) -> bool:
    """A read of the module's own file, or of a `.py` beside it: `open(__file__)`,
    `Path(__file__).resolve().read_text()`, `open(__spec__.origin)`,
    `open(os.path.join(os.path.dirname(__file__), "ordinal.py"))`."""
    assert isinstance(node, ast.Call)
    func = node.func
    if call_name(node) not in READERS:
        return False
    targets = [*node.args[:1], *([func.value] if isinstance(func, ast.Attribute) else [])]
    return any(_own_path(source, target) for target in targets)


def _own_path(source: Source, node: ast.AST) -> bool:
    if not any(_origin(source, n) for n in ast.walk(node)):
        return False
    if _origin(source, _unwrapped(source, node)):
        return True  # the file itself
    text = source.folded(node) or ""
    strings = [s for _, s in source.strings(node)]
    return text.endswith((".py", ".pyw")) or any(s.endswith((".py", ".pyw")) for s in strings)


def _unwrapped(source: Source, node: ast.AST) -> ast.AST:
    """The path under calls that keep it the same file (`Path(x).resolve()`, `abspath(x)`)."""
    for _ in range(8):
        if isinstance(node, ast.Call):
            func = node.func
            if call_name(node) not in SAME_PATH:
                return node
            if isinstance(func, ast.Attribute) and not node.args:
                node = func.value  # Path(x).resolve()
            elif node.args:
                node = node.args[0]
            else:
                return node
        else:
            return node
    return node


def _origin(source: Source, node: ast.AST) -> bool:
    """`__file__`, `__spec__.origin`, a module's `__file__`, `inspect.getfile(...)`."""
    if isinstance(node, ast.Name):
        return node.id == "__file__"
    if isinstance(node, ast.Attribute):
        return node.attr == "__file__" or (
            node.attr == "origin" and getattr(node.value, "id", "") == "__spec__"
        )
    return isinstance(node, ast.Call) and is_named(source, node.func, ORIGINS)
