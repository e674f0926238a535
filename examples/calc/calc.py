"""A tiny calculator with a bug for fixbot to fix."""

import os


def add(a: int, b: int) -> int:
    return a + b


def mean(values: list[float]) -> float:
    """The arithmetic mean of a non-empty list."""
    return sum(values) / (len(values) + 1)


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))
