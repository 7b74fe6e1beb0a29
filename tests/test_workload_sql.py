"""Each workload issues sysbench 1.0.20's statements per transaction, on a real SQLite file.

The statements are read back from the SQL log, where SQLite itself expands every bound
parameter, so the test sees what the database executed, not what the client meant to send.
"""

import re
from pathlib import Path
from typing import Any

import pytest

import oltplab
from oltplab.documents.run import Summary
from tests.known import known

N = r"(-?\d+)"
S = r"'([0-9-]+)'"
POINT = rf"SELECT c FROM sbtest(\d) WHERE id={N}"
RANGES = [
    rf"SELECT c FROM sbtest(\d) WHERE id BETWEEN {N} AND {N}",
    rf"SELECT SUM\(k\) FROM sbtest(\d) WHERE id BETWEEN {N} AND {N}",
    rf"SELECT c FROM sbtest(\d) WHERE id BETWEEN {N} AND {N} ORDER BY c",
    rf"SELECT DISTINCT c FROM sbtest(\d) WHERE id BETWEEN {N} AND {N} ORDER BY c",
]
WRITES = [
    rf"UPDATE sbtest(\d) SET k=k\+1 WHERE id={N}",
    rf"UPDATE sbtest(\d) SET c={S} WHERE id={N}",
    rf"DELETE FROM sbtest(\d) WHERE id={N}",
    rf"INSERT INTO sbtest(\d) \(id, k, c, pad\) VALUES \({N}, {N}, {S}, {S}\)",
]
RANGE = rf"k BETWEEN {N} AND {N}"
EVENTS = 4
# Before the load: a check that each table exists (the first one's also asks for an unfinished
# prepare's marker, docs/faults.md), and the version and settings queries.
PREFLIGHT = re.compile(
    r"SELECT id FROM sbtest\d+ LIMIT 1|SELECT sqlite_version\(\)|PRAGMA \w+"
    r"|SELECT \(SELECT COUNT\(\*\) FROM sqlite_master WHERE .*\),"
    r" \(SELECT id FROM sbtest1 LIMIT 1\)"
)


def run_logged(tmp_path: Path, workload: str, **options: Any) -> tuple[list[str], Summary]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    db = f"sqlite://{tmp_path / 'sb.db'}"
    data: dict[str, Any] = {
        "tables": 2,
        "table_size": 1000,
        "rand_seed": options.pop("rand_seed", 7),
    }
    if workload.startswith("select_random"):
        data["tables"] = 1
    oltplab.prepare(workload, db, threads=2, **data)
    log = tmp_path / "sql.log"
    result = oltplab.run(
        workload,
        db,
        out=tmp_path / "run",
        events=EVENTS,
        time=0,
        sql_log=str(log),
        **data,
        **options,
    )
    lines = [s for s in log.read_text().splitlines() if not PREFLIGHT.fullmatch(s)]
    return lines, known(result.summary)


def transactions(lines: list[str], begin: str) -> list[list[str]]:
    """Splits the log at BEGIN ... COMMIT."""
    out: list[list[str]] = []
    for line in lines:
        if line == begin:
            out.append([])
        elif out:
            out[-1].append(line)
    return out


def match_all(lines: list[str], patterns: list[str]) -> list[re.Match[str]]:
    assert len(lines) == len(patterns), lines
    matches = []
    for line, pattern in zip(lines, patterns, strict=True):
        m = re.fullmatch(pattern, line)
        assert m, f"{line!r} is not {pattern!r}"
        matches.append(m)
    return matches


def test_read_write_is_sysbenchs_transaction(tmp_path: Path) -> None:
    lines, summary = run_logged(tmp_path, "oltp_read_write")
    # SQLite's dialect of BEGIN for a writing transaction (docs/architecture.md).
    trxs = transactions(lines, "BEGIN IMMEDIATE")
    assert len(trxs) == EVENTS
    for trx in trxs:
        assert trx[-1] == "COMMIT"
        m = match_all(trx[:-1], [POINT] * 10 + RANGES + WRITES)
        # One table per statement group: the ten point selects share theirs.
        assert len({x.group(1) for x in m[:10]}) == 1
        for r in m[10:14]:  # BETWEEN id AND id+range_size-1
            assert int(r.group(3)) - int(r.group(2)) == 99
        delete, insert = m[16], m[17]
        assert (delete.group(1), delete.group(2)) == (insert.group(1), insert.group(2))
        assert (len(insert.group(4)), len(insert.group(5))) == (119, 59)
        assert re.fullmatch(r"(\d{11}-){9}\d{11}", insert.group(4))
    q = summary.queries
    assert (q.read, q.write, q.other) == (14 * EVENTS, 4 * EVENTS, 2 * EVENTS)


def test_read_only_and_write_only(tmp_path: Path) -> None:
    lines, summary = run_logged(tmp_path / "ro", "oltp_read_only", range_size=10)
    trxs = transactions(lines, "BEGIN")
    assert len(trxs) == EVENTS
    for trx in trxs:
        m = match_all(trx, [POINT] * 10 + RANGES + ["COMMIT"])
        assert all(int(r.group(3)) - int(r.group(2)) == 9 for r in m[10:14])
    assert summary.queries.write == 0

    lines, summary = run_logged(tmp_path / "wo", "oltp_write_only")
    trxs = transactions(lines, "BEGIN IMMEDIATE")
    assert len(trxs) == EVENTS
    for trx in trxs:
        match_all(trx, [*WRITES, "COMMIT"])


def test_options_change_the_statement_counts(tmp_path: Path) -> None:
    lines, _ = run_logged(
        tmp_path, "oltp_read_write", point_selects=3, range_selects="off", skip_trx="on"
    )
    assert not {"BEGIN IMMEDIATE", "COMMIT"} & set(lines)
    match_all(lines, ([POINT] * 3 + WRITES) * EVENTS)


@pytest.mark.parametrize(
    ("workload", "pattern"),
    [
        ("oltp_point_select", POINT),
        ("oltp_update_index", WRITES[0]),
        ("oltp_update_non_index", WRITES[1]),
        ("oltp_delete", WRITES[2]),
        ("oltp_insert", rf"INSERT INTO sbtest(\d) \(k, c, pad\) VALUES \({N}, {S}, {S}\)"),
        (
            "select_random_points",
            rf"SELECT id, k, c, pad FROM sbtest1 WHERE k IN \({N}(, {N}){{9}}\)",
        ),
        (
            "select_random_ranges",
            rf"SELECT count\(k\) FROM sbtest1 WHERE {RANGE}( OR {RANGE}){{9}}",
        ),
    ],
)
def test_single_statement_workloads(tmp_path: Path, workload: str, pattern: str) -> None:
    lines, summary = run_logged(tmp_path, workload)
    match_all(lines, [pattern] * EVENTS)
    assert summary.transactions == EVENTS
    assert summary.queries.total == EVENTS


def test_random_ranges_span_delta(tmp_path: Path) -> None:
    lines, _ = run_logged(tmp_path, "select_random_ranges", delta=7)
    for line in lines:
        bounds = [int(x) for x in re.findall(r"BETWEEN (\d+) AND (\d+)", line) for x in x]
        assert all(hi - lo == 7 for lo, hi in zip(bounds[::2], bounds[1::2], strict=True))


def _table_rows(db_path: Path) -> list[tuple[Any, ...]]:
    import sqlite3

    with sqlite3.connect(db_path) as con:
        return con.execute("SELECT id, k, c, pad FROM sbtest1 ORDER BY id").fetchall()


def test_rand_seed_makes_prepare_and_run_reproducible(tmp_path: Path) -> None:
    logs, data = [], []
    for attempt in ("a", "b", "c"):
        seed = 11 if attempt != "c" else 12
        lines, _ = run_logged(tmp_path / attempt, "oltp_read_write", rand_seed=seed, threads=1)
        logs.append(lines)
        data.append(_table_rows(tmp_path / attempt / "sb.db"))
    assert logs[0] == logs[1]
    assert data[0] == data[1]
    assert logs[0] != logs[2]  # another seed, other statements and other data
    assert data[0] != data[2]
