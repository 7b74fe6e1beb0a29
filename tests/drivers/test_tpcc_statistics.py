"""A TPC-C prepare on MariaDB leaves statistics that know the tables' sizes, at once.

InnoDB recomputes statistics only in the background, some seconds after a bulk load; a lab
snapshots the data right after the prepare, so every cell kept the statistics of the empty
tables, and MariaDB joined New-Order's batched stock update by scanning all of stock (6 tps on
4 warehouses: found by docs/studies/tpcc.md). Background recalculation is switched off for the
prepare here, so that only the prepare's own ANALYZE can make this pass."""

from collections.abc import Iterator

import pytest

import oltplab
from oltplab.servers import MariaDBServer

STOCK_ROWS = 100_000  # one warehouse
# New-Order's stock update, as the engine sends it (two lines instead of fifteen).
STOCK_UPDATE = (
    "UPDATE stock1 JOIN (SELECT 1 AS i_id, 1 AS w_id, 5 AS quantity, 1 AS ytd, 1 AS orders, "
    "0 AS remote UNION ALL SELECT 2, 1, 5, 1, 1, 0) AS v ON s_i_id=v.i_id AND s_w_id=v.w_id "
    "SET s_quantity=v.quantity, s_ytd=s_ytd+v.ytd"
)


@pytest.fixture(scope="module")
def prepared(mariadb_empty_db: MariaDBServer) -> Iterator[MariaDBServer]:
    server = mariadb_empty_db
    (before,) = server.query("SELECT @@innodb_stats_auto_recalc")
    server.query("SET GLOBAL innodb_stats_auto_recalc = OFF")
    try:
        oltplab.prepare("tpcc", server.url, scale=1, threads=2)
    finally:
        server.query(f"SET GLOBAL innodb_stats_auto_recalc = {before[0]}")
    yield server
    oltplab.cleanup("tpcc", server.url, scale=1)


def test_the_statistics_know_the_size_of_stock(prepared: MariaDBServer) -> None:
    rows = prepared.query(
        "SELECT n_rows FROM mysql.innodb_table_stats "
        f"WHERE database_name = '{prepared.database}' AND table_name = 'stock1'"
    )
    assert rows, "no persistent statistics for stock1"
    # A sample of pages: an estimate, within a factor of 2 of the truth.
    assert STOCK_ROWS / 2 <= int(rows[0][0]) <= STOCK_ROWS * 2


def test_new_orders_stock_update_reads_stock_by_its_key(prepared: MariaDBServer) -> None:
    plan = prepared.query(f"EXPLAIN {STOCK_UPDATE}", database=prepared.database)
    (stock,) = [row for row in plan if row[2] == "stock1"]
    assert stock[3] != "ALL", plan  # the access type: not a scan of every stock row
    assert stock[5] == "PRIMARY", plan
