import math


class Circle:
    def __init__(self, r: float) -> None:
        self.r = r

    def area(self) -> float:
        return math.pi * self.r

    def perimeter(self) -> float:
        return 2 * math.pi * self.r
