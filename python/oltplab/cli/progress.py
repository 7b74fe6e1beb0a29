"""A live status line on stderr.

On a terminal it is redrawn in place (carriage return, clear to end of line) at most a
few times a second, and cleared before other output is printed. On a pipe or in CI it
prints a plain line now and then instead (never a carriage return), so long prepares
still show signs of life in logs.
"""

import time
from collections.abc import Callable
from typing import TextIO

from oltplab.rundir.intervals import IntervalRow

_CLEAR = "\r\x1b[K"


class StatusLine:
    def __init__(
        self,
        stream: TextIO,
        *,
        is_tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_redraws_per_s: float = 4.0,
        plain_every_s: float = 10.0,
    ) -> None:
        self._stream = stream
        self._tty = stream.isatty() if is_tty is None else is_tty
        self._clock = clock
        self._min_gap_s = 1.0 / max_redraws_per_s if self._tty else plain_every_s
        self._last_s = -float("inf") if self._tty else clock()
        self._shown = False

    @property
    def is_tty(self) -> bool:
        return self._tty

    def show(self, text: str) -> None:
        """Draws `text`, unless the last draw was too recent."""
        now = self._clock()
        if now - self._last_s < self._min_gap_s:
            return
        self._last_s = now
        if self._tty:
            self._stream.write(_CLEAR + text)
            self._shown = True
        else:
            self._stream.write(text + "\n")
        self._stream.flush()

    def clear(self) -> None:
        """Removes the line (before other output, and at the end)."""
        if self._shown:
            self._stream.write(_CLEAR)
            self._stream.flush()
            self._shown = False


def run_status(row: IntervalRow, *, time_limit_s: float, errors_total: int) -> str:
    elapsed = f"{row.t_s:.1f}s/{time_limit_s:g}s" if time_limit_s > 0 else f"{row.t_s:.1f}s"
    if row.phase == "warmup":
        elapsed += " warm-up"
    elif row.step is not None:
        elapsed += f" step {row.step}"
    p95 = "-" if row.lat_p95_ms is None else f"{row.lat_p95_ms:.2f} ms"
    return f"running {elapsed}  {row.tps:.1f} tps  p95 {p95}  errors {errors_total}"


def bar(fraction: float, width: int = 30) -> str:
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "[" + "#" * filled + "." * (width - filled) + "]"


def prepare_status(rows_by_table: dict[int, tuple[int, int]]) -> str:
    """`rows_by_table`: table number -> (rows loaded, rows to load)."""
    done = sum(d for d, _ in rows_by_table.values())
    total = sum(t for _, t in rows_by_table.values())
    tables_done = sum(1 for d, t in rows_by_table.values() if d >= t)
    fraction = done / total if total else 1.0
    return (
        f"loading {bar(fraction)} {fraction:4.0%}  {done}/{total} rows  "
        f"{tables_done}/{len(rows_by_table)} tables done"
    )
