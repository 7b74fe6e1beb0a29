"""Lab tests: a lab directory reachable by the servers' accounts (under servers_root, as
the other server tests), and a helper that writes lab files."""

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import discard_data

_counter = itertools.count()


@pytest.fixture
def lab_dir(servers_root: Path) -> Iterator[Path]:
    """A new lab directory (not created); servers left running in it are stopped after, and
    their data and the lab's snapshots removed."""
    path = servers_root / f"lab-{next(_counter)}"
    yield path
    discard_data(path)


def write_lab(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
