"""A cart of (price, quantity) lines and its total."""

from shop.money import format_cents, to_cents


class Cart:
    def __init__(self) -> None:
        self.lines: list[tuple[int, int]] = []

    def add(self, price: float, quantity: int = 1) -> None:
        self.lines.append((to_cents(price), quantity))

    def total_cents(self) -> int:
        return sum(cents * quantity for cents, quantity in self.lines)

    def receipt(self) -> str:
        return f"total {format_cents(self.total_cents())}"
