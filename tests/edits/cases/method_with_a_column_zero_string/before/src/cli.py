class Cli:
    def usage(self) -> str:
        return """\
usage: x [-h]
"""

    def name(self) -> str:
        return "y"
