"""Every authentication method the PostgreSQL driver speaks, on a real server, over TCP and the
Unix socket: SCRAM-SHA-256 (the server's default), md5 (a role whose password is stored as an
md5 hash), cleartext `password`, and `trust`. A role of each is let in by a pg_hba.conf line of
its own, put before the server's lines for the test and taken out after it; a wrong password is
refused wherever a password is checked, so the method really ran."""

from collections.abc import Iterator
from pathlib import Path

import pytest

import oltplab
from oltplab.servers import PostgresServer
from tests.drivers.commands import oltplab_done

METHODS = ["scram-sha-256", "md5", "password", "trust"]
PASSWORD = "Au7h-S3cret"
LOAD = ["--tables=1", "--table-size=100", "--time=1", "--threads=2"]
NO_PASSWORDS = {"OLTPLAB_DB_PASSWORD": "", "PGPASSWORD": "", "PGPASSFILE": "/dev/null"}


def _role(method: str) -> str:
    return "auth_" + method.replace("-", "_")


@pytest.fixture(scope="module")
def pgsql(postgres_empty_db: PostgresServer) -> Iterator[PostgresServer]:
    server = postgres_empty_db
    oltplab.prepare("oltp_point_select", server.url, tables=1, table_size=100)
    hba = server.data_dir / "pg_hba.conf"
    original = hba.read_text()
    lines = []
    for method in METHODS:
        role = _role(method)
        stored = "md5" if method == "md5" else "scram-sha-256"
        server.query(
            f"SET password_encryption = '{stored}'; DROP ROLE IF EXISTS {role}; "
            f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'; "
            f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}",
            database=server.database,
        )
        lines += [f"local all {role} {method}", f"host all {role} {server.host}/32 {method}"]
    hba.write_text("\n".join(lines) + "\n" + original)
    server.query("SELECT pg_reload_conf()")
    yield server
    hba.write_text(original)
    server.query("SELECT pg_reload_conf()")
    for method in METHODS:
        server.query(f"DROP OWNED BY {_role(method)}; DROP ROLE {_role(method)}", server.database)


def _url(server: PostgresServer, role: str, password: str, socket: bool) -> str:
    at = f"{server.host}:{server.port}/{server.database}"
    query = f"?host={server.run_dir}" if socket else ""
    return f"postgresql://{role}:{password}@{at}{query}"


@pytest.mark.parametrize("socket", [False, True], ids=["tcp", "socket"])
@pytest.mark.parametrize("method", METHODS)
def test_each_method_lets_the_right_password_in_and_only_it(
    pgsql: PostgresServer, method: str, socket: bool, tmp_path: Path
) -> None:
    role = _role(method)
    ok = oltplab_done(
        "run", "oltp_point_select", "--db", _url(pgsql, role, PASSWORD, socket), *LOAD,
        "--out", str(tmp_path / "run"), cwd=tmp_path, env=NO_PASSWORDS,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert PASSWORD not in ok.stdout + ok.stderr
    wrong = oltplab_done(
        "run", "oltp_point_select", "--db", _url(pgsql, role, "Wr0ng-pw", socket), *LOAD,
        cwd=tmp_path, env=NO_PASSWORDS,
    )  # fmt: skip
    if method == "trust":
        assert wrong.returncode == 0, wrong.stdout + wrong.stderr
    else:
        assert wrong.returncode == 2, wrong.stdout + wrong.stderr
        assert "password authentication failed" in wrong.stderr, wrong.stderr
        assert "Wr0ng-pw" not in wrong.stdout + wrong.stderr
