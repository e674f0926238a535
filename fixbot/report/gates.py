"""Why each "no new findings" gate at `auto` ran or not, for the report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_GATES = {"lint": ("ruff", "gates.lint"), "types": ("mypy", "gates.types")}


def auto_gates(config: Mapping[str, Any], ran: set[str]) -> list[str]:
    """Why each gate at `auto` ran or not (config.checks_of decided it from the repository's
    root configuration at the failing commit): a gate that did not run is otherwise silent."""
    gates = config.get("gates")
    if config.get("checks") or not isinstance(gates, Mapping):
        return []
    lines = []
    for name, (tool, key) in _GATES.items():
        if gates.get(name) != "auto":
            continue
        ran_or_not = "ran" if name in ran else "did not run"
        found = "configures" if name in ran else "configures no"
        line = f"The {tool} gate {ran_or_not}: `{key}` is `auto` and the repository {found} {tool}"
        line += " at its root" + ("." if name in ran else " (set it to `true` to run it).")
        lines.append(line)
    return ["", *[line + "  " for line in lines]] if lines else []
