"""Where a key of a TOML file is: tomllib gives values without positions, and a lab file's
errors must name the line. Headers and `key =` lines are enough for the files people write."""

import re

Path_ = tuple[str | int, ...]

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r'^\s*"?([A-Za-z0-9_.-]+)"?\s*=')


def _split_dotted(name: str) -> tuple[str, ...]:
    return tuple(part.strip().strip('"').strip("'") for part in name.split("."))


def _tables(lines: list[str]) -> list[Path_]:
    """The table each line belongs to; arrays of tables count their elements."""
    current: Path_ = ()
    counts: dict[tuple[str, ...], int] = {}
    out = []
    for line in lines:
        m = _HEADER.match(line)
        if m:
            names = _split_dotted(m.group(2))
            if m.group(1) == "[[":
                index = counts.get(names, -1) + 1
                counts[names] = index
                current = (*names, index)
            else:
                current = names
        out.append(current)
    return out


def line_of(text: str, path: Path_) -> int:
    """1-based line of `path` (e.g. ("servers", "mdb", "settings", "x")); the closest
    enclosing table's header, or 1, when the key itself is not on a line of its own."""
    lines = text.splitlines()
    tables = _tables(lines)
    for cut in range(len(path), -1, -1):
        table, rest = path[:cut], path[cut:]
        rows = [i for i, t in enumerate(tables) if t == table]
        if not rows:
            continue
        if rest and isinstance(rest[0], str):
            key = rest[0]
            for i in rows:
                m = _KEY.match(lines[i])
                if m and _split_dotted(m.group(1))[0] == key:
                    return i + 1
        if table:
            return rows[0] + 1
    return 1
