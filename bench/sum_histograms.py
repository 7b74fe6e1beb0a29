"""What adding a run's interval histograms costs the analysis (docs/performance-engine.md): a
lab of RUNS runs x INTERVALS intervals, each interval one V2 compressed histogram of VALUES
latencies (log-uniform 100 µs .. 100 ms, made by the hdrhistogram package), added per run the
way analysis/latency.py does: the engine's sum (`engine.merge_histograms`, decoded once by
hdrh), against hdrh's own decode + add. Reports seconds of CPU for the whole lab.

    .venv/bin/python bench/sum_histograms.py                       # 50 runs x 600 intervals
    .venv/bin/python bench/sum_histograms.py --runs 5 --values 10000
"""

import argparse
import random
import time
from collections.abc import Callable

from hdrh.histogram import HdrHistogram

from oltplab import engine
from oltplab.rundir.hlog import HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS


def histogram(values: int, rng: random.Random) -> str:
    h = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    for _ in range(values):
        h.record_value(int(10 ** rng.uniform(5, 8)))
    return str(h.encode().decode())


def by_engine(encoded: list[str]) -> HdrHistogram:
    return HdrHistogram.decode(engine.merge_histograms(encoded, [])["encoded"])


def by_hdrh(encoded: list[str]) -> HdrHistogram:
    total = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    for text in encoded:
        total.add(HdrHistogram.decode(text))
    return total


def lab_cpu_s(add: Callable[[list[str]], HdrHistogram], runs: list[list[str]]) -> float:
    began = time.process_time()
    for run in runs:
        add(run)
    return time.process_time() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--intervals", type=int, default=600)
    parser.add_argument("--values", type=int, default=1000, help="latencies per histogram")
    args = parser.parse_args()
    rng = random.Random(1)
    pool = [histogram(args.values, rng) for _ in range(32)]
    runs = [[rng.choice(pool) for _ in range(args.intervals)] for _ in range(args.runs)]
    first = runs[0]
    ours, theirs = by_engine(first), by_hdrh(first)
    assert ours.get_total_count() == theirs.get_total_count()
    assert ours.get_max_value() == theirs.get_max_value()
    print(f"{args.runs} runs x {args.intervals} intervals, {args.values} values per histogram")
    for name, add in (("engine (merge_histograms)", by_engine), ("hdrh decode + add", by_hdrh)):
        seconds = lab_cpu_s(add, runs)
        print(f"{name}: {seconds:.2f} s CPU, {1000 * seconds / args.runs:.1f} ms per run")


if __name__ == "__main__":
    main()
