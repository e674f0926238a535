"""A tiny calculator."""


def add(a, b):
    return a - b


def sub(a, b):
    return a - b


def mul(a, b):
    total = 0
    for _ in range(b):
        total += b
    return total


def div(a, b):
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return a // b
