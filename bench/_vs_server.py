"""The server's side of a run: its statement counters and its CPU, read before and after
the client runs."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from _common import server_cpu_s

from oltplab.servers import ManagedServer

# MariaDB's counters of statements (SHOW GLOBAL STATUS), reported per transaction.
MARIADB_COUNTERS = (
    "Com_select", "Com_update", "Com_delete", "Com_insert", "Com_begin", "Com_commit",
    "Com_rollback", "Com_stmt_execute", "Com_stmt_prepare", "Questions",
)  # fmt: skip
PG_DATABASE_COUNTERS = (
    "xact_commit", "xact_rollback", "tup_fetched", "tup_inserted", "tup_updated", "tup_deleted",
)  # fmt: skip
PG_STAT_STATEMENTS_CONTROL = Path("/usr/share/postgresql")


def server_counters(server: ManagedServer, pgss: bool) -> dict[str, float]:
    """Cumulative statement counters of the benchmark database (read when no client is
    connected: PostgreSQL's backends flush their counts when they exit)."""
    if server.engine == "mariadb":
        names = ", ".join(f"'{n}'" for n in MARIADB_COUNTERS)
        rows = server.query(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")
        return {name: float(value) for name, value in rows}
    cols = ", ".join(PG_DATABASE_COUNTERS)
    row = server.query(f"SELECT {cols} FROM pg_stat_database WHERE datname = '{server.database}'")
    out = {n: float(v) for n, v in zip(PG_DATABASE_COUNTERS, row[0], strict=True)} if row else {}
    if pgss:
        rows = server.query(
            "SELECT lower(split_part(ltrim(s.query), ' ', 1)), sum(s.calls) "
            "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
            f"WHERE d.datname = '{server.database}' GROUP BY 1"
        )
        out |= {f"pgss_{kind}": float(calls) for kind, calls in rows}
    return out


def counter_deltas(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    return {k: after[k] - before.get(k, 0.0) for k in after}


def server_cpu_total_s(server: ManagedServer) -> float | None:
    """The server's CPU so far (`server_cpu_s`)."""
    pid = server.pid()
    return None if pid is None else server_cpu_s(pid)


def enable_pg_stat_statements(server: ManagedServer) -> bool:
    try:
        server.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        server.query("SELECT pg_stat_statements_reset()")
    except Exception as e:  # the library is not loaded: fall back to pg_stat_database
        print(f"vs_sysbench.py: no pg_stat_statements ({e})", file=sys.stderr)
        return False
    return True


def pg_stat_statements_available() -> bool:
    return any(PG_STAT_STATEMENTS_CONTROL.glob("*/extension/pg_stat_statements.control"))
