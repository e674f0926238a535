from shop.cart import Cart


def test_total_of_whole_prices() -> None:
    cart = Cart()
    cart.add(2.0, quantity=3)
    assert cart.total_cents() == 600


def test_total_of_prices_with_cents() -> None:
    cart = Cart()
    cart.add(0.29)
    cart.add(1.15, quantity=2)
    assert cart.total_cents() == 259


def test_receipt() -> None:
    cart = Cart()
    cart.add(0.57)
    assert cart.receipt() == "total 0.57"
