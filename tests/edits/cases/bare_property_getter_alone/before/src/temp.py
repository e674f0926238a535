class Temperature:
    def __init__(self) -> None:
        self._c = 0.0

    @property
    def celsius(self) -> float:
        return self._c + 1

    @celsius.setter
    def celsius(self, value: float) -> None:
        self._c = value
