"""URL slugs from titles."""

import re
import string


def slugify(title: str, separator: str | None = None) -> str:
    """'Hello, World!' -> 'hello-world'."""
    if separator == None:
        separator = "-"
    words = re.findall(r"[a-z0-9]+", title.lower())
    return separator.join(words)
