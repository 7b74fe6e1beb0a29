"""Shared fixtures. Unit tests run against synthetic engine output (tests/synthetic.py)
and a fake engine (tests/fakecore.py), so they need neither the compiled engine nor a
database; tests/test_cli_e2e.py runs the real one.

Real servers: `mariadb` and `postgres` are one private server each for the whole session
(oltplab.servers, started on first use, stopped at the end even when tests fail, configured
by tests/servers/settings.py); tests reach them through `.url` (TCP), `.socket_url` or
`.tls_url`, and administer them with `.query(sql)`.
`mariadb_empty_db` and `postgres_empty_db` give the same servers with `sbtest` dropped and
created empty, once per test module. A server that cannot start fails its tests, never skips
them. `server_dir` is a fresh directory a test's own server can run from. All of them live
under `servers_root` (see there why not in pytest's temporary directories).

Shared servers: under tests/servers/with_servers.py (as `make test` runs pytest), the session's
`mariadb` and `postgres` are the ones it started (OLTPLAB_TEST_SERVERS_DIR), shared with the
engine's Rust tests, which ran before. With parallel processes (pytest-xdist) only the first
worker takes them: the others start their own, because a module's fixture empties `sbtest`,
which must never happen under another process' test. Tests marked `serial` (timing-sensitive,
machine-filling) run in a phase of their own after the parallel one: see the README's
Development section.
"""

import contextlib
import importlib.util
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import pytest

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("oltplab") is None:  # a checkout where `maturin develop` never ran
    sys.path.insert(0, str(ROOT / "python"))

from oltplab import engine  # noqa: E402
from oltplab.catalog import load_catalog  # noqa: E402
from oltplab.documents.lab import SNAPSHOTS_DIR  # noqa: E402
from oltplab.exceptions import OltpLabError  # noqa: E402
from oltplab.servers import (  # noqa: E402
    ManagedServer,
    MariaDBServer,
    PostgresServer,
    ServerSettings,
    open_server,
)
from oltplab.servers.state import STATE_FILE  # noqa: E402
from tests.fakecore import FakeCore  # noqa: E402
from tests.servers.disk import TESTS_GB, free_disk_problem  # noqa: E402
from tests.servers.settings import (  # noqa: E402
    PG_TEST_SERVER_SETTINGS,
    SHARED_SERVERS_ENV,
    TEST_SERVER_SETTINGS,
)

Server = TypeVar("Server", bound=ManagedServer)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with the most `slow` tests first, each still whole and in order: parallel
    processes (`--dist loadfile --no-loadscope-reorder`) then take the longest modules early
    instead of finishing on them (xdist's own order, by number of tests, sent the lab example's
    76 s in 3 tests out 61st of 101 modules)."""
    slow = Counter(item.path for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -slow[item.path])


@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCore]:
    """Replaces the compiled engine with a scripted fake for the duration of a test."""
    core = FakeCore()
    monkeypatch.setattr(engine, "_load_core", lambda: core)
    load_catalog.cache_clear()
    yield core
    load_catalog.cache_clear()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs the test from an empty directory (the default results root is relative)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="session")
def servers_root(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """Where the tests' servers live, linked from pytest's directory as `servers`.

    Not inside pytest's own directories: pytest keeps those at 0700, and resets them so
    whenever another pytest session starts, but when the tests run as root the servers run
    as the `mysql` and `postgres` accounts, which must reach their files. Removed at the
    end; when a test failed, everything but the data directories is kept (logs, configs)."""
    root = Path(tempfile.mkdtemp(prefix="oltplab-servers-"))
    problem = free_disk_problem(root, TESTS_GB)
    if problem is not None:  # else every test after the disk filled fails, each its own way
        root.rmdir()
        pytest.exit(problem, returncode=2)
    root.chmod(0o711)  # search, not read
    (tmp_path_factory.getbasetemp() / "servers").symlink_to(root)
    yield root
    if request.session.testsfailed:
        discard_data(root)
    else:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def mariadb(servers_root: Path) -> Iterator[MariaDBServer]:
    """The session's MariaDB (Debian's), on a loopback port of its own."""
    shared = _shared_servers_dir()
    if shared is not None:
        yield _adopt(MariaDBServer, shared / "mariadb")
    else:
        yield from _serve(MariaDBServer, servers_root / "mariadb")


@pytest.fixture(scope="session")
def postgres(servers_root: Path) -> Iterator[PostgresServer]:
    """The session's PostgreSQL (Debian's), on a loopback port of its own."""
    shared = _shared_servers_dir()
    if shared is not None:
        yield _adopt(PostgresServer, shared / "postgresql")
    else:
        yield from _serve(PostgresServer, servers_root / "postgresql", PG_TEST_SERVER_SETTINGS)


@pytest.fixture(scope="module")
def mariadb_empty_db(mariadb: MariaDBServer) -> MariaDBServer:
    """The session's MariaDB, its `sbtest` database emptied for this test module."""
    mariadb.recreate_database()
    return mariadb


@pytest.fixture(scope="module")
def postgres_empty_db(postgres: PostgresServer) -> PostgresServer:
    """The session's PostgreSQL, its `sbtest` database emptied for this test module."""
    postgres.recreate_database()
    return postgres


@pytest.fixture
def server_dir(servers_root: Path) -> Iterator[Path]:
    """A fresh directory for a test's own server (the server creates it); a server the
    test left running there is stopped afterwards, and its data removed."""
    with fresh_server_dir(servers_root) as path:
        yield path


@pytest.fixture(scope="module")
def module_server_dir(servers_root: Path) -> Iterator[Path]:
    """`server_dir` for a module's own server."""
    with fresh_server_dir(servers_root) as path:
        yield path


@contextlib.contextmanager
def fresh_server_dir(servers_root: Path) -> Iterator[Path]:
    """`server_dir` as a context manager (for fixtures with parameters)."""
    parent = Path(tempfile.mkdtemp(prefix="t", dir=servers_root))  # short: socket paths
    parent.chmod(0o711)
    yield parent / "server"
    discard_data(parent)


def discard_data(path: Path) -> None:
    """Stops the servers under `path` and removes their data and lab snapshots, the bulk of
    what a test leaves (the logs and configs stay for a failure's post-mortem): kept until
    the session's end, they filled the disk."""
    for state in path.glob(f"**/{STATE_FILE}"):
        with contextlib.suppress(OltpLabError):  # a test's deliberately broken server
            open_server(state.parent).stop()
        shutil.rmtree(state.parent / "data", ignore_errors=True)
    for snapshots in path.glob(f"**/{SNAPSHOTS_DIR}"):
        shutil.rmtree(snapshots, ignore_errors=True)


def _serve(
    cls: type[Server], base_dir: Path, settings: ServerSettings = TEST_SERVER_SETTINGS
) -> Iterator[Server]:
    problem = None
    try:
        server = cls(base_dir, settings)
        server.start()
    except OltpLabError as e:
        problem = str(e)
    if problem is not None:  # fail, never skip: a skipped real-server test is a lie
        pytest.fail(f"the {cls.display_name} under test did not start: {problem}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()


def _shared_servers_dir() -> Path | None:
    """with_servers' directory when this process is the one that takes its servers."""
    given = os.environ.get(SHARED_SERVERS_ENV)
    if given and os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0":
        return Path(given)
    return None


def _adopt(cls: type[Server], base_dir: Path) -> Server:
    """A running server another process started (and will stop)."""
    server = open_server(base_dir)
    if not isinstance(server, cls) or not server.is_running():
        pytest.fail(f"no running {cls.display_name} in {base_dir} ({SHARED_SERVERS_ENV})")
    return server
