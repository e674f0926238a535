def parse(text):
    value = text.strip()
    return value


VERSION = "1.0"


def render(text):
    value = text.strip()
    return value
