"""Prompt templates, rendered with strict undefined variables: a missing value is a bug, not ''."""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(  # noqa: S701 - plain text for a model, not HTML
        loader=jinja2.PackageLoader("fixbot.prompts", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(name: str, **values: Any) -> str:
    return _environment().get_template(name).render(**values)
