"""Money as whole cents, so that sums are exact."""


def to_cents(amount: float) -> int:
    """A price in currency units (2.5) as whole cents (250)."""
    return int(amount * 100)


def format_cents(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"
