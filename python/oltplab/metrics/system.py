"""system.csv: CPU, scheduler, memory, block devices and loopback traffic from /proc.

Counters become rates over the time between two samples; gauges are read as they are.
"""

import os
import time
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")
_SECTOR_BYTES = 512  # /proc/diskstats counts 512-byte sectors whatever the device's size
_MB = 1e6


@dataclass(frozen=True)
class CpuTimes:
    user: int
    system: int
    iowait: int
    idle: int
    total: int

    def busy_pct_since(self, before: "CpuTimes") -> float:
        """Share of all CPUs doing anything but idling or waiting for I/O."""
        total = self.total - before.total
        idle = (self.idle - before.idle) + (self.iowait - before.iowait)
        return 100.0 * (total - idle) / total if total > 0 else 0.0


@dataclass(frozen=True)
class SystemSnapshot:
    at_s: float  # monotonic
    cpu: CpuTimes
    ctxt: int
    procs_running: int
    procs_blocked: int
    mem_used_bytes: int
    mem_cached_bytes: int
    disks: dict[str, tuple[int, int, int, int]]  # reads, read sectors, writes, write sectors
    lo_bytes: int  # loopback bytes received + sent


def read_cpu_times() -> CpuTimes:
    with (_PROC / "stat").open(encoding="ascii") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return CpuTimes(
        user=user + nice,
        system=system + irq + softirq,
        iowait=iowait,
        idle=idle,
        total=user + nice + system + idle + iowait + irq + softirq + steal,
    )


def host_busy_pct(duration_s: float = 1.0) -> float:
    """CPU busy on the whole host over `duration_s` while this process sleeps: what other
    processes use (a lab checks that the host is quiet before each cell)."""
    before = read_cpu_times()
    time.sleep(duration_s)
    return read_cpu_times().busy_pct_since(before)


def _stat_counters() -> dict[str, int]:
    found = {}
    for line in (_PROC / "stat").read_text(encoding="ascii").splitlines():
        key, _, value = line.partition(" ")
        if key in ("ctxt", "procs_running", "procs_blocked"):
            found[key] = int(value)
    return found


def _meminfo() -> tuple[int, int]:
    info = {}
    for line in (_PROC / "meminfo").read_text(encoding="ascii").splitlines():
        key, _, rest = line.partition(":")
        info[key] = int(rest.split()[0]) * 1024
    cached = info.get("Cached", 0) + info.get("Buffers", 0)
    used = info.get("MemTotal", 0) - info.get("MemFree", 0) - cached
    return used, cached


def _is_whole_device(name: str) -> bool:
    # Whole disks only: partitions double-count; loop/ram devices are noise.
    if name.startswith(("loop", "ram", "dm-", "zram")):
        return False
    return Path(f"/sys/block/{name}").exists()


def _diskstats() -> dict[str, tuple[int, int, int, int]]:
    disks = {}
    for line in (_PROC / "diskstats").read_text(encoding="ascii").splitlines():
        parts = line.split()
        if len(parts) >= 10 and _is_whole_device(parts[2]):
            disks[parts[2]] = (int(parts[3]), int(parts[5]), int(parts[7]), int(parts[9]))
    return disks


def _loopback_bytes() -> int:
    for line in (_PROC / "net" / "dev").read_text(encoding="ascii").splitlines():
        name, _, rest = line.partition(":")
        if name.strip() == "lo":
            values = rest.split()
            return int(values[0]) + int(values[8])
    return 0


def snapshot() -> SystemSnapshot:
    counters = _stat_counters()
    used, cached = _meminfo()
    return SystemSnapshot(
        at_s=time.monotonic(),
        cpu=read_cpu_times(),
        ctxt=counters.get("ctxt", 0),
        procs_running=counters.get("procs_running", 0),
        procs_blocked=counters.get("procs_blocked", 0),
        mem_used_bytes=used,
        mem_cached_bytes=cached,
        disks=_diskstats(),
        lo_bytes=_loopback_bytes(),
    )


def columns(first: SystemSnapshot) -> list[str]:
    """system.csv's columns (after t_s), fixed by the devices present at the first sample."""
    base = [
        "cpu_user_pct",
        "cpu_sys_pct",
        "cpu_iowait_pct",
        "cpu_idle_pct",
        "ctx_switches_per_s",
        "run_queue",
        "blocked",
        "mem_used_bytes",
        "mem_cached_bytes",
        "lo_bytes_per_s",
    ]
    for disk in sorted(first.disks):
        base += [
            f"{disk}_reads_per_s",
            f"{disk}_writes_per_s",
            f"{disk}_read_mb_per_s",
            f"{disk}_write_mb_per_s",
        ]
    return base


def row(before: SystemSnapshot, now: SystemSnapshot) -> dict[str, float]:
    elapsed_s = max(now.at_s - before.at_s, 1e-9)
    total = max(now.cpu.total - before.cpu.total, 1)

    def pct(a: int, b: int) -> float:
        return 100.0 * (a - b) / total

    values = {
        "cpu_user_pct": pct(now.cpu.user, before.cpu.user),
        "cpu_sys_pct": pct(now.cpu.system, before.cpu.system),
        "cpu_iowait_pct": pct(now.cpu.iowait, before.cpu.iowait),
        "cpu_idle_pct": pct(now.cpu.idle, before.cpu.idle),
        "ctx_switches_per_s": (now.ctxt - before.ctxt) / elapsed_s,
        "run_queue": float(now.procs_running),
        "blocked": float(now.procs_blocked),
        "mem_used_bytes": float(now.mem_used_bytes),
        "mem_cached_bytes": float(now.mem_cached_bytes),
        "lo_bytes_per_s": (now.lo_bytes - before.lo_bytes) / elapsed_s,
    }
    for disk, (reads, rsect, writes, wsect) in now.disks.items():
        b = before.disks.get(disk, (reads, rsect, writes, wsect))
        values |= {
            f"{disk}_reads_per_s": (reads - b[0]) / elapsed_s,
            f"{disk}_writes_per_s": (writes - b[2]) / elapsed_s,
            f"{disk}_read_mb_per_s": (rsect - b[1]) * _SECTOR_BYTES / _MB / elapsed_s,
            f"{disk}_write_mb_per_s": (wsect - b[3]) * _SECTOR_BYTES / _MB / elapsed_s,
        }
    return values


def cpu_count() -> int:
    return os.cpu_count() or 1
