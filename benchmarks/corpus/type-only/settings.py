"""Settings read from KEY=VALUE lines."""


def parse_settings(text: str) -> dict[str, str]:
    table: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip():
            table[key.strip()] = value.strip()
    return table


def lookup_setting(table: dict[str, str], key: str, default: str = "") -> str:
    """The value of `key`, else `default`."""
    if key not in table:
        return default
    return table.get(key)
