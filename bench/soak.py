"""Soak: a long oltp_read_write run at 64 connections against a private MariaDB that is
restarted every few minutes (issue 11). Not a test: it measures whether the client stays
flat (its RSS and its CPU per transaction have no trend), whether every restart is seen
(reconnect episodes in the run's intervals) and whether any interval is missing.

    .venv/bin/python bench/soak.py                     # 30 min, a restart every 5 min
    .venv/bin/python bench/soak.py --minutes 6 --restart-every 120 --write-docs

The result goes to stdout as a Markdown block, and with --write-docs into
docs/reliability.md (with the duration actually run).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _common import (
    SPARE_CONNECTIONS,
    Sampler,
    engine_build,
    get_ready,
    git_describe,
    machine,
    oltplab_argv,
    start_server,
    write_docs,
)

import oltplab
from oltplab.rundir import load_run
from oltplab.servers import ManagedServer

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "reliability.md"
SECTION = "## Soak: measured"
BEGIN = "<!-- soak:begin (bench/soak.py --write-docs) -->"
END = "<!-- soak:end -->"
SETTLE_S = 60.0  # the first minute (buffer pool warming, allocator growing) is left out of slopes
SAMPLE_EVERY_S = 1.0


@dataclass
class Restarts:
    done: int = 0
    down_s: list[float] | None = None


def _restarter(server: ManagedServer, every_s: float, stop: threading.Event, out: Restarts) -> None:
    out.down_s = []
    while not stop.wait(every_s):
        began = time.monotonic()
        server.stop()
        server.start()  # the same port: the settings keep the one chosen first
        out.done += 1
        out.down_s.append(time.monotonic() - began)


def _slope_per_hour(t_s: np.ndarray, y: np.ndarray) -> float:
    if t_s.size < 3:
        return float("nan")
    return float(np.polyfit(t_s, y, 1)[0] * 3600.0)


def _episodes(reconnects: np.ndarray) -> int:
    """Runs of consecutive intervals with reconnects: one per restart seen."""
    seen = reconnects > 0
    return int(np.sum(seen & ~np.concatenate(([False], seen[:-1]))))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/soak.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="run length [30]")
    parser.add_argument("--restart-every", type=float, default=300.0, help="seconds [300]")
    parser.add_argument("--threads", type=int, default=64, help="connections [64]")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--table-size", type=int, default=10000)
    parser.add_argument("--base-dir", type=Path, default=None, help="servers' directory [a temp]")
    parser.add_argument("--write-docs", action="store_true", help=f"write into {DOCS.name}")
    args = parser.parse_args(argv)
    base = args.base_dir or Path(tempfile.mkdtemp(prefix="soak-"))
    get_ready(args.threads + SPARE_CONNECTIONS, base)
    server = start_server("mariadb", base, args.threads + SPARE_CONNECTIONS)
    try:
        data = {"tables": args.tables, "table_size": args.table_size}
        oltplab.prepare("oltp_read_write", db=server.url, **data)
        out = base / "run"
        time_s = round(args.minutes * 60)
        client = subprocess.Popen(
            oltplab_argv(
                "run", "oltp_read_write", "--db", server.url, "--out", str(out),
                f"--threads={args.threads}", f"--time={time_s}", "--report-interval=1",
                f"--tables={args.tables}", f"--table-size={args.table_size}",
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        sampler = Sampler(client.pid, None, every_s=SAMPLE_EVERY_S)
        sampler.start()
        stop = threading.Event()
        restarts = Restarts()
        restarter = threading.Thread(
            target=_restarter, args=(server, args.restart_every, stop, restarts), daemon=True
        )
        restarter.start()
        _, err = client.communicate()
        stop.set()
        restarter.join()
        sampler.done.set()
        sampler.join()
    finally:
        server.stop()
    return _report(args, out, client.returncode, err, sampler, restarts, time_s)


def _report(
    args: argparse.Namespace,
    out: Path,
    code: int,
    err: str,
    sampler: Sampler,
    restarts: Restarts,
    time_s: int,
) -> int:
    run = load_run(out)
    iv = run.intervals
    ends = iv["t_s"].to_numpy(float)
    lengths = iv["interval_s"].to_numpy(float)
    gaps = int(np.sum(np.abs(ends[1:] - lengths[1:] - ends[:-1]) > 0.5 * lengths[1:]))
    expected = round(time_s / float(np.median(lengths)))
    samples = sampler.samples
    t0 = samples[0].t
    t = np.array([s.t - t0 for s in samples])
    rss_mib = np.array([s.rss_kb / 1024 for s in samples])
    cpu = np.array([s.cpu_s for s in samples])
    keep = t >= SETTLE_S
    # CPU per transaction per minute: the client's CPU over the transactions completed in it.
    done = np.cumsum(iv["transactions"].to_numpy(float))
    minute_t, minute_us = [], []
    for start in np.arange(SETTLE_S, t[-1] - 60.0, 60.0):
        a, b = np.searchsorted(t, start), np.searchsorted(t, start + 60.0)
        n = np.interp([start + 60.0, start], ends, done)
        if b < t.size and n[0] > n[1]:
            minute_t.append(start + 30.0)
            minute_us.append((cpu[b] - cpu[a]) / (n[0] - n[1]) * 1e6)
    summary = run.summary
    seen = _episodes(iv["reconnects"].to_numpy(float))
    facts = {
        "minutes": time_s / 60,
        "exit": code,
        "intervals": len(iv),
        "expected": expected,
        "gaps": gaps,
        "restarts": restarts.done,
        "seen": seen,
        "down_s": restarts.down_s or [],
        "tps": summary.tps if summary else None,
        "errors": summary.errors.total if summary else None,
        "reconnects": summary.reconnects if summary else None,
        "rss_first": float(rss_mib[keep][0]) if keep.any() else float("nan"),
        "rss_last": float(rss_mib[-1]),
        "rss_slope": _slope_per_hour(t[keep], rss_mib[keep]),
        "cpu_us_first": minute_us[0] if minute_us else float("nan"),
        "cpu_us_last": minute_us[-1] if minute_us else float("nan"),
        "cpu_us_slope": _slope_per_hour(np.array(minute_t), np.array(minute_us)),
    }
    block = _block(args, facts)
    print(block)
    if code != 0:
        print(f"client stderr (last lines):\n{err.strip()[-2000:]}", file=sys.stderr)
    if args.write_docs:
        write_docs(block, SECTION, BEGIN, END, DOCS)
    ok = code == 0 and gaps == 0 and len(iv) >= expected - 1 and seen == restarts.done
    return 0 if ok else 1


def _block(args: argparse.Namespace, f: dict[str, object]) -> str:
    m = machine()
    command = shlex.join([".venv/bin/python", "bench/soak.py", *sys.argv[1:]])
    down = ", ".join(f"{d:.1f}" for d in f["down_s"])  # type: ignore[attr-defined]
    return "\n".join(
        [
            BEGIN,
            f"Measured {time.strftime('%Y-%m-%d')} on {m['cpu_model']}, {m['cores']} cores; "
            f"oltplab {oltplab.__version__} (git {git_describe()}, {engine_build()} engine "
            f"build). **{f['minutes']:.0f} minutes** of oltp_read_write at {args.threads} "
            f"connections ({args.tables} x {args.table_size} rows) against a private MariaDB "
            f"restarted every {args.restart_every:.0f} s.",
            "",
            "| what | result |",
            "|---|--:|",
            f"| exit code of the run | {f['exit']} |",
            f"| intervals (1 s) written / expected | {f['intervals']} / {f['expected']} |",
            f"| gaps in the timeline | {f['gaps']} |",
            "| server restarts done / seen as reconnect episodes | "
            f"{f['restarts']} / {f['seen']} |",
            f"| restart took (stop + start, s) | {down or '-'} |",
            f"| reconnects / errors counted | {f['reconnects']} / {f['errors']} |",
            f"| mean tps | {f['tps']:.0f} |" if f["tps"] is not None else "| mean tps | - |",
            f"| client RSS after 1 min / at the end (MiB) | {f['rss_first']:.1f} / "
            f"{f['rss_last']:.1f} |",
            f"| client RSS slope (MiB per hour, after the first minute) | {f['rss_slope']:+.2f} |",
            f"| client CPU per transaction, first / last minute (µs) | "
            f"{f['cpu_us_first']:.1f} / {f['cpu_us_last']:.1f} |",
            f"| client CPU per transaction slope (µs per hour) | {f['cpu_us_slope']:+.2f} |",
            "",
            "Reproduce:",
            "",
            "```",
            "make build-release",
            command,
            "```",
            "",
            END,
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
