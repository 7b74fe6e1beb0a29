"""Each workload issues exactly sysbench 1.0.20's statements per event, as the servers
themselves count them: MariaDB's Com_* and Handler_* status counters, PostgreSQL's
pg_stat_user_tables and pg_stat_database; and the run's own read/write/other counts agree
with the rows the server says were changed.

One connection (--threads=1), a fixed number of events (--events, --time=0), for each
--db-ps-mode: server-side prepared statements (auto) and text (disable). Besides the
workload's statements, a run sends only its pre-flight statements (docs/mysql.md,
docs/postgresql.md): one `SELECT id FROM sbtestN LIMIT 1` per table (the check that the
tables exist) and the queries that read the server's version, variables and limits; and
each connection ends with a goodbye (MySQL's COM_QUIT, PostgreSQL's Terminate).
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import oltplab
from oltplab.documents.run import Queries, Summary
from oltplab.servers import ManagedServer, MariaDBServer, PostgresServer
from tests.drivers.counters import (
    ADMIN_SESSION_XACTS,
    Counts,
    PgCounters,
    delta,
    mariadb_status,
    settle,
)
from tests.drivers.statements import OLTP, PerEvent, tables_for
from tests.known import known

EVENTS = 20
TABLE_SIZE = 1000
PS_MODES = ("auto", "disable")
# MariaDB: SHOW GLOBAL VARIABLES (run.json's server variables), SHOW GLOBAL VARIABLES
# and SHOW GLOBAL STATUS (the limits: max_connections, max_prepared_stmt_count).
MYSQL_SHOW_VARIABLES, MYSQL_SHOW_STATUS = 2, 1
# COM_QUIT, which MariaDB counts in Questions (no Com_*): the pre-flight connection and the
# run's one connection both say goodbye.
MYSQL_QUITS = 2
# PostgreSQL: SHOW server_version, pg_settings, the limits query; and each session's
# start-up transaction (it reads the catalogs), for the check's connection and the run's.
PG_INFO_QUERIES, PG_SESSION_START_XACTS = 3, 1
BULK_ROWS = 100  # bulk_insert: one row per event, one INSERT at the end (< 512 KiB)


def drop_tables(server: ManagedServer) -> None:
    """Drops what an earlier test prepared (any workload's: at most two tables here)."""
    server.query("DROP TABLE IF EXISTS sbtest1, sbtest2", database=server.database)


def run(workload: str, url: str, out: Path, **options: Any) -> Summary:
    result = oltplab.run(workload, url, out=out, threads=1, time=0, **options)
    summary = known(result.summary)
    assert result.complete, result.doc.error
    assert (summary.errors.total, summary.reconnects) == (0, 0)
    return summary


# -- MariaDB ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mariadb_admin_cost(mariadb_empty_db: MariaDBServer) -> Counts:
    """What reading SHOW GLOBAL STATUS adds to the counters itself (Questions,
    Com_show_status): subtracted from every delta."""
    first = mariadb_status(mariadb_empty_db)
    cost = delta(mariadb_status(mariadb_empty_db), first)
    for name in ("Com_select", "Com_insert", "Com_update", "Com_delete", "Com_stmt_execute"):
        assert cost[name] == 0, f"reading the status moved {name}"
    return cost


def mariadb_delta(server: MariaDBServer, before: Counts, admin_cost: Counts) -> Counts:
    after = delta(mariadb_status(server), before)
    return {name: after[name] - admin_cost.get(name, 0) for name in after}


def mariadb_expected(per: PerEvent, tables: int, ps_mode: str) -> Counts:
    n = EVENTS
    prepared = per.prepared(tables) if ps_mode == "auto" else 0
    return {
        "Com_select": per.select * n + tables,  # + the pre-flight check
        "Com_update": per.update * n,
        "Com_delete": per.delete * n,
        "Com_insert": per.insert * n,
        "Com_begin": per.begin_commit * n,
        "Com_commit": per.begin_commit * n,
        "Com_rollback": 0,
        "Com_stmt_prepare": prepared,
        # Prepared statements are executed by COM_STMT_EXECUTE, which also moves the
        # statement's own Com_* counter; oltp_insert sends text, as sysbench's does.
        "Com_stmt_execute": per.statements * n if prepared else 0,
        "Com_show_variables": MYSQL_SHOW_VARIABLES,
        "Com_show_status": MYSQL_SHOW_STATUS,
        # Every statement a client sent (not COM_STMT_PREPARE): nothing else was sent.
        "Questions": per.statements * n
        + tables
        + MYSQL_SHOW_VARIABLES
        + MYSQL_SHOW_STATUS
        + MYSQL_QUITS,
        "Handler_update": per.update * n,  # every id exists: each UPDATE changes one row
        "Handler_write": per.insert * n,
    }


@pytest.mark.parametrize("workload", sorted(OLTP))
def test_mariadb_counts_sysbench_statements(
    mariadb_empty_db: MariaDBServer, mariadb_admin_cost: Counts, workload: str, tmp_path: Path
) -> None:
    server, per = mariadb_empty_db, OLTP[workload]
    data: dict[str, Any] = {"tables": tables_for(workload), "table_size": TABLE_SIZE}
    drop_tables(server)
    oltplab.prepare(workload, server.url, **data)
    for ps_mode in PS_MODES:
        before = mariadb_status(server)
        summary = run(
            workload, server.url, tmp_path / ps_mode, events=EVENTS, db_ps_mode=ps_mode, **data
        )
        got = mariadb_delta(server, before, mariadb_admin_cost)
        want = mariadb_expected(per, data["tables"], ps_mode)
        assert {name: got[name] for name in want} == want, ps_mode

        deleted = got["Handler_delete"]
        if workload == "oltp_delete":  # the table shrinks: a DELETE may find no row
            assert 0 < deleted <= EVENTS
        else:
            assert deleted == per.delete * EVENTS
        changed = got["Handler_write"] + got["Handler_update"] + deleted
        queries = summary.queries
        assert summary.transactions == EVENTS
        assert queries == Queries(
            read=per.select * EVENTS,
            write=changed,  # a statement that changed a row
            other=per.statements * EVENTS - per.select * EVENTS - changed,
            total=per.statements * EVENTS,
        ), ps_mode


def test_mariadb_counts_bulk_insert(
    mariadb_empty_db: MariaDBServer, mariadb_admin_cost: Counts, tmp_path: Path
) -> None:
    """bulk_insert: an event is a row; the rows go in one multi-row INSERT at the end."""
    server = mariadb_empty_db
    drop_tables(server)
    oltplab.prepare("bulk_insert", server.url, threads=1)
    before = mariadb_status(server)
    summary = run("bulk_insert", server.url, tmp_path / "run", events=BULK_ROWS)
    got = mariadb_delta(server, before, mariadb_admin_cost)
    want = {
        "Com_select": 1,  # the check that sbtest1 exists and is empty
        "Com_insert": 1,
        "Com_stmt_prepare": 0,
        "Com_stmt_execute": 0,
        "Handler_write": BULK_ROWS,
        "Questions": 2 + MYSQL_SHOW_VARIABLES + MYSQL_SHOW_STATUS + MYSQL_QUITS,
    }
    assert {name: got[name] for name in want} == want
    assert summary.transactions == BULK_ROWS
    assert summary.queries == Queries(read=0, write=1, other=0, total=1)


# -- PostgreSQL ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pg_counters(postgres_empty_db: PostgresServer) -> Iterator[PgCounters]:
    """Counters of the session's PostgreSQL, with autovacuum off for the module: its
    workers' transactions would count in the benchmark database's xact_commit."""
    server = postgres_empty_db
    server.query("ALTER SYSTEM SET autovacuum = off")
    server.query("SELECT pg_reload_conf()")
    try:
        counters = PgCounters(server)
        counters.check_admin_cost()
        yield counters
    finally:
        server.query("ALTER SYSTEM RESET autovacuum")
        server.query("SELECT pg_reload_conf()")


class PgWatch:
    """PostgreSQL's counters before a run, and after it once they have arrived."""

    def __init__(self, counters: PgCounters) -> None:
        self.counters = counters
        self.db = counters.quiet_database()
        counters.table_reads = 0
        self.tables = counters.tables()

    def tables_after(self, added: Counts) -> tuple[Counts, Counts]:
        """(got, want) for the table counters, `added` being the run's."""
        want = {name: self.tables[name] + n for name, n in added.items()}

        def read() -> Counts:
            return {k: v for k, v in self.counters.tables().items() if k in want}

        # Confirmed by xacts_after, which reads later still.
        return settle(read, want, confirm=False), want

    def xacts_after(self, run_xacts: int) -> tuple[Counts, Counts]:
        """(got, want) for the database's commits and rollbacks, the reads' included."""
        xacts = run_xacts + ADMIN_SESSION_XACTS * self.counters.table_reads
        want = {
            "xact_commit": self.db["xact_commit"] + xacts,
            "xact_rollback": self.db["xact_rollback"],
        }
        return settle(self.counters.database, want), want


def pg_xacts(tables: int, prepared: int, events: int) -> int:
    """The transactions a run commits besides its events': each session's start-up (the
    check's and the worker's), the pre-flight queries and one per statement prepared
    (each Parse is followed by its Sync)."""
    return 2 * PG_SESSION_START_XACTS + PG_INFO_QUERIES + tables + prepared + events


@pytest.mark.parametrize("workload", sorted(OLTP))
def test_postgres_counts_sysbench_statements(
    pg_counters: PgCounters, workload: str, tmp_path: Path
) -> None:
    server, per = pg_counters.server, OLTP[workload]
    tables = tables_for(workload)
    data: dict[str, Any] = {"tables": tables, "table_size": TABLE_SIZE}
    drop_tables(server)
    oltplab.prepare(workload, server.url, **data)
    for ps_mode in PS_MODES:
        watch = PgWatch(pg_counters)
        summary = run(
            workload, server.url, tmp_path / ps_mode, events=EVENTS, db_ps_mode=ps_mode, **data
        )
        queries = summary.queries
        inserted, updated = per.insert * EVENTS, per.update * EVENTS
        deleted = per.delete * EVENTS
        if workload == "oltp_delete":  # the table shrinks: a DELETE may find no row
            deleted = queries.write
            assert 0 < deleted <= EVENTS
        added = {"n_tup_ins": inserted, "n_tup_upd": updated, "n_tup_del": deleted}
        if per.one_scan_per_statement:  # + the pre-flight check's scan of each table
            added["scans"] = per.scanning * EVENTS + tables
        got, want = watch.tables_after(added)
        assert got == want, ps_mode

        prepared = per.prepared(tables) if ps_mode == "auto" else 0
        got, want = watch.xacts_after(
            pg_xacts(tables, prepared, per.server_transactions() * EVENTS)
        )
        assert got == want, ps_mode

        changed = inserted + updated + deleted
        assert summary.transactions == EVENTS
        assert queries == Queries(
            read=per.select * EVENTS,
            write=changed,
            other=per.statements * EVENTS - per.select * EVENTS - changed,
            total=per.statements * EVENTS,
        ), ps_mode


def test_postgres_counts_bulk_insert(pg_counters: PgCounters, tmp_path: Path) -> None:
    """bulk_insert: an event is a row; the rows go in one multi-row INSERT at the end."""
    server = pg_counters.server
    drop_tables(server)
    oltplab.prepare("bulk_insert", server.url, threads=1)
    watch = PgWatch(pg_counters)
    summary = run("bulk_insert", server.url, tmp_path / "run", events=BULK_ROWS)
    got, want = watch.tables_after({"n_tup_ins": BULK_ROWS, "n_tup_upd": 0, "n_tup_del": 0})
    assert got == want
    # The check that sbtest1 exists and is empty; the INSERT.
    got, want = watch.xacts_after(pg_xacts(tables=1, prepared=0, events=1))
    assert got == want
    assert summary.transactions == BULK_ROWS
    assert summary.queries == Queries(read=0, write=1, other=0, total=1)
