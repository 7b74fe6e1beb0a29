"""The free disk the tests need, checked before they start: on a full disk every test after
the first write fails, each its own way (a server that cannot start, a truncated run), and the
one cause is lost among hundreds of errors.

    python3 -m tests.servers.disk [GB]   # as `make test` runs it first (stdlib only)

How much, measured on 2026-11-26: a debug target/ (maturin, clippy and cargo test) 4.6 GB and
.venv 0.85 GB; the tests, now that a test's servers lose their data when it ends, under 1 GB at
any moment (with_servers' pair 0.5 GB; labs 0.1-0.3 GB each while they run, which filled the
disk when all were kept to the session's end). FRESH_CLONE_GB and TESTS_GB leave room for the
other work on a shared machine.
"""

import shutil
import sys
import tempfile
from pathlib import Path

TESTS_GB = 4
FRESH_CLONE_GB = 12


def free_disk_problem(path: Path, need_gb: float) -> str | None:
    """None when `path`'s file system has `need_gb` free, else a one-line error saying so."""
    free_gb = shutil.disk_usage(path).free / 1e9
    if free_gb >= need_gb:
        return None
    return (
        f"only {free_gb:.1f} GB free on the disk of {path}, and the tests need {need_gb:g} GB:"
        f" free some space (old oltplab-servers-* and pytest-of-* in {tempfile.gettempdir()},"
        " target/ directories of other checkouts) and run them again"
    )


def main(argv: list[str]) -> int:
    need_gb = float(argv[0]) if argv else FRESH_CLONE_GB
    here, tmp = Path.cwd(), Path(tempfile.gettempdir())
    disks = [here] if here.stat().st_dev == tmp.stat().st_dev else [here, tmp]
    problems = [p for p in (free_disk_problem(d, need_gb) for d in disks) if p is not None]
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 2 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
