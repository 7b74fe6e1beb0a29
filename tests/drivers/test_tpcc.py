"""TPC-C on SQLite, MariaDB and PostgreSQL, checked on the database itself: the clause 4.3
population and every consistency condition after prepare; after a run with 8 terminals on 2
warehouses, the conditions that hold after any run, the mix, the remote rates, the 1% rollbacks
counted apart from errors, per-type counts matching the rows the server holds, and terminals
that never leave their home warehouse.

One load per target (2 warehouses, shared by the module's tests, in order): loading is the slow
part, ~15-35 s per target with the debug engine.
"""

import json
import math
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import oltplab
from oltplab.cli.main import main as cli_main
from oltplab.documents.run import TPCC_TYPES, TpccSummary, TpccType
from oltplab.exceptions import NotPreparedError
from tests.known import known
from tests.test_engine_output_schema import assert_matches_schema

TYPES = TPCC_TYPES
MIX_PCT = (45, 43, 4, 4, 4)
# Rows a Payment of the run writes into HISTORY carry W_NAME + 4 spaces + D_NAME; the load's are
# alphanumeric.
RUN_HISTORY = "h_data LIKE '%    %'"
ORDERS_AND_RUN_PAYMENTS = (
    f"SELECT (SELECT COUNT(*) FROM orders1), (SELECT COUNT(*) FROM history1 WHERE {RUN_HISTORY})"
)

# Per warehouse: its districts' next order ids, which each committed New-Order advances.
NEXT_ORDER_IDS = (
    "SELECT (SELECT SUM(d_next_o_id) FROM district1 WHERE d_w_id = 1), "
    "(SELECT SUM(d_next_o_id) FROM district1 WHERE d_w_id = 2)"
)


@dataclass
class Target:
    name: str
    url: str
    query: Callable[[str], list[list[str]]]

    def ints(self, sql: str) -> list[int]:
        return [int(float(v)) if v not in ("", "NULL", "None") else 0 for v in self.query(sql)[0]]


# SQL run on the SQLite file in a process of its own: the engine links its own SQLite, and two
# copies of SQLite in one process do not see each other's locks, so one's last close can
# truncate the WAL index the other has mapped (a bus error).
_SQLITE_SCRIPT = """
import json, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
rows = [[str(v) for v in row] for row in conn.execute(sys.argv[2])]
conn.commit()
conn.close()
print(json.dumps(rows))
"""


def _sqlite_query(path: Path) -> Callable[[str], list[list[str]]]:
    def query(sql: str) -> list[list[str]]:
        argv = [sys.executable, "-c", _SQLITE_SCRIPT, str(path), sql]
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        rows: list[list[str]] = json.loads(out)
        return rows

    return query


@pytest.fixture(scope="module", params=["sqlite", "mariadb", "postgres"])
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target]:
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("tpcc") / "tpcc.db"
        t = Target("sqlite", f"sqlite://{path}", _sqlite_query(path))
    else:
        server = request.getfixturevalue(f"{request.param}_empty_db")
        t = Target(
            request.param, server.url, lambda sql: server.query(sql, database=server.database)
        )
    oltplab.prepare("tpcc", t.url, scale=2, threads=2)
    yield t
    oltplab.cleanup("tpcc", t.url, scale=2)


@pytest.mark.slow
def test_prepare_loads_the_spec_population_and_every_condition_holds(target: Target) -> None:
    counts = target.ints(
        "SELECT "
        + ", ".join(
            f"(SELECT COUNT(*) FROM {table}1)"
            for table in (
                "item",
                "stock",
                "district",
                "customer",
                "history",
                "orders",
                "new_orders",
                "order_line",
            )
        )
    )
    assert counts[:7] == [100_000, 200_000, 20, 60_000, 60_000, 60_000, 18_000]
    assert 20 * 3000 * 5 < counts[7] < 20 * 3000 * 15  # 5..15 lines per order, ~10 on average
    assert abs(counts[7] / 60_000 - 10) < 0.1
    bad_credit, original, names = target.ints(
        "SELECT (SELECT COUNT(*) FROM customer1 WHERE c_credit = 'BC'), "
        "(SELECT COUNT(*) FROM stock1 WHERE s_data LIKE '%ORIGINAL%'), "
        "(SELECT COUNT(DISTINCT c_last) FROM customer1 WHERE c_w_id = 1 AND c_d_id = 1)"
    )
    assert abs(bad_credit / 60_000 - 0.10) < 0.01
    assert abs(original / 200_000 - 0.10) < 0.005
    assert names == 1000  # the first 1000 customers of a district carry every name
    report = oltplab.check("tpcc", target.url, scale=2)
    assert report["passed"], report
    assert [(c["number"], c["status"]) for c in report["conditions"]] == [
        (n, "pass") for n in range(1, 13)
    ]
    # A second prepare keeps the complete load.
    oltplab.prepare("tpcc", target.url, scale=2)
    assert target.ints("SELECT COUNT(*) FROM orders1") == [60_000]


def _shares(tpcc: TpccSummary) -> list[float]:
    total = sum(t.count for _, t in tpcc.by_type.items())
    return [100 * t.count / total for _, t in tpcc.by_type.items()]


def _by_type(tpcc: TpccSummary) -> dict[str, TpccType]:
    return dict(tpcc.by_type.items())


def _within(observed: int, n: int, p: float, sigmas: float = 4.0) -> bool:
    """`observed` successes of `n` draws are within `sigmas` standard deviations of rate `p`."""
    return abs(observed - n * p) <= sigmas * math.sqrt(n * p * (1 - p))


@pytest.mark.slow
def test_a_run_keeps_the_database_consistent_and_follows_the_spec(
    target: Target, tmp_path: Path
) -> None:
    before_orders, before_history = target.ints(ORDERS_AND_RUN_PAYMENTS)
    next_ids = target.ints(NEXT_ORDER_IDS)
    # SQLite: 10,000 transactions; the servers: 10 s, ended by the clock with transactions in
    # flight (10-14 thousand alone, a few thousand beside the other test processes).
    limit: dict[str, Any] = (
        {"events": 10_000, "time": 0} if target.name == "sqlite" else {"time": 10}
    )
    result = oltplab.run("tpcc", target.url, out=tmp_path / "run", scale=2, threads=8, **limit)
    assert result.complete, result.doc.error
    assert_matches_schema(result.raw, tmp_path / "run")
    summary = known(result.summary)
    tpcc = known(summary.tpcc)
    by_type = _by_type(tpcc)
    total = sum(by_type[t].count for t in TYPES)
    assert total == summary.transactions
    if target.name == "sqlite":
        assert total == 10_000
    for share, expected in zip(_shares(tpcc), MIX_PCT, strict=True):
        assert abs(share - expected) <= 1.0, _shares(tpcc)
    assert tpcc.tpmC == pytest.approx(
        by_type["new_order"].count / (summary.duration_s / 60), rel=1e-3
    )
    assert tpcc.efficiency is None  # no think times

    # Rollbacks: ~1% of New-Orders, counted apart from errors (which are the retried attempts).
    new_orders, rollbacks = by_type["new_order"].count, by_type["new_order"].rollbacks
    assert rollbacks > 0
    assert _within(rollbacks, new_orders, 0.01)
    assert summary.errors.total >= sum(by_type[t].errors for t in TYPES)
    assert all(known(by_type[t].latency_ms).p99 > 0 for t in TYPES)

    # The server holds exactly the committed New-Orders and Payments the run counted.
    after_orders, after_history = target.ints(ORDERS_AND_RUN_PAYMENTS)
    assert after_orders - before_orders == new_orders - rollbacks
    assert after_history - before_history == by_type["payment"].count

    # Terminals spread evenly over the warehouses (4 homes each), and stay there: each
    # warehouse's districts took about half of the committed New-Orders.
    per_warehouse = [a - b for a, b in zip(target.ints(NEXT_ORDER_IDS), next_ids, strict=True)]
    assert sum(per_warehouse) == new_orders - rollbacks
    assert all(n > 0.3 * sum(per_warehouse) for n in per_warehouse), per_warehouse

    # Each committed line moved its stock row: the load leaves S_YTD, S_ORDER_CNT and S_REMOTE_CNT
    # at 0, so their sums are the committed lines' quantities, count and remote count (an item
    # ordered twice from one warehouse counts twice, in the one UPDATE of its order's stock).
    stock = target.ints("SELECT SUM(s_ytd), SUM(s_order_cnt), SUM(s_remote_cnt) FROM stock1")
    ordered = target.ints(
        "SELECT SUM(ol_quantity), COUNT(*), SUM(CASE WHEN ol_supply_w_id <> ol_w_id THEN 1 ELSE 0 "
        "END) FROM order_line1 WHERE ol_o_id > 3000"
    )
    assert stock == ordered
    # Clause 2.4.2.2's S_QUANTITY rule keeps every quantity within the load's 10..100.
    low, high = target.ints("SELECT MIN(s_quantity), MAX(s_quantity) FROM stock1")
    assert low >= 10
    assert high <= 100

    # Remote rates, on the server: 1% of order lines, 15% of payments.
    lines, remote_lines = target.ints(
        "SELECT COUNT(*), SUM(CASE WHEN ol_supply_w_id <> ol_w_id THEN 1 ELSE 0 END) "
        "FROM order_line1 WHERE ol_o_id > 3000"
    )
    assert _within(remote_lines, lines, 0.01), (remote_lines, lines)
    payments, remote_payments = target.ints(
        "SELECT COUNT(*), SUM(CASE WHEN h_c_w_id <> h_w_id THEN 1 ELSE 0 END) FROM history1 "
        f"WHERE {RUN_HISTORY}"
    )
    assert _within(remote_payments, payments, 0.15), (remote_payments, payments)

    report = oltplab.check("tpcc", target.url, scale=2)
    failed = [c for c in report["conditions"] if c["status"] == "fail"]
    assert not failed
    assert report["passed"]
    # Deliveries ran: condition 11 no longer holds, and says why.
    assert report["conditions"][10]["status"] == "expected"


def test_a_terminal_never_leaves_its_home_warehouse(target: Target, tmp_path: Path) -> None:
    """One terminal lives in warehouse 1: warehouse 2 gets no order and no payment of its own,
    only the remote work (stock of remote lines, remote customers' payments) that reaches it."""

    def snapshot() -> list[int]:
        return target.ints(
            "SELECT (SELECT d_next_o_id FROM district1 WHERE d_w_id = 2 AND d_id = 1), "
            f"(SELECT COUNT(*) FROM history1 WHERE h_w_id = 2 AND {RUN_HISTORY}), "
            f"(SELECT COUNT(*) FROM history1 WHERE h_c_w_id = 2 AND h_w_id = 1 AND {RUN_HISTORY}), "
            "(SELECT SUM(d_next_o_id) FROM district1 WHERE d_w_id = 2), "
            "(SELECT SUM(d_next_o_id) FROM district1 WHERE d_w_id = 1)"
        )

    before = snapshot()
    result = oltplab.run(
        "tpcc", target.url, out=tmp_path / "one", scale=2, threads=1, events=600, time=0
    )
    assert result.complete, result.doc.error
    after = snapshot()
    assert after[0] == before[0]  # no new order in warehouse 2's first district
    assert after[1] == before[1]  # no payment made at warehouse 2
    assert after[3] == before[3]  # nor a new order in any of its districts
    assert after[4] > before[4]  # warehouse 1 took the new orders
    assert after[2] > before[2]  # and some of its payments were for warehouse 2's customers


@pytest.mark.slow
def test_a_half_done_load_is_refused_then_reloaded(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'half.db'}"
    oltplab.prepare("tpcc", url, scale=1)
    query = _sqlite_query(tmp_path / "half.db")
    # As an interrupted prepare leaves it: no completion mark, rows missing.
    query("UPDATE tpcc_meta SET complete = 0")
    query("DELETE FROM order_line1 WHERE ol_d_id = 3")
    with pytest.raises(NotPreparedError, match="incomplete"):
        oltplab.run("tpcc", url, out=tmp_path / "r", scale=1, threads=1, events=10, time=0)
    messages: list[str] = []
    oltplab.prepare("tpcc", url, scale=1, on_event=lambda e: messages.append(str(e.get("text"))))
    assert any("incomplete TPC-C load" in m for m in messages), messages
    assert oltplab.check("tpcc", url, scale=1)["passed"]
    assert query("SELECT complete FROM tpcc_meta") == [["1"]]


def test_check_command_prints_each_condition_and_fails_on_a_broken_one(
    target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["check", "tpcc", "--db", target.url, "--scale", "2"]) == 0
    text = capsys.readouterr().out
    assert "PASS  1. W_YTD = sum(D_YTD) per warehouse" in text
    assert text.rstrip().endswith("all conditions hold")
    # Break condition 1 in one warehouse: the check names it and exits 1.
    target.query("UPDATE warehouse1 SET w_ytd = w_ytd + 1 WHERE w_id = 2")
    try:
        assert cli_main(["check", "tpcc", "--db", target.url, "--scale", "2", "--json"]) == 1
        report = json.loads(capsys.readouterr().out)
        first = report["conditions"][0]
        assert (first["number"], first["status"], first["offending"]) == (1, "fail", 1)
        assert report["conditions"][7]["status"] == "fail"  # 8: W_YTD = sum(H_AMOUNT) too
        assert not report["passed"]
    finally:
        target.query("UPDATE warehouse1 SET w_ytd = w_ytd - 1 WHERE w_id = 2")
    assert cli_main(["check", "oltp_read_write", "--db", target.url]) == 2


@pytest.mark.parametrize("target", ["sqlite"], indirect=True)
def test_sysbench_tpcc_command_line_runs_and_checks(
    target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    path = target.url.removeprefix("sqlite://")
    common = ["./tpcc.lua", "--db-driver=sqlite", f"--sqlite-db={path}", "--scale=2", "--threads=2"]
    assert cli_main(["sysbench", *common, "--time=2", "--report-interval=1", "run"]) == 0
    report = capsys.readouterr().out
    for line in ("SQL statistics:", "transactions:", "95th percentile:", "Threads fairness:"):
        assert line in report
    assert "tpmC" not in report  # sysbench's report shape, nothing more
    assert cli_main(["sysbench", *common, "check"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Check 1, table set: 1 PASSED" in lines
    assert "Check 11, table set: 1 not applicable after deliveries" in lines


N_EVENTS = 20
ONLY = {t: ",".join("1" if u == t else "0" for u in TYPES) for t in TYPES}


def _com(target: Target) -> dict[str, int]:
    names = (
        "select", "insert", "insert_select", "update", "update_multi", "delete", "begin",
        "commit", "rollback",
    )  # fmt: skip
    # Plain SHOW: with a WHERE clause, reading the status would itself move Com_select.
    status = dict(target.query("SHOW GLOBAL STATUS"))
    return {n: int(status[f"Com_{n}"]) for n in names}


@pytest.mark.parametrize("target", ["mariadb"], indirect=True)
@pytest.mark.parametrize("ty", TYPES)
def test_statements_per_type_match_the_profile_on_the_server(
    target: Target, ty: str, tmp_path: Path
) -> None:
    """One terminal runs one type only (--weights): MariaDB's Com_* counters show each profile's
    statements (clauses 2.4.2-2.8.2), and nothing else but the pre-flight check's one SELECT."""
    before = _com(target)
    result = oltplab.run(
        "tpcc",
        target.url,
        out=tmp_path / ty,
        scale=2,
        threads=1,
        events=N_EVENTS,
        time=0,
        weights=ONLY[ty],
    )
    assert result.complete, result.doc.error
    tpcc = known(known(result.summary).tpcc)
    assert _by_type(tpcc)[ty].count == N_EVENTS
    after = _com(target)
    # Reading the counters is a SHOW, which moves none of these.
    got = {name: after[name] - before[name] for name in after}
    # The pre-flight's SELECT from tpcc_meta (its SHOW GLOBAL VARIABLES move no Com_select):
    # the general log shows nothing else.
    n, check_select = N_EVENTS, 1
    assert (got["begin"], got["commit"] + got["rollback"]) == (n, n)
    if ty == "new_order":
        rollbacks = tpcc.by_type.new_order.rollbacks
        assert got["rollback"] == rollbacks  # the intended rollbacks, and no other
        # ORDER and NEW-ORDER rows, then all the lines in one INSERT ... SELECT, even in an order
        # that rolls back (clause 2.4.2.3 lets it skip only the unused item's line)
        assert (got["insert"], got["insert_select"], got["delete"]) == (2 * n, n, 0)
        # the district, then all the order's stock rows in one UPDATE ... JOIN
        assert (got["update"], got["update_multi"]) == (n, n)
        # customer with warehouse, district; then all the order's items, all its stock rows
        assert got["select"] == 4 * n + check_select
    elif ty == "payment":
        assert (got["insert"], got["update"], got["delete"]) == (n, 3 * n, 0)
        # warehouse, district, customer; by name +1, bad credit's C_DATA +1
        assert 3 * n + check_select <= got["select"] <= 5 * n + check_select
    elif ty == "order_status":
        assert (got["insert"], got["update"], got["delete"]) == (0, 0, 0)
        assert 3 * n + check_select <= got["select"] <= 4 * n + check_select
    elif ty == "delivery":
        delivered = 10 * n - known(tpcc.delivery_skipped_districts)
        assert delivered > 0
        assert (got["insert"], got["update"], got["delete"]) == (0, 3 * delivered, delivered)
        assert got["select"] == 10 * n + 2 * delivered + check_select
    else:
        assert (got["insert"], got["update"], got["delete"]) == (0, 0, 0)
        assert got["select"] == 2 * n + check_select


# pg_stat_statements' texts name the statement by its first word and (first) table; the customer
# read by last name (ORDER BY c_first) and Payment's read of a bad-credit customer's C_DATA are
# told apart.
_PGSS = (
    "SELECT CASE WHEN s.query LIKE '%c_last=$3 ORDER BY c_first%' THEN 'by_name' "
    "WHEN s.query LIKE 'SELECT c_data FROM%' THEN 'select c_data' "
    "ELSE lower(split_part(ltrim(s.query), ' ', 1)) || ' ' || coalesce(substring(s.query "
    "from '(warehouse|district|customer|history|new_orders|orders|order_line|stock|item)1'), '') "
    "END, sum(s.calls) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
    "WHERE d.datname = current_database() GROUP BY 1"
)


def _pgss_reset(target: Target) -> None:
    target.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    target.query("SELECT pg_stat_statements_reset()")


def _pgss(target: Target) -> dict[str, int]:
    """Calls per statement kind since the reset (the counters are in shared memory as soon as
    a statement ends), without the reading query itself."""
    return {k.strip(): int(float(v)) for k, v in target.query(_PGSS) if int(float(v))}


@pytest.mark.parametrize("target", ["postgres"], indirect=True)
@pytest.mark.parametrize("ty", TYPES)
def test_statements_per_type_match_the_profile_in_pg_stat_statements(
    target: Target, ty: str, tmp_path: Path
) -> None:
    """As the MariaDB test above, per statement: pg_stat_statements' calls of each statement
    text are what clauses 2.4.2-2.8.2 prescribe for the transactions the engine counted."""
    _pgss_reset(target)
    result = oltplab.run(
        "tpcc", target.url, out=tmp_path / ty, scale=2, threads=1, events=N_EVENTS, time=0,
        weights=ONLY[ty],
    )  # fmt: skip
    assert result.complete, result.doc.error
    tpcc = known(known(result.summary).tpcc)
    n = _by_type(tpcc)[ty].count
    assert n == N_EVENTS
    got = _pgss(target)
    # Not TPC-C's: CREATE EXTENSION, the reset, and the pre-flight's reads (no TPC-C table).
    got = {k: v for k, v in got.items() if " " in k or k in ("begin", "commit", "rollback")}
    rollbacks = _by_type(tpcc)[ty].rollbacks
    expected: dict[str, int] = {"begin": n, "commit": n - rollbacks}
    if rollbacks:
        expected["rollback"] = rollbacks
    if ty == "new_order":
        expected |= {
            "select customer": n, "select district": n, "update district": n,
            "insert orders": n, "insert new_orders": n, "select item": n, "select stock": n,
            # all the order's stock rows in one UPDATE, all its lines in one INSERT
            "update stock": n, "insert order_line": n,
        }  # fmt: skip
    elif ty == "payment":
        expected |= {
            "update warehouse": n, "select warehouse": n, "update district": n,
            "select district": n, "select customer": n, "update customer": n,
            "insert history": n,
        }  # fmt: skip
        # By last name (60%) and bad credit (10%): drawn, so any count, seen in the text.
        expected |= {k: got[k] for k in ("by_name", "select c_data") if k in got}
    elif ty == "order_status":
        by_name = got.get("by_name", 0)
        expected |= {"select customer": n, "select orders": n, "select order_line": n}
        if by_name:
            expected["by_name"] = by_name
    elif ty == "delivery":
        delivered = 10 * n - known(tpcc.delivery_skipped_districts)
        assert delivered > 0
        expected |= {
            "select new_orders": 10 * n, "delete new_orders": delivered,
            "select orders": delivered, "update orders": delivered,
            "update order_line": delivered, "select order_line": delivered,
            "update customer": delivered,
        }  # fmt: skip
    else:
        expected |= {"select district": n, "select order_line": n}  # its join of stock
    assert got == expected


@pytest.mark.parametrize("target", ["postgres"], indirect=True)
def test_by_last_name_selections_on_the_server_are_60_percent(
    target: Target, tmp_path: Path
) -> None:
    """Over 8 terminals on 2 warehouses, ≥ 2,000 Payments and Order-Statuses: the server ran the
    by-last-name customer read for 60% of them (clauses 2.5.1.2, 2.6.1.2)."""
    _pgss_reset(target)
    result = oltplab.run(
        "tpcc", target.url, out=tmp_path / "r", scale=2, threads=8, events=4_000, time=0,
        weights="0,50,50,0,0",
    )  # fmt: skip
    assert result.complete, result.doc.error
    by_type = known(known(result.summary).tpcc).by_type
    customers = by_type.payment.count + by_type.order_status.count
    by_name = _pgss(target).get("by_name", 0)
    assert _within(by_name, customers, 0.60), (by_name, customers)


def test_check_without_db_uses_the_default_database_of_prepare_and_run(
    in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["check", "tpcc", "--scale", "1"]) == 2  # nothing prepared yet
    assert "oltplab prepare tpcc" in capsys.readouterr().err
    assert cli_main(["prepare", "tpcc", "--scale", "1"]) == 0
    out = capsys.readouterr().out
    assert "Prepared 1 warehouse(s) in 1 TPC-C table set(s) (9 tables)" in out, out
    # Its own file: not sysbench's sbtest.db, which oltp_* workloads would take for theirs.
    assert (in_tmp / "oltplab-runs" / "tpcc.db").is_file()
    assert not (in_tmp / "oltplab-runs" / "sbtest.db").exists()
    assert cli_main(["run", "tpcc", "--scale", "1", "--events", "200", "--time", "0"]) == 0
    capsys.readouterr()
    assert cli_main(["check", "tpcc", "--scale", "1"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("all conditions hold")
    # Another shape is another database, not prepared yet.
    assert cli_main(["check", "tpcc", "--scale", "2"]) == 2
