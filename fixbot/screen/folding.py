"""What text an expression builds, read without running it: the screen's rules compare names and
paths, and a name built from parts (`"PY" + "TEST_CURRENT_TEST"`, `"".join(["ex", "ec"])`,
`chr(101) + ...`, `"cexe"[::-1]`, `bytes.fromhex("...").decode()`) is the same name.

    fold(node, resolve)   the exact text, or None when a part is unknown (a parameter, a call)
    sketch(node, resolve) the text with "{}" for each unknown part (`f"/proc/{pid}/fd"` ->
                          "/proc/{}/fd"), for the patterns that read paths
    assembles(node)       whether the expression builds text from parts at all

`resolve(name_node)` gives the expression a local name was bound to (a constant the file
assigns once), or None.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import posixpath
from collections.abc import Callable

Resolve = Callable[[ast.Name], "ast.expr | None"]
Again = Callable[[ast.AST], "str | None"]
LIMIT = 4096  # longest text folded: names and paths are short
DEPTH = 12  # how many names deep a fold follows
UNKNOWN = "{}"
PATHS = {"Path", "PurePath", "PosixPath", "PurePosixPath"}
METHODS = {"upper", "lower", "strip", "lstrip", "rstrip", "title", "capitalize", "casefold"}
METHODS |= {"swapcase"}
BUILDERS = {"join", "format", "decode", "fromhex", "b64decode", "b32decode", "b16decode"}
BUILDERS |= {"a85decode", "b85decode", "unhexlify", "chr", "replace", "encode", "bytes"}
BUILDERS |= METHODS


def fold(node: ast.AST | None, resolve: Resolve) -> str | None:
    text = _text(node, resolve, DEPTH, exact=True)
    return text if text is not None and len(text) <= LIMIT else None


def sketch(node: ast.AST | None, resolve: Resolve) -> str | None:
    text = fold(node, resolve)
    if text is None:
        text = _text(node, resolve, DEPTH, exact=False)
    return text[:LIMIT] if text is not None else None


def assembles(node: ast.AST) -> bool:
    """Whether `node` builds text from parts (concatenation, f-string, join, chr, decoding,
    slicing a literal), as opposed to naming a value (a literal, a parameter, an attribute)."""
    return any(builds(inner) for inner in ast.walk(node))


def call_name(node: ast.Call) -> str:
    """The last part of what a call calls: `f` of `f(x)`, `m` of `obj.m(x)`; "" for others."""
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def builds(node: ast.AST) -> bool:
    """Whether `node` itself is a step that builds text (not merely contains one)."""
    if isinstance(node, ast.JoinedStr | ast.BinOp):
        return True
    if isinstance(node, ast.Call):
        return call_name(node) in BUILDERS
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)


def _text(node: ast.AST | None, resolve: Resolve, depth: int, exact: bool) -> str | None:
    if node is None or depth < 0:
        return None

    def again(inner: ast.AST) -> str | None:
        return _text(inner, resolve, depth - 1, exact)

    unknown = None if exact else UNKNOWN
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return node.value
        if isinstance(node.value, bytes):
            return node.value.decode("latin-1")
        return unknown
    if isinstance(node, ast.Name):
        bound = resolve(node)
        return again(bound) if bound is not None else unknown
    if isinstance(node, ast.JoinedStr):
        parts = [again(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return None if any(p is None for p in parts) else "".join(p or "" for p in parts)
    if isinstance(node, ast.BinOp):
        return _binop(node, again, unknown)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return _sliced(node, again)
    if isinstance(node, ast.Call):
        return _call(node, again, unknown)
    return unknown


def _is_path_module(node: ast.AST) -> bool:
    """`os.path`, `posixpath`, `path` (as imported): the module whose join builds a path."""
    text = ast.unparse(node)
    return text in ("os.path", "posixpath", "path", "ntpath")


def _binop(node: ast.BinOp, again: Again, unknown: str | None) -> str | None:
    if isinstance(node.op, ast.Div):  # a pathlib path built with `/`
        left, right = again(node.left), again(node.right)
        return posixpath.join(left, right) if left is not None and right is not None else None
    if isinstance(node.op, ast.Add):
        left, right = again(node.left), again(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node.op, ast.Mult):
        text, count = (node.left, node.right)
        if isinstance(text, ast.Constant) and isinstance(text.value, int):
            text, count = count, text
        times = count.value if isinstance(count, ast.Constant) else None
        folded = again(text)
        if isinstance(times, int) and not isinstance(times, bool) and folded is not None:
            return folded * max(0, min(times, LIMIT)) if len(folded) * times <= LIMIT else None
    return unknown


def _sliced(node: ast.Subscript, again: Again) -> str | None:
    text = again(node.value)
    cut = node.slice
    assert isinstance(cut, ast.Slice)
    bounds = [_int(part) if part is not None else None for part in (cut.lower, cut.upper, cut.step)]
    given = [p for p in (cut.lower, cut.upper, cut.step) if p is not None]
    if text is None or any(_int(p) is None for p in given) or bounds[2] == 0:
        return None
    return text[bounds[0] : bounds[1] : bounds[2]]


def _int(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return None if isinstance(node.value, bool) else node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return -inner if inner is not None else None
    return None


def _ints(node: ast.AST) -> list[int] | None:
    if not isinstance(node, ast.List | ast.Tuple):
        return None
    values = [_int(e) for e in node.elts]
    return None if any(v is None for v in values) else [v for v in values if v is not None]


def _call(node: ast.Call, again: Again, unknown: str | None) -> str | None:
    func = node.func
    name = call_name(node)
    args = node.args
    if name == "chr" and len(args) == 1 and (code := _int(args[0])) is not None:
        return chr(code) if 0 <= code < 0x110000 else None
    if name in ("bytes", "bytearray") and len(args) == 1 and (codes := _ints(args[0])):
        return bytes(c % 256 for c in codes).decode("latin-1")
    if name == "str" and len(args) == 1:
        return again(args[0])
    if name in PATHS and args:  # Path("/proc", "self") and os.path.join("/proc", "self")
        parts = [again(a) for a in args]
        return posixpath.join(*parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    if not isinstance(func, ast.Attribute):
        return unknown
    if name == "join" and _is_path_module(func.value) and args:
        parts = [again(a) for a in args]
        return posixpath.join(*parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    if name == "join" and len(args) == 1:
        return _joined(func.value, args[0], again)
    if name in METHODS and not args:
        text = again(func.value)
        return getattr(text, name)() if text is not None else None
    if name == "replace" and len(args) == 2:
        text, old, new = again(func.value), again(args[0]), again(args[1])
        if text is None or old is None or new is None:
            return None
        return text.replace(old, new)
    if name in ("decode", "encode"):
        decoded = _decoded(func.value, args, again)
        return decoded if decoded is not None else _decoded_call(name, args, again)
    if name == "format":
        template = again(func.value)
        values = [again(a) for a in args]
        if template is None or any(v is None for v in values):
            return None
        try:
            return template.format(*values)
        except (IndexError, KeyError, ValueError):
            return None
    return _decoded_call(name, args, again) or unknown


def _joined(sep_node: ast.AST, items: ast.AST, again: Again) -> str | None:
    sep = again(sep_node)
    if sep is None:
        return None
    if isinstance(items, ast.List | ast.Tuple):
        parts = [again(e) for e in items.elts]
        return None if any(p is None for p in parts) else sep.join(p or "" for p in parts)
    codes = _chr_codes(items)
    return sep.join(chr(c) for c in codes) if codes is not None else None


def _chr_codes(node: ast.AST) -> list[int] | None:
    """`map(chr, [112, 121])` or `(chr(c) for c in [112, 121])`."""
    if (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", "") == "map"
        and len(node.args) == 2
        and getattr(node.args[0], "id", "") == "chr"
    ):
        return _ints(node.args[1])
    if isinstance(node, ast.GeneratorExp | ast.ListComp) and len(node.generators) == 1:
        element, loop = node.elt, node.generators[0]
        if (
            isinstance(element, ast.Call)
            and getattr(element.func, "id", "") == "chr"
            and isinstance(loop.target, ast.Name)
            and len(element.args) == 1
            and getattr(element.args[0], "id", "") == loop.target.id
            and not loop.ifs
        ):
            return _ints(loop.iter)
    return None


def _decoded(value: ast.AST, args: list[ast.expr], again: Again) -> str | None:
    """`<bytes>.decode()`: the text of what was decoded (already latin-1 text here)."""
    text = again(value)
    if text is None:
        return None
    if (
        args
        and isinstance(args[0], ast.Constant)
        and str(args[0].value).lower()
        in (
            "rot13",
            "rot_13",
        )
    ):
        return codecs.decode(text, "rot13")
    try:
        return text.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return text


def _decoded_call(name: str, args: list[ast.expr], again: Again) -> str | None:
    """`bytes.fromhex("...")`, `base64.b64decode("...")`, `codecs.decode("...", "rot13")`."""
    if not args:
        return None
    text = again(args[0])
    if text is None:
        return None
    try:
        if name in ("fromhex", "unhexlify", "b16decode"):
            return bytes.fromhex(text).decode("latin-1")
        if name in ("b64decode", "b32decode", "a85decode", "b85decode"):
            decode: Callable[[str], bytes] = getattr(base64, name)
            return decode(text).decode("latin-1")
        if name == "decode" and len(args) == 2:
            return codecs.decode(text, "rot13") if again(args[1]) in ("rot13", "rot_13") else None
    except (ValueError, binascii.Error, TypeError):
        return None
    return None
