"""TPC-C on the real 3-node Ray cluster (conftest.py) and the session's MariaDB: a 2-client
prepare deals the warehouses over the clients and passes the consistency checks; a 2-client run
numbers its terminals as one process would, so their home warehouses cover every warehouse,
and shares one seed (one C_RUN for every terminal, clause 2.1.6); its --metrics are sampled by
the driver on the merged grid."""

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from oltplab.servers import MariaDBServer
from tests.distributed.conftest import RayCluster, oltplab
from tests.test_schema import validate

pytestmark = pytest.mark.serial  # a 3-node Ray cluster takes the whole machine

WAREHOUSES = 2
DATA = [f"--warehouses={WAREHOUSES}"]


def orders_per_warehouse(db: MariaDBServer) -> dict[int, int]:
    rows = db.query("SELECT o_w_id, COUNT(*) FROM orders1 GROUP BY o_w_id", database="sbtest")
    return {int(w): int(n) for w, n in rows}


@pytest.fixture(scope="module")
def prepared(
    ray_cluster: RayCluster, mariadb_empty_db: MariaDBServer
) -> subprocess.CompletedProcess[str]:
    return ray_cluster.oltplab(
        "prepare", "tpcc", f"--db={mariadb_empty_db.url}", *DATA, "--clients=2", timeout_s=600
    )


def test_a_distributed_tpcc_prepare_deals_warehouses_and_is_consistent(
    prepared: subprocess.CompletedProcess[str],
    ray_cluster: RayCluster,
    mariadb_empty_db: MariaDBServer,
) -> None:
    assert prepared.returncode == 0, prepared.stderr
    # Units: each warehouse's districts and its stock, then the item table, of the one table
    # set, dealt round-robin.
    assert "client 0 built units [1, 3, 5]" in prepared.stdout
    assert "client 1 built units [2, 4]" in prepared.stdout
    counted = mariadb_empty_db.query("SELECT COUNT(*) FROM warehouse1", database="sbtest")
    assert counted == [[str(WAREHOUSES)]]
    checked = oltplab("check", "tpcc", f"--db={mariadb_empty_db.url}", *DATA)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    again = ray_cluster.oltplab("prepare", "tpcc", f"--db={mariadb_empty_db.url}", *DATA)
    assert again.returncode == 0, again.stderr
    assert "already loaded" in again.stdout


def test_a_distributed_tpcc_run_homes_terminals_as_one_process(
    prepared: subprocess.CompletedProcess[str],
    ray_cluster: RayCluster,
    mariadb_empty_db: MariaDBServer,
    tmp_path: Path,
) -> None:
    assert prepared.returncode == 0, prepared.stderr
    before = orders_per_warehouse(mariadb_empty_db)
    out = tmp_path / "run"
    # Two terminals, one per client: numbered 0 and 1 among all, their homes are warehouses 1
    # and 2 (each client numbering its own from 0 would put both on warehouse 1).
    done = ray_cluster.oltplab(
        "run", "tpcc", f"--db={mariadb_empty_db.url}", *DATA,
        "--threads=2", "--time=3", "--clients=2", f"--out={out}", "--metrics=system,server",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    merged = json.loads((out / "run.json").read_text())
    validate(merged)
    placed = merged["distributed"]["clients"]
    assert [c["first_thread"] for c in placed] == [0, 1]
    assert len({c["rand_seed"] for c in placed}) == 1  # one C_RUN for every terminal
    clients = [json.loads((out / c["dir"] / "run.json").read_text()) for c in placed]
    total = merged["summary"]["transactions"]
    assert total > 0
    assert total == sum(c["summary"]["transactions"] for c in clients)
    # --metrics from the command line: sampled by the driver, one row per merged interval.
    assert merged["metrics"] == ["system", "server"]
    t_s = pd.read_csv(out / "intervals.csv")["t_s"].tolist()
    assert pd.read_csv(out / "system.csv")["t_s"].tolist() == t_s
    assert pd.read_csv(out / "server.csv")["t_s"].tolist() == t_s
    after = orders_per_warehouse(mariadb_empty_db)
    grew = {w for w in after if after[w] > before.get(w, 0)}
    assert grew == set(range(1, WAREHOUSES + 1)), (before, after)
