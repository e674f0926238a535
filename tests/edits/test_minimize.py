"""Hunk necessity: a canonical diff split into hunks and rebuilt without some of them."""

from __future__ import annotations

from fixbot import edits as diff
from fixbot.edits import hunks, without

OLD = {
    "a.py": "".join(f"line {i}\n" for i in range(1, 31)),
    "b.py": "x = 1\ny = 2\n",
}


def read(path: str) -> str | None:
    return OLD.get(path)


def make_diff() -> str:
    new_a = OLD["a.py"].replace("line 3\n", "line three\n").replace("line 25\n", "line 25!\n")
    changes = [
        diff.FileChange("a.py", OLD["a.py"], new_a),
        diff.FileChange("b.py", OLD["b.py"], "x = 1\ny = 3\n"),
        diff.FileChange("c.py", None, "new = True\n"),
    ]
    return diff.render_diff(changes)


def test_hunks_are_listed_in_order_with_their_paths() -> None:
    refs = hunks(make_diff())
    assert [(r.index, r.path) for r in refs] == [(0, "a.py"), (1, "a.py"), (2, "b.py"), (3, "c.py")]
    assert "line three" in refs[0].text and "line 25!" in refs[1].text


def test_without_one_hunk_keeps_the_others_canonical() -> None:
    reduced = without(make_diff(), [1], read)
    patch = diff.plan_patch(reduced, read)
    contents = {c.path: c.new for c in patch.changes}
    assert "line three" in (contents["a.py"] or "")
    assert "line 25!" not in (contents["a.py"] or "")
    assert contents["b.py"] == "x = 1\ny = 3\n" and contents["c.py"] == "new = True\n"
    assert reduced == patch.diff


def test_dropping_a_whole_file_and_a_new_file() -> None:
    reduced = without(make_diff(), [2, 3], read)
    assert [c.path for c in diff.plan_patch(reduced, read).changes] == ["a.py"]


def test_dropping_everything_leaves_nothing() -> None:
    assert without(make_diff(), [0, 1, 2, 3], read) == ""
