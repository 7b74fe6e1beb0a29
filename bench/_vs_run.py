"""One run of a tool in bench/vs_sysbench.py: what was measured, the server's statements by
kind, and reading runs back from a --json file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from _common import per_txn_us

# Shown per transaction in the table, in this order (the first word of the statement).
KINDS = ("select", "update", "delete", "insert", "begin", "commit")


@dataclass
class Run:
    """One run of a tool: `workload` is "prepare" for a timed prepare."""

    engine: str
    tool: str
    workload: str
    threads: int
    pair: int
    time_s: float
    ok: bool = False
    error: str | None = None
    transactions: int = 0
    tps: float = 0.0
    p95_ms: float | None = None
    errors: int = 0  # ignored errors + reconnects
    # Connection set-up: oltplab's run.json connect_s (opening and preparing every
    # connection, before the clock starts); sysbench: from its start to "Threads started!",
    # which it prints once every thread has connected and prepared its statements.
    setup_s: float | None = None
    start_to_started_s: float | None = None  # both tools: process start to "Threads started!"
    # The CPU of that span: the client's (Python's start-up included for oltplab) and the
    # server's, which no client can take off the set-up.
    client_setup_cpu_s: float | None = None
    server_setup_cpu_s: float | None = None
    client_cpu_load_s: float | None = None  # /proc: from "Threads started!" to the report
    client_kernel_load_s: float | None = None  # its system (kernel) part
    load_wall_s: float | None = None
    client_cpu_total_s: float = 0.0  # wait4 rusage: the whole process, start-up to exit
    client_peak_rss_kb: int | None = None  # VmHWM, last sampled before it exited
    client_threads: int = 0
    server_cpu_s: float | None = None  # the server's CPU over the whole run, connect included
    host_busy_pct_before: float = 0.0  # all cores, this script's server idle
    host_busy_pct_load: float | None = None  # all cores, every process, while the load ran
    counters: dict[str, float] = field(default_factory=dict)  # server-side deltas
    argv: list[str] = field(default_factory=list)
    out_dir: str = ""
    tables: int = 0
    table_size: int = 0
    wall_s: float | None = None  # the process, start to exit
    transport: str = "tcp"  # "tcp" (loopback) or "socket" (the server's Unix socket)

    @property
    def cpu_per_txn_us(self) -> float | None:
        return per_txn_us(self.client_cpu_load_s, self.transactions)

    @property
    def kernel_per_txn_us(self) -> float | None:
        return per_txn_us(self.client_kernel_load_s, self.transactions)

    @property
    def user_per_txn_us(self) -> float | None:
        """The client's user-space CPU per transaction: its CPU less its kernel time."""
        cpu, kernel = self.client_cpu_load_s, self.client_kernel_load_s
        if cpu is None or kernel is None:
            return None
        return per_txn_us(cpu - kernel, self.transactions)

    @property
    def kernel_pct(self) -> float | None:
        cpu, kernel = self.client_cpu_load_s, self.client_kernel_load_s
        return None if cpu is None or kernel is None or cpu <= 0 else 100.0 * kernel / cpu

    @property
    def server_cpu_per_txn_us(self) -> float | None:
        return per_txn_us(self.server_cpu_s, self.transactions)

    @property
    def peak_rss_mb(self) -> float | None:
        return None if self.client_peak_rss_kb is None else self.client_peak_rss_kb / 1024

    def per_txn(self) -> dict[str, float]:
        """Server-side statement counts per transaction, by kind (see `statement_counts`)."""
        if not self.transactions:
            return {}
        return {k: v / self.transactions for k, v in statement_counts(self).items()}


def statement_counts(run: Run) -> dict[str, float]:
    """The server's statements of a run by kind (KINDS): MariaDB's Com_* counters;
    PostgreSQL's pg_stat_statements calls by first word (when loaded), else its commits."""
    c = run.counters
    if run.engine == "mariadb":
        return {k: c.get(f"Com_{k}", 0.0) for k in KINDS} | {
            "executes": c.get("Com_stmt_execute", 0.0)
        }
    # pg_stat_statements does not count BEGIN and COMMIT sent as prepared statements:
    # transactions are pg_stat_database's (an autocommit statement is one too).
    xact = {"commit": c.get("xact_commit", 0.0), "rollback": c.get("xact_rollback", 0.0)}
    if any(k.startswith("pgss_") for k in c):
        return {k: c.get(f"pgss_{k}", 0.0) for k in KINDS if k not in ("begin", "commit")} | xact
    return xact | {"tup_fetched": c.get("tup_fetched", 0.0)}


def run_from(doc: Mapping[str, Any]) -> Run:
    """A Run from a --json file (earlier versions of this script wrote prepares with
    `client_cpu_s` and no workload)."""
    known = {f.name for f in fields(Run)}
    values = dict(doc)
    if "client_cpu_s" in values:
        values["client_cpu_total_s"] = values.pop("client_cpu_s")
    values.setdefault("workload", "prepare")
    values.setdefault("time_s", 0.0)
    return Run(**{k: v for k, v in values.items() if k in known})


def from_json(path: Path) -> tuple[list[Run], list[Run], dict[str, Any]]:
    doc = json.loads(path.read_text())
    runs = [run_from(r) for r in doc["runs"]]
    return runs, [run_from(p) for p in doc["prepares"]], doc["facts"]
