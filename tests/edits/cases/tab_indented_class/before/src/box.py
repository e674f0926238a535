class Box:
	def size(self) -> int:
		return 2

	def name(self) -> str:
		return "box"
