"""Issue 11, item 12, on real servers: the password need not be on the command line (where
every local user reads it in /proc/PID/cmdline). It comes from --db-password-file, from
OLTPLAB_DB_PASSWORD, from the client's own MYSQL_PWD or PGPASSWORD, or from ~/.pgpass, when
the URL holds none; and no run directory ever holds it, the sysbench drop-in's
--mysql-password included."""

from pathlib import Path

import pytest

import oltplab
from oltplab.servers import ManagedServer, MariaDBServer, PostgresServer
from tests.drivers.commands import oltplab_done

# Cleared for every command, so that the tester's own environment does not decide.
NO_PASSWORDS = {"OLTPLAB_DB_PASSWORD": "", "MYSQL_PWD": "", "PGPASSWORD": "", "PGPASSFILE": ""}
LOAD = ["--tables=1", "--table-size=100", "--time=1", "--threads=2"]


def _bare_url(server: ManagedServer) -> str:
    """The server's URL without its password."""
    return f"{server.url_scheme}://{server.user}@{server.host}:{server.port}/{server.database}"


def _holds(directory: Path, secret: str) -> list[Path]:
    return [f for f in directory.rglob("*") if f.is_file() and secret.encode() in f.read_bytes()]


@pytest.fixture(scope="module")
def mysql(mariadb_empty_db: MariaDBServer) -> MariaDBServer:
    oltplab.prepare("oltp_point_select", mariadb_empty_db.url, tables=1, table_size=100)
    return mariadb_empty_db


@pytest.fixture(scope="module")
def pgsql(postgres_empty_db: PostgresServer) -> PostgresServer:
    oltplab.prepare("oltp_point_select", postgres_empty_db.url, tables=1, table_size=100)
    return postgres_empty_db


def _run(server: ManagedServer, out: Path, env: dict[str, str], *extra: str) -> None:
    done = oltplab_done(
        "run", "oltp_point_select", "--db", _bare_url(server), *LOAD, "--out", str(out), *extra,
        cwd=out.parent, env=NO_PASSWORDS | env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert server.password not in done.stdout + done.stderr
    assert _holds(out, server.password) == []


def test_a_wrong_password_names_where_it_came_from(pgsql: PostgresServer, tmp_path: Path) -> None:
    done = oltplab_done(
        "run", "oltp_point_select", "--db", _bare_url(pgsql), *LOAD, cwd=tmp_path,
        env=NO_PASSWORDS | {"PGPASSWORD": "Wr0ngSecret"},
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "password authentication failed" in done.stderr, done.stderr
    assert "the password came from PGPASSWORD" in done.stderr, done.stderr
    assert "Wr0ngSecret" not in done.stdout + done.stderr


def test_mysql_password_from_each_source(mysql: MariaDBServer, tmp_path: Path) -> None:
    _run(mysql, tmp_path / "ours", {"OLTPLAB_DB_PASSWORD": mysql.password})
    _run(mysql, tmp_path / "client", {"MYSQL_PWD": mysql.password})
    secret_file = tmp_path / "pw"
    secret_file.write_text(mysql.password + "\n")
    secret_file.chmod(0o600)
    _run(mysql, tmp_path / "file", {}, f"--db-password-file={secret_file}")


def test_postgres_password_from_each_source(pgsql: PostgresServer, tmp_path: Path) -> None:
    _run(pgsql, tmp_path / "client", {"PGPASSWORD": pgsql.password})
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(
        f"otherhost:*:*:*:wrong\n{pgsql.host}:{pgsql.port}:*:{pgsql.user}:{pgsql.password}\n"
    )
    pgpass.chmod(0o600)
    _run(pgsql, tmp_path / "pgpass-run", {"PGPASSFILE": str(pgpass)})


def test_no_password_anywhere_is_refused_by_the_server_in_one_line(
    mysql: MariaDBServer, tmp_path: Path
) -> None:
    """Without a source the server says no: the check that the sources above were used."""
    done = oltplab_done(
        "run", "oltp_point_select", "--db", _bare_url(mysql), *LOAD, cwd=tmp_path, env=NO_PASSWORDS
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Access denied" in done.stderr, done.stderr
    assert "no password was given" in done.stderr
    assert "OLTPLAB_DB_PASSWORD" in done.stderr


def test_the_sysbench_drop_in_writes_no_password(mysql: MariaDBServer, tmp_path: Path) -> None:
    out = tmp_path / "sb"
    done = oltplab_done(
        "sysbench", "oltp_point_select", "--db-driver=mysql", f"--mysql-host={mysql.host}",
        f"--mysql-port={mysql.port}", f"--mysql-user={mysql.user}",
        f"--mysql-password={mysql.password}", f"--mysql-db={mysql.database}",
        "--tables=1", "--table-size=100", "--time=1", f"--out={out}", "run",
        cwd=tmp_path, env=NO_PASSWORDS,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "run.json").exists()
    assert _holds(out, mysql.password) == []
    assert mysql.password not in done.stdout + done.stderr
