"""Command-line normalisation before argparse sees it.

sysbench's conventions: dashes and underscores in option names are interchangeable, and
booleans are `--skip-trx` (on) or `--skip-trx=on|off`. The workload comes before its
options are known, so it is found by a scan that knows which options take a value.
"""

from collections.abc import Iterable, Sequence


def normalise_argv(args: Sequence[str], bool_flags: Iterable[str]) -> list[str]:
    """`--skip_trx` -> `--skip-trx=on`; `--table_size=5` -> `--table-size=5`.

    `bool_flags` are dash-spelled names (`skip-trx`). Tokens after `--` are left alone.
    """
    bools = set(bool_flags)
    out: list[str] = []
    for i, token in enumerate(args):
        if token == "--":
            out.extend(args[i:])
            break
        if token.startswith("--") and len(token) > 2:
            name, eq, value = token[2:].partition("=")
            name = name.replace("_", "-")
            token = f"--{name}=on" if name in bools and not eq else f"--{name}{eq}{value}"
        out.append(token)
    return out


def find_workload(args: Sequence[str], value_flags: Iterable[str]) -> str | None:
    """The first positional argument of a normalised command line, skipping the values
    of options that take one as a separate argument (`--threads 8`)."""
    takes_value = set(value_flags)
    skip = False
    for token in args:
        if skip:
            skip = False
        elif token == "--":
            return None
        elif token.startswith("-"):
            skip = token.startswith("--") and "=" not in token and token[2:] in takes_value
        else:
            return token
    return None


def wants_help(args: Sequence[str]) -> bool:
    for token in args:
        if token == "--":
            return False
        if token in ("-h", "--help"):
            return True
    return False
