"""The policy's rules on what added code can reach, whatever it is called: the interpreter's
frames and heap, and the insides of modules and functions. An informed forger never writes
`sys._getframe` twice the same way, so each rule judges what an expression reaches
(`Source.name`: through imports, bindings, `getattr` with a name built from parts, `vars()`,
`globals()`, `__dict__`) and which attributes it reads, never how the code spells it.

    reaches-frames            frame objects and stacks: `sys._getframe`, `inspect.stack`,
                              `traceback.walk_stack`, any `f_back`, `f_globals`, `tb_frame`, ...
    walks-the-heap            the object graph: `gc.get_objects`/`get_referrers`/...,
                              `__subclasses__`, `sys.modules` iterated or read by a computed key
    rewrites-object-internals `__class__`, `__dict__`, `__globals__`, `__defaults__`, ... written
                              on a module, function or class (never on `self`), a namespace
                              written by key, `mock.patch` in the code under test

What code looks up by a name (namespaces, the environment) is judged in lookups.py.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from fixbot.screen.source import FUNCTIONS, NAMESPACES, Hit, Source, line, under

FRAME_CALLS = (
    *("sys._getframe", "sys._getframemodulename", "sys._current_frames", "inspect.currentframe"),
    *("sys._current_exceptions", "inspect.stack", "inspect.trace", "inspect.getouterframes"),
    *("inspect.getinnerframes", "inspect.getframeinfo", "traceback.extract_stack"),
    *("traceback.walk_stack", "traceback.walk_tb", "traceback.print_stack"),
    *("traceback.format_stack", "traceback.StackSummary", "logging.currentframe"),
)
FRAME_ATTRIBUTES = frozenset(
    {
        *("f_back", "f_globals", "f_locals", "f_builtins", "f_code", "f_trace", "f_lasti"),
        *("tb_frame", "tb_next", "gi_frame", "cr_frame", "ag_frame", "f_generator"),
        *("gi_code", "cr_code", "ag_code", "cr_await", "gi_yieldfrom", "findCaller"),
    }
)
HEAP_CALLS = (
    *("gc.get_objects", "gc.get_referrers", "gc.get_referents", "gc.garbage"),
    *("sys.getobjects", "sys.getallocatedblocks"),
)
HEAP_ATTRIBUTES = frozenset({"__subclasses__"})
# Written on anything but self or cls, these re-wire a module, function or class for every
# caller: a module's class swapped for one whose attribute lookup returns no-ops, a function's
# defaults or globals replaced, a class's bases changed.
INTERNALS = frozenset(
    {
        *("__class__", "__dict__", "__globals__", "__defaults__", "__kwdefaults__"),
        *("__closure__", "cell_contents", "__getattr__", "__getattribute__", "__setattr__"),
        *("__delattr__", "__dir__", "__builtins__", "__bases__"),
    }
)
OWN = frozenset({"self", "cls", "mcs", "metacls"})
_SETTERS = ("setattr", "delattr", "object.__setattr__", "type.__setattr__", "object.__delattr__")
SETTERS = frozenset(n for name in _SETTERS for n in (name, f"builtins.{name}"))
ATTRIBUTE_CALLS = SETTERS | {"getattr", "hasattr", "builtins.getattr", "builtins.hasattr"}
WRITES = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__"})
PATCHERS = ("unittest.mock.patch", "mock.patch", "unittest.mock.patch.object")
KEYED = frozenset({"get", "pop", "setdefault", "__getitem__", "__contains__", "__delitem__"})
TRAVERSALS = frozenset({"keys", "items", "values", "__iter__"})
SPREADERS = {"list", "tuple", "set", "frozenset", "sorted", "str", "repr", "iter", "any", "all"}
SPREADERS |= {"filter", "map", "enumerate", "zip", "max", "min", "next", "print", "reversed"}
SPREADERS |= {"json.dumps", "pprint.pformat", "format", "dict.values", "dict.items", "dict.keys"}
COPIERS = frozenset({"dict", "dict.copy", "copy.copy", "copy.deepcopy"})  # the whole, passed on


def attributes(source: Source) -> Iterator[tuple[ast.AST, str]]:
    """Every attribute the new code reads by name: `x.attr`, and `getattr(x, "at" + "tr")`,
    `setattr`, `hasattr`, `delattr` with a name the screen can fold."""
    for node in source.new(ast.Attribute, ast.Call):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            yield node, node.attr
        elif isinstance(node, ast.Call) and attribute_call(source, node):
            attr = source.folded(node.args[1])
            if attr is not None:
                yield node, attr


def attribute_call(source: Source, node: ast.Call) -> bool:
    return len(node.args) >= 2 and (source.name(node.func) or "") in ATTRIBUTE_CALLS


# --- reaches-frames -------------------------------------------------------------------------


def reaches_frames(source: Source) -> Iterator[Hit]:
    for node, name in source.references():
        if under(name, FRAME_CALLS):
            yield _frames(source, node, f"`{name}`")
    for touched, attr in attributes(source):
        if attr in FRAME_ATTRIBUTES:
            yield _frames(source, touched, f"`{attr}`")


def _frames(source: Source, node: ast.AST, what: str) -> Hit:
    return Hit(
        "reaches-frames",
        line(node),
        f"{source.snippet(node)} uses {what}, a frame or stack of the running program: it "
        "reaches the caller (the test and its module) instead of taking its input; code under "
        "test must not look at who calls it",
    )


# --- walks-the-heap -------------------------------------------------------------------------


def walks_the_heap(source: Source) -> Iterator[Hit]:
    for node, name in source.references():
        if under(name, HEAP_CALLS):
            yield _heap(source, node, f"`{name}`")
        elif found := mapping_use(source, node, name, "sys.modules", copied_is_whole=True):
            kind, key = found
            if kind == "whole" or not _known_key(source, key):
                yield _heap(source, node, "`sys.modules` iterated or read by a computed key")
    for touched, attr in attributes(source):
        if attr in HEAP_ATTRIBUTES:
            yield _heap(source, touched, f"`{attr}`")


def _heap(source: Source, node: ast.AST, what: str) -> Hit:
    return Hit(
        "walks-the-heap",
        line(node),
        f"{source.snippet(node)}: {what} reaches objects the code was never given (every "
        "module, the tests' among them, or every live object); work on the arguments instead",
    )


def _known_key(source: Source, node: ast.AST | None) -> bool:
    """A key the screen can read (a literal or a name it folds), or `__name__`."""
    if isinstance(node, ast.Name) and node.id == "__name__":
        return True
    return node is not None and source.folded(node) is not None


Use = tuple[str, "ast.AST | None"]


def mapping_use(
    source: Source, node: ast.AST, name: str, mapping: str, copied_is_whole: bool
) -> Use | None:
    """How a reference to `mapping` (`sys.modules`, `os.environ`) or to one of its methods uses
    it: ("key", the key) for one entry, ("whole", None) iterated, listed or printed (or copied,
    when `copied_is_whole`: a copy of the environment for a child process is passing it on);
    None otherwise (passed on, updated, or not the mapping at all)."""
    copiers = COPIERS if copied_is_whole else frozenset()
    if name != mapping:
        method = name.removeprefix(mapping + ".")
        if method == name or "." in method:
            return None
        if method in TRAVERSALS or (copied_is_whole and method == "copy"):
            return "whole", None
        call = call_of(source, node)
        if method in KEYED and call is not None:
            return "key", call.args[0] if call.args else None
        return None
    parent = source.parents.get(node)
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return "key", parent.slice
    if isinstance(parent, ast.Compare) and node in parent.comparators:
        return "key", parent.left
    if isinstance(parent, ast.For | ast.AsyncFor | ast.comprehension) and parent.iter is node:
        return "whole", None
    if isinstance(parent, ast.Call) and node in parent.args:
        func = (source.name(parent.func) or "").removeprefix("builtins.")
        spread = func in SPREADERS or func in copiers
        return ("whole", None) if spread else None
    return ("whole", None) if isinstance(parent, ast.Starred) else None


def call_of(source: Source, node: ast.AST) -> ast.Call | None:
    parent = source.parents.get(node)
    return parent if isinstance(parent, ast.Call) and parent.func is node else None


# --- rewrites-object-internals --------------------------------------------------------------


def rewrites_object_internals(source: Source) -> Iterator[Hit]:
    kinds = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.Call, *FUNCTIONS)
    for node in source.new(*kinds):
        what = _rewrite(source, node)
        if what:
            yield Hit(
                "rewrites-object-internals",
                line(node),
                f"{source.snippet(node)} {what}: it changes how a module, function or class "
                "behaves for every caller, the tests included; change the code itself",
            )
    if not source.is_test:
        for node, name in source.references():
            if under(name, PATCHERS):
                yield Hit(
                    "rewrites-object-internals",
                    line(node),
                    f"{source.snippet(node)} patches objects from the code under test; "
                    "`mock.patch` belongs in tests, the fix in the code",
                )


def own(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in OWN


def _rewrite(source: Source, node: ast.AST) -> str:
    """What a statement or call rewrites, or ''."""
    if isinstance(node, FUNCTIONS):  # `def __class__` as a property: what isinstance reads
        return "defines `__class__`" if node.name == "__class__" else ""
    if isinstance(node, ast.Call):
        func = source.name(node.func) or ""
        if func in SETTERS and len(node.args) >= 2 and not own(node.args[0]):
            attr = source.folded(node.args[1])
            return f"writes `{attr}`" if attr in INTERNALS else ""
        if isinstance(node.func, ast.Attribute) and node.func.attr in WRITES:
            return _namespace_written(source, node.func.value)
        return ""
    assert isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete)
    targets = list(node.targets) if isinstance(node, ast.Assign | ast.Delete) else [node.target]
    for target in targets:
        for part in ast.walk(target):
            stored = isinstance(getattr(part, "ctx", None), ast.Store | ast.Del)
            if isinstance(part, ast.Attribute) and stored and part.attr in INTERNALS:
                if not own(part.value):
                    return f"writes `{part.attr}`"
            elif isinstance(part, ast.Subscript) and stored:
                what = _namespace_written(source, part.value)
                if what:
                    return what
    return ""


def namespace(source: Source, node: ast.AST) -> str:
    """The namespace `node` is, as shown to the model, or '': a module's or function's
    (`globals()`, `vars(m)`, `locals()`, `m.__dict__`, `f.__globals__`, a frame's `f_globals`),
    never an object's own (`self.__dict__`, `vars(self)`)."""
    if isinstance(node, ast.Attribute) and node.attr in ("__dict__", "__globals__"):
        return "" if own(node.value) else f"`{node.attr}`"
    if isinstance(node, ast.Attribute) and node.attr in ("f_globals", "f_locals"):
        return f"`{node.attr}`"
    if isinstance(node, ast.Call) and (source.name(node.func) or "") in NAMESPACES:
        return "" if node.args and own(node.args[0]) else f"`{ast.unparse(node.func)}()`"
    return ""


def _namespace_written(source: Source, container: ast.AST) -> str:
    """A namespace written by key: `globals()[k] = v`, `m.__dict__.update(...)`."""
    found = namespace(source, container)
    return f"writes into {found}" if found else ""


REACH_RULES: dict[str, Callable[[Source], Iterator[Hit]]] = {
    "reaches-frames": reaches_frames,
    "walks-the-heap": walks_the_heap,
    "rewrites-object-internals": rewrites_object_internals,
}
