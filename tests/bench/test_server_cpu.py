"""bench/_common.py's server CPU: a live child counts to the nanosecond, as the scheduler counted
it. /proc/PID/stat's times come in 10-ms ticks, truncated per process: summed over 4,096
PostgreSQL backends that had run a few milliseconds each, that lost most of their CPU."""

import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
from _common import children, process_run_s, server_cpu_s  # noqa: E402

# Spins for 6 ms, says how much CPU it has used, then waits until its stdin closes.
CHILD = (
    "import sys, time\n"
    "start = time.process_time()\n"
    "while time.process_time() - start < 0.006: pass\n"
    "print(time.process_time(), flush=True)\n"
    "sys.stdin.read()\n"
)
# Starts the child, passes its line on, and waits for its own stdin to close.
PARENT = (
    "import subprocess, sys\n"
    f"child = subprocess.Popen([sys.executable, '-c', {CHILD!r}], stdin=subprocess.PIPE)\n"
    "sys.stdin.read()\n"
    "child.stdin.close()\n"
    "child.wait()\n"
)


def test_a_live_child_counts_to_the_nanosecond() -> None:
    argv = [sys.executable, "-c", PARENT]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as parent:
        assert parent.stdin is not None
        assert parent.stdout is not None
        try:
            used_s = float(parent.stdout.readline())  # the child's own count, as it printed
            time.sleep(0.05)  # it now waits in read(2), using nothing
            (child,) = children(parent.pid)
            run_s = process_run_s(child)
            assert run_s is not None
            assert abs(run_s - used_s) < 0.005, (run_s, used_s)
            # Nanoseconds, not whole 10-ms ticks (a multiple by chance: 1 in 10 million).
            assert round(run_s * 1e9) % 10_000_000 != 0, run_s
            total_s = server_cpu_s(parent.pid)
            assert total_s is not None
            assert total_s >= run_s
        finally:
            parent.stdin.close()
            parent.wait(timeout=10)
