"""Sizes for people."""

from __future__ import annotations


def naturalsize(value: float) -> str:
    """Format a number of bytes like a human-readable size.

    Examples:
        ```pycon
        >>> naturalsize(3000)
        '3.0 kB'

        ```
    """
    if value < 1000:
        return f"{int(value)} Bytes"
    return "%.1f kB" % (value / 100)
