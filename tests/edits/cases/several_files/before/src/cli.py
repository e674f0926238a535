import sys

from calc import add


def main(argv):
    a, b = argv[1], argv[2]
    print(add(a, b))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
