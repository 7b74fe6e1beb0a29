"""Facts about the machine that generated the load, for run.json."""

import os
import platform
import socket
from pathlib import Path

from oltplab._types import Json


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX, or not reported
        return None


def _os_name() -> str:
    try:
        release = platform.freedesktop_os_release()
    except OSError:
        return platform.system()
    return release.get("PRETTY_NAME") or platform.system()


def host_facts() -> Json:
    return {
        "hostname": socket.gethostname(),
        "os": _os_name(),
        "kernel": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "cpu_model": _cpu_model(),
        "cpu_cores": os.cpu_count(),
        "memory_bytes": _memory_bytes(),
        "python_version": platform.python_version(),
    }
