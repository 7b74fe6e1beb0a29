"""Lab tests: a lab directory reachable by the servers' accounts (under servers_root, as
the other server tests), and a helper that writes lab files."""

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from oltplab.documents.lab import SERVERS_DIR
from oltplab.servers import open_server
from oltplab.servers.state import STATE_FILE

_counter = itertools.count()


@pytest.fixture
def lab_dir(servers_root: Path) -> Iterator[Path]:
    """A new lab directory (not created); servers left running in it are stopped after."""
    path = servers_root / f"lab-{next(_counter)}"
    yield path
    for state in (path / SERVERS_DIR).glob(f"*/{STATE_FILE}"):
        open_server(state.parent).stop()


def write_lab(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
