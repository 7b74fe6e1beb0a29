"""Watching a client process from outside: its CPU at the lines that bound the load, its
peak memory and its threads, while its output is read as it comes."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from _common import Sampler, cpu_times, cpu_user_kernel_s, server_cpu_s


@dataclass
class Observed:
    """What watching a client process from outside gives."""

    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    started_s: float | None  # process start to "Threads started!"
    cpu_at_started: tuple[float, float] | None  # user, kernel
    cpu_at_report: tuple[float, float] | None
    server_setup_cpu_s: float | None  # the server's CPU from the start to "Threads started!"
    report_s: float | None  # process start to the final report
    busy_load_pct: float | None
    cpu_total_s: float
    peak_rss_kb: int | None
    threads: int


def watch(argv: Sequence[str], timeout_s: float, server_pid: int | None = None) -> Observed:
    """Runs `argv`, reading its output as it comes: the CPU of the process is read from /proc
    the moment it prints "Threads started!" and the moment its final report begins ("SQL
    statistics:", both tools), so the CPU in between is the load's alone. With `server_pid`,
    the server's CPU until "Threads started!" too: its share of the set-up."""
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    server0 = None if server_pid is None else server_cpu_s(server_pid)
    t0 = time.monotonic()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    sampler = Sampler(proc.pid, server=None)
    sampler.start()
    killer = threading.Timer(timeout_s, proc.kill)
    killer.start()
    err: list[str] = []
    drain = threading.Thread(target=lambda: err.append(proc.stderr.read() if proc.stderr else ""))
    drain.start()
    started = cpu_started = report = cpu_report = server_setup = None
    host0: tuple[int, int] | None = None
    busy = None
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        now = time.monotonic()
        lines.append(line)
        if started is None and line.startswith("Threads started!"):
            started, cpu_started, host0 = now - t0, cpu_user_kernel_s(proc.pid), cpu_times()
            server1 = None if server_pid is None else server_cpu_s(server_pid)
            if server0 is not None and server1 is not None:
                server_setup = server1 - server0
        elif report is None and line.startswith("SQL statistics:"):
            report, cpu_report = now - t0, cpu_user_kernel_s(proc.pid)
            if host0 is not None:
                busy1, total1 = cpu_times()
                busy = 100.0 * (busy1 - host0[0]) / max(total1 - host0[1], 1)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    killer.cancel()
    drain.join()
    sampler.done.set()
    sampler.join()
    return Observed(
        returncode=proc.returncode, stdout="".join(lines), stderr="".join(err), wall_s=wall,
        started_s=started, cpu_at_started=cpu_started, cpu_at_report=cpu_report,
        server_setup_cpu_s=server_setup,
        report_s=report, busy_load_pct=busy, cpu_total_s=usage.ru_utime + usage.ru_stime,
        peak_rss_kb=max((s.hwm_kb for s in sampler.samples), default=None),
        threads=max((s.threads for s in sampler.samples), default=0),
    )  # fmt: skip


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""
