"""The report's size and time budget (issue 13): a lab of 50 runs x 600 one-second intervals,
synthesised through the run-directory writers, turned into one HTML report. Goal: under 5 MB,
produced in under 10 s. Prints the measurements as a Markdown table for docs/reports.md.

    .venv/bin/python -m bench.report_size [--runs 50] [--seconds 600] [--keep DIR]

The report is built in a fresh Python process (`oltplab report`), timed from the outside,
twice, with an empty cache directory of its own: the first builds and caches vl-convert's
JavaScript bundle, the second is the steady cost. The machine's load average is printed
beside the times: on a shared 2-core host other work inflates wall time, while CPU time
(user + sys of the child) does not move with it."""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.report.synthetic_runs import Shape, write_run, write_server_csv

CONFIGS = (("one-thread-per-connection", 1.0, 120.0), ("pool-of-threads", 1.2, 0.0))
THREADS = (4, 16, 64, 256, 1024)


def make_lab(root: Path, runs: int, seconds: int) -> list[Path]:
    """`runs` runs over 2 configs x 5 connection counts, repeated; a stall in a few."""
    made = []
    for n in range(runs):
        label, speed, saw = CONFIGS[n % 2]
        threads = THREADS[(n // 2) % len(THREADS)]
        repeat = n // (2 * len(THREADS)) + 1
        stalls = ((seconds * 0.6, 2.0),) if (saw and n % 7 == 0) else ()
        shape = Shape(
            tps=2000 * speed * (1 + threads / 30) / (1 + threads / 300 + (threads / 900) ** 2),
            seconds=seconds,
            sawtooth_period_s=saw,
            stalls=stalls,
            seed=n,
        )
        path = root / f"{label}-t{threads}-r{repeat}"
        if not (path / "run.json").is_file():  # --keep DIR of an earlier run: reused
            write_run(path, shape, label=label, threads=threads)
            if saw:
                write_server_csv(path, shape)
        made.append(path)
    return made


def timed_report(runs: list[Path], out: Path, cache: Path) -> tuple[float, float]:
    """(wall s, CPU s) of `oltplab report` in a child process whose cache directory (where
    the JavaScript bundle is kept) is `cache`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "oltplab", "report", *map(str, runs), "-o", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
        env=os.environ | {"XDG_CACHE_HOME": str(cache)},
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument(
        "--keep", type=Path, help="write the runs and report here (runs found there are reused)"
    )
    ns = parser.parse_args()
    root = ns.keep or Path(tempfile.mkdtemp(prefix="oltplab-report-bench-"))
    runs = make_lab(root / "runs", ns.runs, ns.seconds)
    out = root / "report.html"
    rows = []
    cache = Path(tempfile.mkdtemp(prefix="oltplab-report-cache-"))  # empty: the first builds
    for attempt in ("first (builds the JS bundle cache)", "second"):
        load = os.getloadavg()[0]
        wall, cpu = timed_report(runs, out, cache)
        size_mb = out.stat().st_size / 1e6
        rows.append(f"| {attempt} | {size_mb:.2f} MB | {wall:.1f} s | {cpu:.1f} s | {load:.1f} |")
    print(f"{ns.runs} runs x {ns.seconds} one-second intervals, {os.cpu_count()} CPUs\n")
    print("| report | HTML size | wall time | CPU time | load average before |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    shutil.rmtree(cache, ignore_errors=True)
    print(f"\nreport: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
