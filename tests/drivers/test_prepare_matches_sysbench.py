"""The data after `oltplab prepare` are what the real sysbench 1.0.20's prepare makes:
the same command line's options, one database each on the same server, compared.

Tables (definition, indexes, sequence or AUTO_INCREMENT counter) must be identical, and the
rows alike: ids 1..N, `c` and `pad` filled from sysbench's templates (ten and five groups
of eleven random digits joined by dashes: 119 and 59 characters in CHAR(120) and
CHAR(60)), and `k` drawn from sysbench's default "special" distribution.

How alike `k` must be: both tools draw it at random, and differently seeded (sysbench's
prepare gives other values at each run too, observed), so the two samples differ, but their
shares of rows near the centre of the id range must agree. "special" sends 75% of the draws
to the central 0.75% of the range and the rest to a bell curve around the same centre (the
mean of 12 uniforms, standard deviation about N/12): about 77% of the rows fall within ±1%
of N of the centre (a uniform k: 2%; the bell curve alone: 10%) and about 94% within ±10%
(observed with both tools: 0.765-0.780 and 0.936-0.947). With 2 x 2000 rows, a share's
standard deviation is sqrt(0.77 x 0.23 / 4000) < 0.007, and that of the difference of two
shares < 0.01, so a tolerance of 0.05 is more than five of them: a distribution that
differs fails, chance (p < 1e-6) does not.
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from oltplab.servers import ManagedServer, MariaDBServer, PostgresServer
from tests.drivers.commands import oltplab_cli, sysbench, sysbench_connection, with_database

TABLES, TABLE_SIZE = 2, 2000
OPTIONS = [f"--tables={TABLES}", f"--table-size={TABLE_SIZE}"]
THEIRS, OURS = "sb_sysbench", "sb_oltplab"
C_PATTERN = "^([0-9]{11}-){9}[0-9]{11}$"
PAD_PATTERN = "^([0-9]{11}-){4}[0-9]{11}$"
# k within ±1% and ±10% of N of the centre: expected shares, and the tolerance (above).
BANDS = {0.01: 0.77, 0.10: 0.94}
SHARE_TOLERANCE = 0.05


def prepare_both(server: ManagedServer, cwd: Path) -> None:
    """Both tools' prepare of the same options, one database each."""
    connection = sysbench_connection(server.url, THEIRS)
    sysbench("oltp_read_write", *connection, *OPTIONS, "prepare", cwd=cwd)
    url = with_database(server.url, OURS)
    oltplab_cli("prepare", "oltp_read_write", "--db", url, *OPTIONS, cwd=cwd)


def query(server: ManagedServer, database: str, sql: str) -> list[list[str]]:
    return server.query(sql, database=database)


# -- MariaDB -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mariadb_both(
    mariadb: MariaDBServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MariaDBServer]:
    accounts = f"'{mariadb.user}'@'localhost', '{mariadb.user}'@'{mariadb.host}'"
    for db in (THEIRS, OURS):
        mariadb.query(
            f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}; GRANT ALL ON {db}.* TO {accounts}"
        )
    try:
        prepare_both(mariadb, tmp_path_factory.mktemp("prepare-vs-sysbench"))
        yield mariadb
    finally:
        mariadb.query(f"DROP DATABASE IF EXISTS {THEIRS}; DROP DATABASE IF EXISTS {OURS}")


@pytest.mark.parametrize("table", range(1, TABLES + 1))
def test_mariadb_tables_are_identical(mariadb_both: MariaDBServer, table: int) -> None:
    server = mariadb_both
    theirs, ours = (query(server, db, f"SHOW CREATE TABLE sbtest{table}") for db in (THEIRS, OURS))
    # Identical to the AUTO_INCREMENT counter: sysbench's multi-row INSERTs leave the ids to
    # InnoDB, which numbers the rows 1..N; oltplab's LOAD DATA sends those ids (docs/mysql.md).
    # Either way the counter stands at N+1.
    assert ours == theirs
    create = theirs[0][1]
    assert f"AUTO_INCREMENT={TABLE_SIZE + 1} " in create
    assert f"KEY `k_{table}` (`k`)" in create
    assert "ENGINE=InnoDB" in create
    indexes = [(query(server, db, f"SHOW INDEX FROM sbtest{table}")) for db in (THEIRS, OURS)]
    columns = [[row[2], row[4], row[1]] for row in indexes[1]]  # key, column, non-unique
    assert columns == [["PRIMARY", "id", "0"], [f"k_{table}", "k", "1"]]
    assert [[r[2], r[4], r[1]] for r in indexes[0]] == columns


@pytest.mark.parametrize("table", range(1, TABLES + 1))
def test_mariadb_rows_are_alike(mariadb_both: MariaDBServer, table: int) -> None:
    sql = (
        "SELECT COUNT(*), MIN(id), MAX(id), COUNT(DISTINCT id), "
        f"SUM(c REGEXP '{C_PATTERN}'), SUM(pad REGEXP '{PAD_PATTERN}'), "
        "MIN(CHAR_LENGTH(c)), MAX(CHAR_LENGTH(c)), MIN(CHAR_LENGTH(pad)), MAX(CHAR_LENGTH(pad)), "
        f"COUNT(DISTINCT c) FROM sbtest{table}"
    )
    n = str(TABLE_SIZE)
    want = [[n, "1", n, n, n, n, "119", "119", "59", "59", n]]
    for db in (THEIRS, OURS):
        assert query(mariadb_both, db, sql) == want, db


def test_mariadb_k_distributions_agree(mariadb_both: MariaDBServer) -> None:
    assert_k_shares_agree(mariadb_both)


# -- PostgreSQL --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def postgres_both(
    postgres: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PostgresServer]:
    for db in (THEIRS, OURS):
        postgres.query(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        postgres.query(f"CREATE DATABASE {db} OWNER {postgres.user}")
    try:
        prepare_both(postgres, tmp_path_factory.mktemp("prepare-vs-sysbench"))
        yield postgres
    finally:
        for db in (THEIRS, OURS):
            postgres.query(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


def test_postgres_tables_are_identical(postgres_both: PostgresServer) -> None:
    server = postgres_both
    columns = (
        "SELECT table_name, ordinal_position, column_name, data_type, "
        "character_maximum_length, is_nullable, column_default "
        "FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2"
    )
    indexes = (
        "SELECT tablename, indexname, indexdef FROM pg_indexes "
        "WHERE schemaname = 'public' ORDER BY 1, 2"
    )
    sequences = " UNION ALL ".join(
        f"SELECT 'sbtest{t}', last_value, is_called FROM sbtest{t}_id_seq"
        for t in range(1, TABLES + 1)
    )
    for sql in (columns, indexes, sequences):
        assert query(server, OURS, sql) == query(server, THEIRS, sql), sql
    # What sysbench.md §1.3 observed, so that "identical" is not "identically wrong".
    theirs = query(server, THEIRS, columns)
    assert theirs[:4] == [
        ["sbtest1", "1", "id", "integer", "", "NO", "nextval('sbtest1_id_seq'::regclass)"],
        ["sbtest1", "2", "k", "integer", "", "NO", "0"],
        ["sbtest1", "3", "c", "character", "120", "NO", "''::bpchar"],
        ["sbtest1", "4", "pad", "character", "60", "NO", "''::bpchar"],
    ]
    assert query(server, THEIRS, indexes)[:2] == [
        ["sbtest1", "k_1", "CREATE INDEX k_1 ON public.sbtest1 USING btree (k)"],
        [
            "sbtest1",
            "sbtest1_pkey",
            "CREATE UNIQUE INDEX sbtest1_pkey ON public.sbtest1 USING btree (id)",
        ],
    ]
    assert query(server, THEIRS, sequences)[0] == ["sbtest1", str(TABLE_SIZE), "t"]


@pytest.mark.parametrize("table", range(1, TABLES + 1))
def test_postgres_rows_are_alike(postgres_both: PostgresServer, table: int) -> None:
    # length() of a CHAR ignores its padding; octet_length() counts it.
    sql = (
        "SELECT count(*), min(id), max(id), count(DISTINCT id), "
        f"count(*) FILTER (WHERE c::text ~ '{C_PATTERN}'), "
        f"count(*) FILTER (WHERE pad::text ~ '{PAD_PATTERN}'), "
        "min(length(c)), max(length(c)), min(length(pad)), max(length(pad)), "
        f"min(octet_length(c)), min(octet_length(pad)), count(DISTINCT c) FROM sbtest{table}"
    )
    n = str(TABLE_SIZE)
    want = [[n, "1", n, n, n, n, "119", "119", "59", "59", "120", "60", n]]
    for db in (THEIRS, OURS):
        assert query(postgres_both, db, sql) == want, db


def test_postgres_k_distributions_agree(postgres_both: PostgresServer) -> None:
    assert_k_shares_agree(postgres_both)


# -- k -----------------------------------------------------------------------------------


def k_shares(server: ManagedServer, database: str) -> dict[float, float]:
    """The share of all tables' rows whose k is within each band around the centre."""
    centre = (1 + TABLE_SIZE) / 2
    union = " UNION ALL ".join(f"SELECT k FROM sbtest{t}" for t in range(1, TABLES + 1))
    counts = ", ".join(
        f"SUM(CASE WHEN ABS(k - {centre}) <= {band * TABLE_SIZE} THEN 1 ELSE 0 END)"
        for band in BANDS
    )
    [row] = query(server, database, f"SELECT COUNT(*), {counts} FROM ({union}) AS ks")
    total = int(row[0])
    assert total == TABLES * TABLE_SIZE
    return {band: int(n) / total for band, n in zip(BANDS, row[1:], strict=True)}


def assert_k_shares_agree(server: ManagedServer) -> None:
    theirs, ours = k_shares(server, THEIRS), k_shares(server, OURS)
    for band, expected in BANDS.items():
        assert abs(ours[band] - theirs[band]) <= SHARE_TOLERANCE, (band, ours, theirs)
        assert abs(theirs[band] - expected) <= SHARE_TOLERANCE, (band, theirs)
