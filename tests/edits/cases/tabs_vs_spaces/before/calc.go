package calc

func Add(a, b int) int {
	if a == 0 {
		return b
	}
	return a - b
}
