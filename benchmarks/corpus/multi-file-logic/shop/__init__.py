"""A tiny shop: prices in money.py, carts in cart.py."""
