VERSION = "1.0"
NAME = "calc"
