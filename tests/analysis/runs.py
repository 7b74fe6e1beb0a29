"""Real runs for the run-level analysis tests: embedded SQLite, oltp_point_select, made once.

Every run is short (2-6 s), so the set takes about 40 s. The fixed-rate runs use uniform
arrivals: with Poisson arrivals each 6-s run's mean carries ~2% of counting noise, and with
2 runs a side Welch's t has 1-2 degrees of freedom (t up to 12.7), so a true 25% difference
comes out non-significant in about 1 module run in 6 (simulated). Uniform arrivals leave
the engine's and the machine's own run-to-run spread, which is what the test is about.
"""

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import oltplab

WORKLOAD = "oltp_point_select"
THREADS = 4
RATE_TIME_S = 6
# 0.25 s intervals give 24 per 6-s run: 4 MSER-5 batches, the least it can judge (§1.2).
INTERVAL_S = 0.25
STEP_THREADS = (1, 2, 4)
STEP_TIME_S = 2
WARMUP_S = 2


@dataclass(frozen=True)
class RealRuns:
    root: Path
    rate400: tuple[Path, Path]
    rate500: tuple[Path, Path]
    warmed: Path  # closed loop, --warmup-time 2
    steps: Path  # --thread-steps 1,2,4 --step-time 2
    by_threads: tuple[Path, Path, Path]  # closed loop at 1, 2 and 4 threads


def make_runs(root: Path) -> RealRuns:
    db = f"sqlite://{root / 'sb.db'}"
    oltplab.prepare(WORKLOAD, db, table_size=1000)

    def run(name: str, **options: Any) -> Path:
        options.setdefault("report_interval", INTERVAL_S)
        oltplab.run(WORKLOAD, db, out=root / name, **options)
        return root / name

    fixed = {"threads": THREADS, "time": RATE_TIME_S, "rate_arrivals": "uniform"}
    # Interleaved (ABAB), as the comparison's own advice says.
    a1 = run("rate400-1", rate=400, rand_seed=11, **fixed)
    b1 = run("rate500-1", rate=500, rand_seed=12, **fixed)
    a2 = run("rate400-2", rate=400, rand_seed=13, **fixed)
    b2 = run("rate500-2", rate=500, rand_seed=14, **fixed)
    warmed = run("warmed", threads=2, warmup_time=WARMUP_S, time=3, rand_seed=15)
    steps = run(
        "steps",
        thread_steps=",".join(map(str, STEP_THREADS)),
        step_time=STEP_TIME_S,
        rand_seed=16,
    )
    singles = tuple(
        run(f"threads{n}", threads=n, time=STEP_TIME_S, rand_seed=20 + n) for n in STEP_THREADS
    )
    assert len(singles) == 3
    return RealRuns(root, (a1, a2), (b1, b2), warmed, steps, singles)


def edited_copy(run: Path, dest: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of a run directory whose run.json `edit` changed in place."""
    shutil.copytree(run, dest)
    manifest = json.loads((dest / "run.json").read_text())
    edit(manifest)
    (dest / "run.json").write_text(json.dumps(manifest, indent=2))
    return dest
