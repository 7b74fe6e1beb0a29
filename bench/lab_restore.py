"""The lab's own costs (docs/labs.md, "Performance"):

1. restoring a prepared data set (4 x 1M rows by default), after 10 s of oltp_read_write
   changed it, against preparing it again, on MariaDB and PostgreSQL (goal: restore >= 5x
   faster);
2. sampling's cost on the client: client CPU per transaction with and without
   `--metrics system,server` (goal: < 1% more), alternating the two, several pairs.

    .venv/bin/python bench/lab_restore.py [--tables 4 --table-size 1000000]
        [--engines mariadb,postgresql] [--sampling-seconds 20 --pairs 3]
        [--no-restore] [--clean-stop]

Servers live in --base-dir (default /var/tmp/oltplab-bench-lab) and are stopped at the end.
Lab overhead per cell is in every lab's lab.json (`overhead_s`); docs/labs.md quotes one.
"""

import argparse
import shutil
import statistics
import time
from pathlib import Path
from typing import NamedTuple

import oltplab
from oltplab import runner
from oltplab.lab.data import snapshot_server
from oltplab.lab.restore import restore_in_place
from oltplab.metrics.system import host_busy_pct
from oltplab.servers import ServerSettings, create_server, process


def _survivors(base_dir: Path) -> list[int]:
    """Processes whose command line names the server's directory (none after a kill)."""
    marker = f"{base_dir}/"
    return [
        int(p.name)
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and marker in " ".join(process.cmdline(int(p.name)))
    ]


def restore_vs_prepare(
    engine: str, base: Path, tables: int, table_size: int, clean_stop: bool = False
) -> dict[str, float]:
    server = create_server(engine, base / engine, ServerSettings(max_connections=200))
    server.start()
    try:
        server.recreate_database()
        started = time.monotonic()
        oltplab.prepare(
            "oltp_read_only", db=server.url, tables=tables, table_size=table_size, threads=tables
        )
        prepare_s = time.monotonic() - started
        server.stop()
        snapshot = base / f"{engine}-snapshot"
        shutil.rmtree(snapshot, ignore_errors=True)
        snapshot_s = snapshot_server(server, snapshot)
        server.start()
        restores = []
        for n in range(3):
            # What a cell does to the data before a lab restores it: 10 s of oltp_read_write.
            run_dir = base / f"{engine}-write-{n}"
            shutil.rmtree(run_dir, ignore_errors=True)
            options = {"threads": 4, "time": 10, "tables": tables, "table_size": table_size}
            runner.run("oltp_read_write", server.url, options, out=run_dir)
            started = time.monotonic()  # as a lab does it: kill, restore, start
            if clean_stop:  # what labs did before: flushes pages the restore rewrites
                server.stop()
            else:
                server.kill()  # the data is discarded: no clean shutdown (lab/servers.py)
            assert not _survivors(server.base_dir), "a killed server's process survived"
            stats = restore_in_place(snapshot, server.data_dir)
            server.start()
            restores.append((time.monotonic() - started, stats.seconds, stats.bytes_rewritten))
        restore_s = statistics.median(r[0] for r in restores)
        copy_s = statistics.median(r[1] for r in restores)
        rewritten_mb = statistics.median(r[2] for r in restores) / 1e6
        count = server.query("SELECT count(*) FROM sbtest4", database="sbtest")[0][0]
        assert int(count) == table_size, f"restored table has {count} rows"
    finally:
        server.stop()
    return {
        "prepare_s": prepare_s,
        "snapshot_s": snapshot_s,
        "restore_s": restore_s,
        "copy_s": copy_s,
        "rewritten_mb": rewritten_mb,
        "ratio": prepare_s / restore_s,
    }


class SamplingPair(NamedTuple):
    without_us: float  # client CPU per transaction without metrics
    with_us: float  # with metrics, the sampler's child process included
    share_pct: float  # the sampler's own CPU (thread + child) / all client CPU, same run


def sampling_cost(engine: str, base: Path, seconds: int, pairs: int) -> list[SamplingPair]:
    """Alternating runs of oltp_point_select without and with `--metrics system,server`."""
    server = create_server(engine, base / engine, ServerSettings(max_connections=200))
    server.start()
    out = []
    try:
        server.recreate_database()
        oltplab.prepare("oltp_point_select", db=server.url, tables=1, table_size=10000)
        options = {"threads": 4, "time": seconds, "tables": 1, "table_size": 10000}
        for n in range(pairs):
            per_txn_us, share_pct = [], 0.0
            for metrics in ((), ("system", "server")):
                run_dir = base / f"run-{engine}-{n}-{len(metrics)}"
                shutil.rmtree(run_dir, ignore_errors=True)
                m = runner.run(
                    "oltp_point_select", server.url, options, out=run_dir, metrics=metrics
                ).doc
                summary = m.summary
                assert summary is not None
                assert summary.client_cpu_s is not None
                # The sampler's mariadb/psql child is outside the engine's client_cpu_s.
                client_s = summary.client_cpu_s + (m.sampler_child_cpu_s or 0.0)
                per_txn_us.append(client_s / summary.transactions * 1e6)
                share_pct = 100 * (m.sampler_cpu_s or 0.0) / client_s
            out.append(SamplingPair(per_txn_us[0], per_txn_us[1], share_pct))
    finally:
        server.stop()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--base-dir", type=Path, default=Path("/var/tmp/oltplab-bench-lab"))
    p.add_argument("--engines", default="mariadb,postgresql")
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--table-size", type=int, default=1_000_000)
    p.add_argument("--sampling-seconds", type=int, default=20)
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument(
        "--restore",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="measure restore against prepare (--no-restore: only sampling)",
    )
    p.add_argument(
        "--clean-stop",
        action="store_true",
        help="stop the server cleanly before each restore (as labs did) instead of killing it",
    )
    args = p.parse_args()
    args.base_dir.mkdir(parents=True, exist_ok=True)
    args.base_dir.chmod(0o711)
    print(f"host busy before: {host_busy_pct(2.0):.0f}% of all CPUs")
    if args.restore:
        restore_table(args)
    if args.pairs >= 1:
        sampling_table(args)


def restore_table(args: argparse.Namespace) -> None:
    print(f"restore vs prepare, {args.tables} x {args.table_size:,} rows (oltp)")
    print(
        f"{'engine':12s} {'prepare s':>10s} {'snapshot s':>11s} {'restore s':>10s} "
        f"{'(files s)':>9s} {'rewritten MB':>12s} {'ratio':>6s}"
    )
    for engine in args.engines.split(","):
        r = restore_vs_prepare(engine, args.base_dir, args.tables, args.table_size, args.clean_stop)
        print(
            f"{engine:12s} {r['prepare_s']:10.1f} {r['snapshot_s']:11.1f} "
            f"{r['restore_s']:10.2f} {r['copy_s']:9.2f} {r['rewritten_mb']:12.1f} "
            f"{r['ratio']:6.1f}"
        )


def sampling_table(args: argparse.Namespace) -> None:
    for engine in args.engines.split(","):
        print(f"host busy before sampling: {host_busy_pct(2.0):.0f}% of all CPUs")
        pairs = sampling_cost(engine, args.base_dir, args.sampling_seconds, args.pairs)
        print(f"client CPU per transaction, {engine} oltp_point_select, 4 threads")
        for p in pairs:
            print(
                f"  without {p.without_us:7.2f} us   with metrics {p.with_us:7.2f} us   "
                f"{100 * (p.with_us / p.without_us - 1):+5.1f}%   "
                f"sampler's own CPU {p.share_pct:.2f}% of the client's"
            )
        mean_without = statistics.mean(p.without_us for p in pairs)
        mean_with = statistics.mean(p.with_us for p in pairs)
        change_pct = 100 * (mean_with / mean_without - 1)
        share_pct = statistics.mean(p.share_pct for p in pairs)
        print(
            f"  mean: {mean_without:.2f} -> {mean_with:.2f} us ({change_pct:+.1f}%); "
            f"sampler's own CPU {share_pct:.2f}% of the client's"
        )


if __name__ == "__main__":
    main()
