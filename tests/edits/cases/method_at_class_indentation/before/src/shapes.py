"""Shapes."""

from __future__ import annotations


class Rectangle:
    """A rectangle."""

    sides = 4

    def __init__(self, width: float, height: float) -> None:
        self.width = width
        self.height = height

    def area(self) -> float:
        return self.width + self.height

    def perimeter(self) -> float:
        return 2 * (self.width + self.height)


def unit() -> Rectangle:
    return Rectangle(1, 1)
