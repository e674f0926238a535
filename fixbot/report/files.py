"""A result's files on disk: written atomically, read back as data by the publish step."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from fixbot.errors import UsageError
from fixbot.report.markdown import render_markdown
from fixbot.report.result import FixResult
from fixbot.secrets import placeholder_credentials, redact


def write_outputs(
    result: FixResult,
    out: Path,
    *,
    known: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
) -> list[Path]:
    """evidence.json, report.md and (only when fixed) fix.diff, each written atomically.

    Everything is scanned for secrets and redacted first (model replies and logs quote
    whatever the repository or the model wrote); a fix that adds one was refused earlier.
    `env`: where the run's credentials are; one set to a placeholder is named in the result
    (`not_secrets`) as left unredacted.
    """
    if env is not None:
        result = replace(result, not_secrets=placeholder_credentials(env))
    out.mkdir(parents=True, exist_ok=True)
    written = [
        _write_atomic(out / "evidence.json", redact(result.to_json(), known=known)),
        _write_atomic(out / "report.md", redact(render_markdown(result), known=known)),
    ]
    stale = out / "fix.diff"
    if result.status == "fixed":
        written.append(_write_atomic(stale, result.diff))
    elif stale.exists():
        stale.unlink()
    return written


def _write_atomic(path: Path, text: str) -> Path:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)
    return path


def load_result(folder: Path) -> FixResult:
    """A recorded result, read as data: evidence.json, and fix.diff checked against its hash."""
    try:
        data = json.loads((folder / "evidence.json").read_text(encoding="utf-8"))
        recorded_sha = data.get("diff_sha256", "")
        result = FixResult.from_json(json.dumps(data))
        render_markdown(result)  # whatever it holds must render, or nothing is published
    except (OSError, ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        raise UsageError(f"no readable fixbot result in {folder}: {exc}") from exc
    if result.status != "fixed":
        return result
    try:
        diff = (folder / "fix.diff").read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"the recorded result is fixed but {folder}/fix.diff is missing") from exc
    if hashlib.sha256(diff.encode()).hexdigest() != recorded_sha:
        raise UsageError("fix.diff does not match the SHA-256 recorded in evidence.json")
    return replace(result, diff=diff)
