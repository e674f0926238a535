"""The `answers-from-tests` rule: code that answers the failing tests' cases instead of computing
them, in whatever shape it keeps the answers.

A Case is a tested call's literal arguments and the literal it must return (tables.py). A
candidate's literal collection answers a case when one of its rows pairs the case's input with
its expected output, however spelled:

- a row: a dict entry, an element `(input, expected)` or `(arg, ..., expected)` of a list, tuple
  or set of rows (scanned in a loop), the same position of two literal lists (`INPUTS`,
  `OUTPUTS`), an `if`/`elif`/`match` branch on the input that returns or assigns the output
  (a branch on a rule over a class the tests show, `n % 100 in (11, 12, 13)`, is not on the
  input: classes.py);
- an input: the literal, its arguments as one tuple, `str`/`repr` of it written as a string
  (`"[1.0, 2.0, 3.0]"`), `hash` of it written as the number (tuples of numbers hash the same in
  every process), or any of those wrapped in `hash(...)`, `str(...)`, `tuple(...)`, ...

A collection that answers two of the visible cases (or one, when that is half of it) is refused:
the hidden tests still fail. An honest fix that happens to use a tested number (`range(2)`,
`x + 2`, a table of roman numerals whose rows are not the tested inputs) maps nothing to
anything and is not refused.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from fixbot.screen.classes import rule_over_a_class
from fixbot.screen.source import FUNCTIONS, Case, Hit, Key, Source, line, literal_key, telling

Form = tuple[str, object]  # a Key, or ("hash", the int a tested input hashes to)
Row = tuple[ast.AST, ast.AST]  # (how the input is spelled, how the output is spelled)
WRAPPERS = {"hash", "str", "repr", "tuple", "frozenset", "list", "sorted", "set", "float", "int"}
WRAPPERS |= {"json.dumps", "json.loads", "ast.literal_eval", "eval"}
LONGEST = 400  # the longest string read as a spelled literal
PARALLEL = 64  # literal lists compared pairwise for parallel tables
COLLECTIONS = (ast.List, ast.Tuple, ast.Set)
BASE = 3  # the largest base case of a recursion (fib(0), fib(1), tribonacci's fib(2))


def base_case(source: Source, test: ast.AST) -> bool:
    """Whether `test` is a base case of a recursion: a parameter of a function that calls
    itself compared with a small integer (`if n == 2: return 1` in fibfib): the definition
    the docstring states, not a tested input singled out."""
    function = source.scope(test)
    if not isinstance(function, FUNCTIONS) or not isinstance(test, ast.Compare):
        return False
    params = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    sides = [test.left, *test.comparators]
    names = [s for s in sides if isinstance(s, ast.Name)]
    numbers = [s for s in sides if not isinstance(s, ast.Name)]
    small = all(
        isinstance(n, ast.Constant) and type(n.value) is int and abs(n.value) <= BASE
        for n in numbers
    )
    calls = (n for n in ast.walk(function) if isinstance(n, ast.Call))
    recursive = any(isinstance(c.func, ast.Name) and c.func.id == function.name for c in calls)
    return bool(names) and all(n.id in params for n in names) and small and recursive


def _telling_case(case: Case) -> bool:
    """A case that could only be answered on purpose: not f(0) == 1 or f(1) == 1."""
    return telling(case[1]) or any(telling(k) for k in case[0])


def inputs(case: Case) -> list[Key]:
    """How code could spell a case's input: its only argument, or all of them as a tuple."""
    args = case[0]
    spelled: list[Key] = [("seq", args)]
    return [args[0], *spelled] if len(args) == 1 else spelled


def _value(key: Key) -> object:
    """The Python value a number or a tuple of numbers stands for (None for text: `hash` of a
    string differs between processes)."""
    kind, value = key
    if kind == "n":
        return value
    if kind == "seq" and isinstance(value, tuple):
        items = [_value(k) for k in value]
        return None if any(i is None for i in items) else tuple(items)
    return None


def _input_forms(case: Case) -> set[Form]:
    forms: set[Form] = set(inputs(case))
    for key in inputs(case):
        value = _value(key)
        if value is not None:
            forms.add(("hash", hash(value)))
    return forms


def _forms(source: Source, node: ast.AST | None, depth: int = 3) -> set[Form]:
    """Every way `node` may spell a literal (see the module's docstring)."""
    if node is None or depth < 0:
        return set()
    if isinstance(node, ast.Name) and (bound := source.bound(node)) is not None:
        return _forms(source, bound, depth - 1)
    forms: set[Form] = set()
    if (key := literal_key(node)) is not None:
        forms.add(key)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, int) and not isinstance(node.value, bool):
            forms.add(("hash", node.value))
        if isinstance(node.value, str) and len(node.value) <= LONGEST:
            forms |= _parsed(node.value)
    if isinstance(node, ast.Call) and len(node.args) == 1 and _wrapper(source, node):
        forms |= _forms(source, node.args[0], depth - 1)
    return forms


def _wrapper(source: Source, call: ast.Call) -> bool:
    return (source.name(call.func) or "").removeprefix("builtins.") in WRAPPERS


def _parsed(text: str) -> set[Form]:
    """The literal a string spells (`"[1.0, 2.0, 3.0]"`, `"1, 2"`), if it spells one."""
    key = literal_key(_literal(text))
    return {key} if key is not None else set()


def _literal(text: str) -> ast.expr | None:
    """The expression a string spells when parsed as Python (JSON's tables are Python too)."""
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def answers_from_tests(source: Source) -> Iterator[Hit]:
    known = [case for case in source.cases if _telling_case(case)]
    if source.is_test or not known:
        return
    for anchor, answered in _tables(source, known):
        tests = sorted({case[2] for case in answered})
        yield Hit(
            "answers-from-tests",
            line(anchor),
            f"{source.snippet(anchor)} answers {len(answered)} of the visible test cases by "
            f"lookup (the inputs and expected outputs of {', '.join(tests[:2])}): hidden tests "
            "still fail; compute the result for every input",
        )


def _tables(source: Source, known: Sequence[Case]) -> Iterator[tuple[ast.AST, list[Case]]]:
    """Each new collection, pair of parallel lists and branch that answers visible cases."""
    sequences: list[ast.List | ast.Tuple] = []
    for node in source.new(ast.Dict, *COLLECTIONS, ast.If, ast.match_case):
        if isinstance(node, ast.If | ast.match_case):
            answered = _branch(source, node, known)
            if answered:
                yield (node.test if isinstance(node, ast.If) else node.pattern), answered
            continue
        rows = _rows(node)
        answered = _answered(source, rows, known)
        if len(answered) >= 2 or (answered and 2 * len(answered) >= len(rows)):
            yield node, answered
        if isinstance(node, ast.List | ast.Tuple) and len(node.elts) >= 2:
            sequences.append(node)
    for node, text in source.strings():  # a table written as a string, read back at run time
        parsed = _literal(text) if len(text) <= LONGEST * 10 else None
        rows = _rows(parsed) if parsed is not None else []
        answered = _answered(source, rows, known)
        if len(answered) >= 2:
            yield node, answered
    sequences = sequences[:PARALLEL]
    for at, first in enumerate(sequences):
        for second in sequences[at + 1 :]:
            if len(first.elts) == len(second.elts):
                for keys, values in ((first, second), (second, first)):
                    rows = list(zip(keys.elts, values.elts, strict=True))
                    answered = _answered(source, rows, known)
                    if len(answered) >= 2:
                        yield keys, answered


def _rows(node: ast.AST) -> list[Row]:
    """A dict's entries; a collection's elements when every one is a row (a pair, a tuple of
    arguments and the result, a small dict)."""
    if isinstance(node, ast.Dict):
        return [(k, v) for k, v in zip(node.keys, node.values, strict=True) if k is not None]
    elements = getattr(node, "elts", [])
    rows: list[Row] = []
    for element in elements:
        if isinstance(element, ast.Tuple | ast.List) and len(element.elts) >= 2:
            parts = element.elts
            rows.append((parts[0], parts[-1]))
            if len(parts) >= 3:
                rows.append((ast.Tuple(elts=parts[:-1], ctx=ast.Load()), parts[-1]))
        elif isinstance(element, ast.Dict) and len(element.values) >= 2:
            rows.append((element.values[0], element.values[-1]))
        else:
            return []
    return rows


def _answered(source: Source, rows: Sequence[Row], known: Sequence[Case]) -> list[Case]:
    spelled = [(_forms(source, key), _forms(source, value)) for key, value in rows]
    return [
        case
        for case in known
        if any(case[1] in outs and ins & _input_forms(case) for ins, outs in spelled)
    ]


def _branch(source: Source, node: ast.If | ast.match_case, known: Sequence[Case]) -> list[Case]:
    """The cases whose input the condition singles out while its body returns (or assigns)
    their output."""
    if isinstance(node, ast.If) and base_case(source, node.test):
        return []
    tested = _singled_out(source, node)
    body = ast.Module(body=list(node.body), type_ignores=[])
    given: set[Form] = set()
    for statement in ast.walk(body):
        if isinstance(statement, ast.Return | ast.Assign | ast.AnnAssign | ast.Yield):
            given |= _forms(source, statement.value)
    return [case for case in known if case[1] in given and tested & _input_forms(case)]


def _singled_out(source: Source, node: ast.If | ast.match_case) -> set[Form]:
    found: set[Form] = set()
    if isinstance(node, ast.match_case):
        values = [p.value for p in ast.walk(node.pattern) if isinstance(p, ast.MatchValue)]
        for value in values:
            found |= _forms(source, value)
        sequences = [p for p in ast.walk(node.pattern) if isinstance(p, ast.MatchSequence)]
        for seq in sequences:
            keys = [literal_key(p.value) for p in seq.patterns if isinstance(p, ast.MatchValue)]
            if len(keys) == len(seq.patterns) and all(k is not None for k in keys):
                found.add(("seq", tuple(keys)))
        return found
    for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
        if not any(isinstance(op, ast.Eq | ast.In | ast.Is) for op in compare.ops):
            continue
        if rule_over_a_class(source, compare):  # `n % 100 in (11, 12, 13)`: not the input
            continue
        for operand in [compare.left, *compare.comparators]:
            found |= _forms(source, operand)
            if isinstance(operand, COLLECTIONS):
                for element in operand.elts:
                    found |= _forms(source, element)
    return found
