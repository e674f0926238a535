"""The policy's rules on code that reaches past the code under test into the running process:
code built at run time, pytest's machinery, the interpreter's hooks, fixbot's channels.

A static screen sees only what the diff says; `exec(bytes.fromhex("..."))` says nothing. So
code that runs text the screen never read (exec, eval, compile, __import__ and importlib on
anything but a string literal, code objects, pickles), that reaches into pytest's reporting
machinery, that hooks the interpreter (atexit, tracing, excepthooks, import hooks, the heap) or
that writes to descriptors and fixbot's mount points is refused by name. A string literal
passed to exec, eval or compile is screened as the code it is (policy.py does the recursion).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from fixbot.screen.source import Hit, Source, line, under

RUNS_TEXT = frozenset({"exec", "eval", "compile"})
# Run the text (or import the module) named by their first argument: fine for a literal only.
CODE_RUNNERS = frozenset(
    {
        *RUNS_TEXT,
        *("__import__", "importlib.import_module", "importlib.__import__"),
        *("runpy.run_module", "runpy.run_path", "importlib.util.spec_from_file_location"),
        *("importlib.util.spec_from_loader", "importlib.machinery.SourceFileLoader"),
        *("importlib.machinery.SourcelessFileLoader", "importlib.machinery.ExtensionFileLoader"),
        *("code.interact", "code.InteractiveInterpreter", "code.InteractiveConsole"),
    }
)
# Run a file by its path, whatever it is named: refused even for a literal path.
FILE_RUNNERS = frozenset(
    {
        *("runpy.run_path", "importlib.util.spec_from_file_location"),
        *("importlib.machinery.SourceFileLoader", "importlib.machinery.SourcelessFileLoader"),
        "importlib.machinery.ExtensionFileLoader",
    }
)
# Code from data whatever the argument: a code object, a function made of one, a pickle.
CODE_FROM_DATA = frozenset(
    {
        *("types.FunctionType", "types.CodeType", "types.LambdaType"),
        *("importlib.util.module_from_spec", "marshal.loads", "marshal.load"),
        *("pickle.loads", "pickle.load", "pickle.Unpickler", "_pickle.loads", "dill.loads"),
        *("cloudpickle.loads", "ctypes", "_ctypes", "cffi", "_cffi_backend"),
        # the import system's loaders and finders: a file of any name run as a module
        *("importlib.machinery.SourceFileLoader", "importlib.machinery.FileFinder"),
        *("importlib.machinery.SourcelessFileLoader", "importlib.machinery.ExtensionFileLoader"),
        *("importlib.machinery.PathFinder", "importlib.machinery.ModuleSpec"),
        *("importlib.machinery.BuiltinImporter", "importlib.machinery.FrozenImporter"),
        *("importlib.machinery.NamespaceLoader", "importlib.util.LazyLoader"),
        *("importlib._bootstrap", "importlib._bootstrap_external"),
        *("_frozen_importlib", "_frozen_importlib_external", "zipimport", "pkgutil.get_loader"),
        *("pkgutil.find_loader", "pkgutil.get_importer", "pkgutil.iter_importers"),
        # text run as code by the standard library (red team, helper-17)
        *("timeit.timeit", "timeit.repeat", "timeit.Timer", "cProfile.run", "cProfile.runctx"),
        *("profile.run", "profile.runctx", "pdb.run", "pdb.runeval", "pdb.runctx", "trace.Trace"),
        *("doctest.run_docstring_examples", "doctest.testmod", "doctest.testfile"),
        *("doctest.DocTestRunner", "doctest.DocTestParser", "doctest.DocTestFinder"),
        *("doctest.script_from_examples", "doctest.debug_src", "doctest.debug_script"),
        *("typing.get_type_hints", "typing.ForwardRef", "typing._eval_type"),
        *("inspect.get_annotations", "annotationlib", "bdb.Bdb"),
        # a debugger or console: reads commands (a `.pdbrc`, stdin) and runs them as code
        *("pdb", "breakpoint", "builtins.breakpoint", "sys.breakpointhook", "code.interact"),
        *("code.InteractiveConsole", "code.InteractiveInterpreter", "code.compile_command"),
    }
)
# A module's loader, and what a loader runs: a file of any name executed as a module (a name
# the module defines itself is its own method, `get_code` of a reply is nobody's loader).
LOADER_ATTRIBUTES = frozenset({"exec_module", "load_module", "source_to_code", "__loader__"})
SPEC_DATA = frozenset({"name", "parent", "origin", "submodule_search_locations", "has_location"})
CODE_ATTRIBUTES = frozenset({"__code__", "__globals__", "__closure__", "__builtins__"})
# A code object's own fields: read to find a caller by its code, written through `.replace`.
CODE_OBJECT = frozenset(
    {
        *("co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_name"),
        *("co_qualname", "co_firstlineno", "co_argcount", "co_flags", "co_freevars"),
        *("co_cellvars", "co_linetable", "co_lnotab", "co_exceptiontable", "co_nlocals"),
        *("co_stacksize", "co_posonlyargcount", "co_kwonlyargcount", "co_lines", "co_positions"),
    }
)


def _literal_text(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _own_names(source: Source) -> set[str]:
    """Names the module binds itself (a method or function named `exec` is not the builtin)."""
    bound = {n.name for n in ast.walk(source.tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    bound |= {n.id for n in ast.walk(source.tree) if isinstance(n, ast.Name) and
              isinstance(n.ctx, ast.Store)}  # fmt: skip
    return bound


def _called(source: Source, node: ast.AST) -> ast.Call | None:
    parent = source.parents.get(node)
    return parent if isinstance(parent, ast.Call) and parent.func is node else None


def runs_dynamic_code(source: Source) -> Iterator[Hit]:
    own = _own_names(source)
    for node, name in source.references():
        if isinstance(node, ast.Name) and node.id in own:
            continue
        call = _called(source, node)
        short = name.removeprefix("builtins.")
        if short in CODE_RUNNERS:
            first = call.args[0] if call is not None and call.args else None
            if call is not None and _literal_text(first) and short not in FILE_RUNNERS:
                continue  # a literal: screened as code (exec, eval, compile) or a module name
            if short in FILE_RUNNERS:
                yield Hit(
                    "runs-dynamic-code",
                    line(node),
                    f"{source.snippet(call or node)} uses `{short}` to run a file by its path: "
                    "a file the screen and the gates may never read as Python (any name, any "
                    "folder); import the module as the project does",
                )
                continue
            what = "on text the screen cannot read" if call is not None else "as a value"
        elif under(name, CODE_FROM_DATA):
            what = "to make code from data, or native code"
        else:
            continue
        yield Hit(
            "runs-dynamic-code",
            line(node),
            f"{source.snippet(call or node)} uses `{short}` {what}: code built at run time "
            "escapes every check; write the code itself in the diff",
        )
    yield from _code_attributes(source)
    yield from _interpreter_on_text(source)
    yield from _loaders(source)


def _loaders(source: Source) -> Iterator[Hit]:
    """A module's loader or spec used (but a spec's data, `__spec__.parent`), or a loader's
    running methods the module does not define itself (`type(__loader__)(name,
    "table.txt").exec_module(m)` runs a data file as a module, under no import name)."""
    own = _own_names(source)
    for node in source.new(ast.Attribute, ast.Name):
        named = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
        parent = source.parents.get(node)
        data = isinstance(parent, ast.Attribute) and parent.attr in SPEC_DATA  # `.parent`
        data = data or isinstance(parent, ast.Compare)  # `__spec__ is not None`
        loader = named in LOADER_ATTRIBUTES and named not in own
        if (named == "__spec__" and not data) or loader:
            yield Hit(
                "runs-dynamic-code",
                line(node),
                f"{source.snippet(node)} uses `{named}`, the import system's loader: a file of "
                "any name run as a module escapes every check; import the module as the "
                "project does",
            )


PYTHON_WORD = re.compile(r"python[\d.]*|pypy[\d.]*")
# Start a process: an argv whose `-c` makes an interpreter run the text after it, or a Python.
PROCESS_STARTERS = ("subprocess", "os.system", "os.popen", "os.spawn", "os.exec", "os.posix_spawn")


def _interpreter_on_text(source: Source) -> Iterator[Hit]:
    """A process started on code text (`python -c TEXT`, in an argv or a command line): the
    text runs unscreened, as exec's would."""
    for node in source.new(ast.Call):
        assert isinstance(node, ast.Call)
        name = source.name(node.func) or ""
        if not any(name.startswith(starter) for starter in PROCESS_STARTERS):
            continue
        words: list[str] = []
        python = False
        for arg in ast.walk(node):
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                words += arg.value.split()
            elif isinstance(arg, ast.Attribute | ast.Name):
                python = python or source.name(arg) in ("sys.executable", "sys._base_executable")
        python = python or any(PYTHON_WORD.fullmatch(w.rsplit("/", 1)[-1]) for w in words)
        other = _program_from_data(source, node, words)
        if "-c" in words or python or other:
            what = "code text (`-c`)" if "-c" in words else "a Python program"
            what = other or what
            yield Hit(
                "runs-dynamic-code",
                line(node),
                f"{source.snippet(node)} starts a process on {what}: code the screen never "
                "reads (any file, any name) runs beside the tests; write the code in the diff",
            )


# Programs that run program text given to them (awk's program, `sh -c`, `perl -e`, `sed`'s
# script): text the screen never reads as code.
TEXT_RUNNERS = frozenset(
    {
        *("sh", "bash", "dash", "zsh", "ksh", "fish", "busybox", "env", "awk", "gawk", "mawk"),
        *("nawk", "perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua", "tclsh", "sed"),
        *("Rscript", "julia", "pwsh", "osascript", "jq", "bc", "dc", "m4", "expect", "guile"),
    }
)


def _program_from_data(source: Source, node: ast.Call, words: list[str]) -> str:
    """A process started on a program that runs text, with an argument the screen cannot read
    (`["awk", PROGRAM]`, a program decoded from a data file), or the `shell` flag on a
    command built at run time: what it is, or ""."""
    shell = any(
        k.arg == "shell" and not (isinstance(k.value, ast.Constant) and not k.value.value)
        for k in node.keywords
    )
    first = node.args[0] if node.args else None
    items = first.elts if isinstance(first, ast.List | ast.Tuple) else [first] if first else []
    unread = [a for a in items if source.folded(a) is None]
    runner = next((w for w in words[:1] if w.rsplit("/", 1)[-1] in TEXT_RUNNERS), None)
    if shell and unread:
        return "a shell command built at run time (the `shell` flag)"
    if runner is not None and unread:
        return f"`{runner}` with a program the screen cannot read"
    return ""


def _code_attributes(source: Source) -> Iterator[Hit]:
    for node in source.new(ast.Attribute, ast.Call, ast.Subscript):
        if isinstance(node, ast.Call):
            func = source.name(node.func) or ""
            names = [source.folded(a) for a in node.args[1:2]]
            hit = func in ("setattr", "getattr", "builtins.getattr") and any(
                n in CODE_ATTRIBUTES | CODE_OBJECT or n in RUNS_TEXT | {"__import__"} for n in names
            )
        elif isinstance(node, ast.Subscript):
            hit = source.folded(node.slice) in RUNS_TEXT | {"__import__"}
        else:
            assert isinstance(node, ast.Attribute)
            hit = node.attr in CODE_ATTRIBUTES | CODE_OBJECT
        if hit:
            yield Hit(
                "runs-dynamic-code",
                line(node),
                f"{source.snippet(node)} swaps or fetches a function's code at run time; "
                "change the code itself in the diff",
            )


def literal_code(source: Source) -> Iterator[tuple[ast.Call, str]]:
    """The string literals the diff passes to exec, eval or compile: code to screen as such."""
    for node, name in source.references():
        call = _called(source, node)
        if call is None or name.removeprefix("builtins.") not in RUNS_TEXT or not call.args:
            continue
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            yield call, first.value


# --- reaches-pytest-internals ---------------------------------------------------------------

MACHINERY = frozenset(
    {
        *("TestReport", "CollectReport", "CallInfo", "hookimpl", "hookspec", "Config"),
        *("PytestPluginManager", "Session", "Item", "Collector", "StashKey", "main"),
        "console_main",
    }
)
MACHINE_ATTRIBUTES = frozenset({"pluginmanager", "from_item_and_call", "_hookimpls"})
MACHINE_STRING = re.compile(
    r"_pytest(\.\w+)*|pluggy(\.\w+)*|pytest_\w+|from_item_and_call|pluginmanager|TestReport"
)


def _machinery(name: str) -> bool:
    root, _, rest = name.partition(".")
    if root == "pluggy" or (root == "_pytest" and rest):
        return True
    if root == "pytest" and rest.split(".")[0] in MACHINERY:
        return True
    attributes = name.split(".")[1:]
    return any(a in MACHINE_ATTRIBUTES or a.startswith("pytest_") for a in attributes)


def reaches_pytest_internals(source: Source) -> Iterator[Hit]:
    if source.is_test:
        return
    for node, name in source.references():
        if _machinery(name):
            yield _internals(source, node)
    for found in source.new(ast.Import, ast.ImportFrom, ast.Attribute):
        if isinstance(found, ast.Import | ast.ImportFrom):
            modules = [a.name for a in found.names] if isinstance(found, ast.Import) else []
            modules += [found.module or ""] if isinstance(found, ast.ImportFrom) else []
            if any(m.split(".")[0] == "pluggy" for m in modules):
                yield _internals(source, found)
        elif isinstance(found, ast.Attribute) and _machine_attribute(source, found):
            yield _internals(source, found)
    for spelled, text in source.strings():
        docstring = isinstance(source.parents.get(spelled), ast.Expr)
        if MACHINE_STRING.fullmatch(text) and not docstring:
            yield _internals(source, spelled)


def _machine_attribute(source: Source, node: ast.Attribute) -> bool:
    """`x.pluginmanager`, `x.pytest_runtest_call` on an object the screen cannot name."""
    machine = node.attr in MACHINE_ATTRIBUTES or node.attr.startswith("pytest_")
    return machine and source.name(node) is None


def _internals(source: Source, node: ast.AST) -> Hit:
    return Hit(
        "reaches-pytest-internals",
        line(node),
        f"{source.snippet(node)} reaches into pytest's machinery (_pytest, pluggy, its reports "
        "and hooks): the code under test must not touch the runner that judges it",
    )


# --- hooks-the-interpreter ------------------------------------------------------------------

HOOK_CALLS = frozenset(
    {
        *("atexit.register", "sys.settrace", "sys.setprofile", "threading.settrace"),
        *("threading.setprofile", "threading.settrace_all_threads", "sys.addaudithook"),
        *("threading.setprofile_all_threads", "os.register_at_fork", "sys.set_asyncgen_hooks"),
        *("gc.callbacks", "faulthandler.enable", "faulthandler.register"),
        *("faulthandler.dump_traceback_later", "sys.meta_path", "sys.path_hooks"),
        *("sys.monitoring", "sys.call_tracing", "sys.path_importer_cache", "site.addsitedir"),
        # finalizers, signal handlers (fixbot's per-test timeout is SIGALRM), codec lookups
        *("weakref.finalize", "signal.signal", "signal.setitimer", "signal.alarm"),
        *("signal.set_wakeup_fd", "threading._register_atexit", "codecs.register"),
        *("sys.activate_stack_trampoline", "sys.remote_exec", "sys._settraceallthreads"),
        *("sys._setprofileallthreads",),
        # the working directory: where `''` on a process's sys.path finds modules
        *("os.chdir", "os.fchdir", "contextlib.chdir", "posix.chdir"),
    }
)
WEAK_CALLBACKS = frozenset({"weakref.ref", "weakref.proxy", "weakref.WeakMethod"})
# methods of `sys.modules` that put, replace or drop a module (`.update({__name__: fake})`)
TABLE_WRITERS = frozenset(
    {"update", "setdefault", "__setitem__", "__delitem__", "pop", "popitem", "clear", "__ior__"}
)
# methods of `sys.path` that change where imports are found (a zip, a folder no rule reads)
PATH_WRITERS = frozenset({"append", "insert", "extend", "__setitem__", "__iadd__", "remove"})
PATH_WRITERS |= {"pop", "clear", "reverse", "sort", "__delitem__"}
UNBOUND_OWNERS = frozenset({"list", "dict", "operator", "builtins", "object", "_operator"})
# the same as functions given the table (`operator.setitem`, `dict.__setitem__`, `dict.update`)
TABLE_FUNCTIONS = frozenset({"update", "setdefault", "setitem", "delitem", "pop", "popitem"})
TABLE_FUNCTIONS |= {"clear", "ior", "append", "insert", "extend", "iadd"}  # `list.append(sys.path`
HOOK_SLOTS = frozenset(
    {
        *("sys.excepthook", "sys.unraisablehook", "sys.displayhook", "sys.breakpointhook"),
        # where bytecode is cached and read: bytecode written elsewhere runs instead of the code
        *("threading.excepthook", "sys.pycache_prefix", "sys.dont_write_bytecode"),
    }
)


def hooks_the_interpreter(source: Source) -> Iterator[Hit]:
    for node, name in source.references():
        call = _called(source, node)
        if under(name, HOOK_CALLS):
            yield _hook(source, node, f"`{name}`")
        elif name in HOOK_SLOTS and isinstance(getattr(node, "ctx", None), ast.Store):
            yield _hook(source, node, f"setting `{name}`")
        elif name in WEAK_CALLBACKS and call is not None and len(call.args) >= 2:
            yield _hook(source, node, f"`{name}` with a callback")
    for function in source.new(ast.FunctionDef, ast.AsyncFunctionDef):
        assert isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        if function.name == "__del__" and function.lineno in source.added:
            yield _hook(source, function, "a finalizer (`__del__`)")
    yield from _module_table_writes(source)


def _module_table_writes(source: Source) -> Iterator[Hit]:
    """A module put into, replaced in or dropped from `sys.modules`, however it is written: an
    entry assigned or deleted, the table's own methods, `|=`, a function given the table; and
    `sys.path` changed (its methods, assigned, `+=`, an entry), where imports are found."""
    for reference, name in source.references():
        owner, _, method = name.rpartition(".")
        if owner == "sys.modules" and method in TABLE_WRITERS:
            yield _hook(source, reference, f"`{name}`, writing the module table")
        elif owner == "sys.path" and method in PATH_WRITERS:
            yield _hook(source, reference, f"`{name}`, changing where imports are found")
    for call in source.new(ast.Call):
        assert isinstance(call, ast.Call)
        resolved = source.name(call.func) or ""
        function = resolved.rsplit(".", 1)[-1]
        unbound = resolved.split(".")[0] in UNBOUND_OWNERS  # `list.extend(sys.path, ...)`
        first = call.args[0] if call.args else None
        table = first is not None and source.name(first) in ("sys.modules", "sys.path")
        if unbound and table and function.strip("_") in TABLE_FUNCTIONS:
            yield _hook(source, call, "writing the module table through a function")
        if under(resolved, ("pkgutil.extend_path",)) or (
            isinstance(call.func, ast.Attribute)
            and call.func.attr in PATH_WRITERS
            and _is_package_path(call.func.value)
        ):
            yield _hook(source, call, "extending a package's `__path__`")
    for statement in source.new(ast.Assign, ast.AugAssign, ast.Delete):
        targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
        for target in targets:
            whole = source.name(target) == "sys.modules"  # `sys.modules |= {...}`
            entry = isinstance(target, ast.Subscript) and source.name(target.value) == "sys.modules"
            if entry or (whole and not isinstance(statement, ast.Assign)):
                yield _hook(source, statement, "putting a module into `sys.modules`")
            path = isinstance(target, ast.Subscript) and source.name(target.value) == "sys.path"
            if path or source.name(target) == "sys.path":  # `sys.path = [...]`, `+=`, `[0] =`
                yield _hook(source, statement, "changing where imports are found (`sys.path`)")
            inner = target.value if isinstance(target, ast.Subscript) else target
            if target is not None and _is_package_path(inner):  # `__path__ = [...]`, `+=`
                yield _hook(source, statement, "changing a package's `__path__`")


def _is_package_path(node: ast.AST | None) -> bool:
    """`__path__`, or any object's `.__path__`: where a package's submodules are found."""
    if isinstance(node, ast.Name):
        return node.id == "__path__"
    return isinstance(node, ast.Attribute) and node.attr == "__path__"


def _hook(source: Source, node: ast.AST, what: str) -> Hit:
    return Hit(
        "hooks-the-interpreter",
        line(node),
        f"{what} ({source.snippet(node)}) hooks the interpreter itself (exit handlers, tracing, "
        "error or import hooks, the heap): it acts on the test run, not on the code under test",
    )


# --- reaches-sandbox-channels ---------------------------------------------------------------

RAW_WRITES = frozenset(
    {
        *("os.write", "os.writev", "os.pwrite", "os.pwritev", "os.sendfile", "os.dup2"),
        *("os.dup", "os.fdopen", "os.splice", "os.copy_file_range", "socket.fromfd"),
        *("socket.socket.fromfd", "posix.write", "posix.dup2", "mmap.mmap", "fcntl.fcntl"),
        *("fcntl.ioctl", "os.set_inheritable", "os.pipe", "os.mkfifo"),
    }
)
OPENERS = frozenset({"open", "io.open", "io.FileIO", "_io.FileIO", "_io.open", "os.fdopen"})
CHANNEL = re.compile(
    r"/fixbot-[\w-]*|/proc/(?:self|thread-self|\d+|\{[^}]*\})/(?:fd|environ|mem|fdinfo)"
    r"|/dev/fd(?:/|\b)"
)


def reaches_sandbox_channels(source: Source) -> Iterator[Hit]:
    for node, name in source.references():
        call = _called(source, node)
        numbered = call is not None and bool(call.args) and _is_int(source, call.args[0])
        keywords = [k.arg for k in (call.keywords if call else [])]
        wrapped = name == "socket.socket" and (
            "fileno" in keywords or (call is not None and len(call.args) >= 4)
        )
        if name in RAW_WRITES or (name in OPENERS and numbered) or wrapped:
            yield _channel(source, call or node, "writes to a raw file descriptor")
    for made in source.new(ast.Call):
        assert isinstance(made, ast.Call)
        for keyword in made.keywords:
            kept = keyword.arg == "close_fds" and not _is_true(keyword.value)
            if keyword.arg == "pass_fds" or kept:
                yield _channel(source, made, "hands this process's descriptors to another")
    for literal, text in source.strings():
        if not isinstance(source.parents.get(literal), ast.Expr):
            found = CHANNEL.search(text)
            if found:
                yield _channel(source, literal, f"names {found.group()!r}")


def _is_int(source: Source, node: ast.AST) -> bool:
    """A descriptor number: an int literal, a name bound to one, or a number computed (`int(...)`,
    arithmetic, a `.fileno()`): never a path, which is a string."""
    if isinstance(node, ast.Name) and (bound := source.bound(node)) is not None:
        node = bound
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _is_int(source, node.operand)
    if isinstance(node, ast.BinOp):  # `+` joins strings too: a number only if a side is one
        if isinstance(node.op, ast.Add | ast.Mod):
            return _is_int(source, node.left) or _is_int(source, node.right)
        return not isinstance(node.op, ast.Div)
    if isinstance(node, ast.Call):
        func = node.func
        called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return called in ("int", "fileno", "len", "abs", "max", "min")
    return False


def _is_true(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _channel(source: Source, node: ast.AST, what: str) -> Hit:
    return Hit(
        "reaches-sandbox-channels",
        line(node),
        f"{source.snippet(node)} {what}: descriptors, /proc/self and fixbot's mounts "
        "(/fixbot-out, /fixbot-env, /fixbot-harness, /fixbot-judge) carry the verdict and "
        "the environment, never the code under test's output",
    )


RUNTIME_RULES: dict[str, Callable[[Source], Iterator[Hit]]] = {
    "runs-dynamic-code": runs_dynamic_code,
    "reaches-pytest-internals": reaches_pytest_internals,
    "hooks-the-interpreter": hooks_the_interpreter,
    "reaches-sandbox-channels": reaches_sandbox_channels,
}
