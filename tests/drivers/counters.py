"""The servers' own statement and row counters, read through the administrator's client
(`ManagedServer.query`, one short session per call), for comparison with what a run sent.

MariaDB's `SHOW GLOBAL STATUS` is exact at once: every live session's counters are summed
in, and a closed session's are added to the global ones before it leaves the list.
PostgreSQL's cumulative statistics are not: a backend flushes its counts to shared memory
at most once a second while it lives and when it exits, and it leaves pg_stat_activity
before that last flush. So PostgreSQL's counters are polled until they reach the expected
values (or a deadline passes, and the test shows what they reached), and then read once
more, to see that nothing arrives later. (PostgreSQL 15's pg_stat_force_next_flush() flushes
only the calling session's counts, of no help for the run's; and each read is a new session,
so no snapshot needs pg_stat_clear_snapshot().)

Each test drops the tables it finds before it prepares its own: recreating PostgreSQL's
database takes a second (CREATE DATABASE copies and syncs template1), and the counters
are compared as deltas around each run anyway.
"""

import time
from collections.abc import Callable, Mapping

from oltplab.servers import MariaDBServer, PostgresServer

Counts = dict[str, int]

# What reading the counters costs PostgreSQL's benchmark database: a psql session there
# (pg_stat_user_tables is per database) commits the transaction that reads the catalogs
# at start-up and the query's. Checked by PgCounters.check_admin_cost.
ADMIN_SESSION_XACTS = 2
_POLL_S = 0.05
_SETTLE_TIMEOUT_S = 5.0
_LATE_S = 0.1


def delta(after: Mapping[str, int], before: Mapping[str, int]) -> Counts:
    return {name: after[name] - before.get(name, 0) for name in after}


def settle(read: Callable[[], Counts], want: Mapping[str, int], *, confirm: bool = True) -> Counts:
    """`read()` once it returns `want` (or at the deadline); with `confirm`, read again a
    little later, to see that nothing else arrives."""
    deadline = time.monotonic() + _SETTLE_TIMEOUT_S
    got = read()
    while got != want and time.monotonic() < deadline:
        time.sleep(_POLL_S)
        got = read()
    if got == want and confirm:
        time.sleep(_LATE_S)
        got = read()
    return got


def mariadb_status(server: MariaDBServer) -> Counts:
    """Every numeric global status variable. SHOW, not a SELECT from
    information_schema: reading must not move Com_select."""
    return {
        name: int(value) for name, value in server.query("SHOW GLOBAL STATUS") if value.isdigit()
    }


class PgCounters:
    """PostgreSQL's counters for the benchmark database: pg_stat_database (read from
    the `postgres` database, so that reading does not count) and the sum over
    pg_stat_user_tables (read in the benchmark database: ADMIN_SESSION_XACTS each)."""

    def __init__(self, server: PostgresServer) -> None:
        self.server = server
        self.table_reads = 0  # sessions opened in the benchmark database

    def database(self) -> Counts:
        [row] = self.server.query(
            "SELECT xact_commit, xact_rollback FROM pg_stat_database "
            f"WHERE datname = '{self.server.database}'"
        )
        return {"xact_commit": int(row[0]), "xact_rollback": int(row[1])}

    def quiet_database(self) -> Counts:
        """`database()` once no session is left in the benchmark database and its counts
        have stopped moving: what the sessions before (prepare's) committed has arrived."""
        deadline = time.monotonic() + _SETTLE_TIMEOUT_S
        last: Counts = {}
        while True:
            [row] = self.server.query(
                "SELECT xact_commit, xact_rollback, (SELECT count(*) FROM pg_stat_activity "
                f"WHERE datname = '{self.server.database}') FROM pg_stat_database "
                f"WHERE datname = '{self.server.database}'"
            )
            now = {"xact_commit": int(row[0]), "xact_rollback": int(row[1])}
            if (row[2] == "0" and now == last) or time.monotonic() >= deadline:
                return now
            last = now
            time.sleep(_POLL_S)

    def tables(self) -> Counts:
        self.table_reads += 1
        [row] = self.server.query(
            "SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0), "
            "coalesce(sum(n_tup_ins), 0), coalesce(sum(n_tup_upd), 0), "
            "coalesce(sum(n_tup_del), 0) FROM pg_stat_user_tables",
            database=self.server.database,
        )
        names = ("scans", "n_tup_ins", "n_tup_upd", "n_tup_del")
        return dict(zip(names, map(int, row), strict=True))

    def check_admin_cost(self) -> None:
        """Reading the table counters costs the database ADMIN_SESSION_XACTS commits."""
        before = self.quiet_database()
        self.tables()
        want = {"xact_commit": before["xact_commit"] + ADMIN_SESSION_XACTS}
        want["xact_rollback"] = before["xact_rollback"]
        got = settle(self.database, want)
        assert got == want, "a psql session's own transactions are not what the tests assume"
