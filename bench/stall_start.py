"""How precisely a stall's start is measured (docs/analysis.md, "How precise the start is"): a
private MariaDB is paused by SIGSTOP for 2 s at 4 s into a 10-s run (4 connections, 0.5-s
intervals: tests/report/test_html_pause.py's scenario), N times; per run, the analysis's
start against the time SIGSTOP was sent, and whether `start_range_s` holds it.

    .venv/bin/python -m bench.stall_start [--runs 20] [--keep DIR]

Prints one line per run and the spread, with the load average (other work on the host makes
the rate over a few tens of milliseconds stray, which is the estimate's error)."""

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from tests.drivers.test_pause import Pauser

import oltplab
from oltplab.analysis.run_analysis import analyse
from oltplab.servers import MariaDBServer, ServerSettings

PAUSE_AT_S, PAUSE_S = 4.0, 2.0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--keep", type=Path, help="keep the run directories here")
    ns = p.parse_args()
    root = ns.keep or Path(tempfile.mkdtemp(prefix="stall-start-"))
    parent = Path(tempfile.mkdtemp(prefix="t", dir="/var/tmp"))  # short: socket paths
    parent.chmod(0o711)
    small = ServerSettings(max_connections=50, variables={"innodb_buffer_pool_size": "32M"})
    errors_ms: list[float] = []
    inside = 0
    with MariaDBServer(parent / "server", small) as server:
        oltplab.prepare("oltp_point_select", db=server.url, tables=1, table_size=1000)
        for i in range(ns.runs):
            out = root / f"run-{i:02d}"
            pid = server.pid()
            assert pid is not None
            with Pauser(pid, PAUSE_AT_S, PAUSE_S) as pauser:
                oltplab.run(
                    "oltp_point_select",
                    db=server.url,
                    out=out,
                    on_event=pauser.on_event,
                    threads=4,
                    time=10.0,
                    report_interval=0.5,
                )
            assert pauser.stop_s is not None
            stalls = analyse(out).to_json()["stalls"]
            load = os.getloadavg()[0]
            if len(stalls) != 1 or stalls[0]["start_range_s"] is None:
                print(f"{i:2d}: {len(stalls)} stalls found, load {load:.0f}")
                continue
            lo, hi = stalls[0]["start_range_s"]
            error_ms = (stalls[0]["start_s"] - pauser.stop_s) * 1e3
            errors_ms.append(error_ms)
            inside += lo <= pauser.stop_s <= hi
            print(
                f"{i:2d}: SIGSTOP {pauser.stop_s:.3f} s, start {stalls[0]['start_s']:.3f} s "
                f"({error_ms:+.0f} ms), range [{lo:.3f}, {hi:.3f}], load {load:.0f}"
            )
    if errors_ms:
        print(
            f"start error: {min(errors_ms):+.0f} to {max(errors_ms):+.0f} ms, mean "
            f"{statistics.mean(errors_ms):+.0f}, sd {statistics.pstdev(errors_ms):.0f}; "
            f"SIGSTOP inside start_range_s {inside} of {len(errors_ms)}"
        )


if __name__ == "__main__":
    main()
