VERSION = "1.0"
NAME = "calculator"
AUTHOR = "fixbot"