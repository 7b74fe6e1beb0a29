"""server.csv: the server's own counters, read once per interval on a connection of its own.

The connection is the server's command-line client (mariadb, psql) kept open for the whole
run, reading one query per interval from a pipe: no Python database driver is needed, no
measured connection is ever used, and the server sees one short query per interval.
"""

import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from oltplab.exceptions import ConfigError

_END = "__oltplab_end__"
_READ_TIMEOUT_S = 10.0

# MariaDB: SHOW GLOBAL STATUS name -> (server.csv column, is a counter to turn into a rate).
MARIADB_STATUS = {
    "Innodb_checkpoint_age": ("innodb_checkpoint_age_bytes", False),
    "Innodb_buffer_pool_pages_dirty": ("innodb_pages_dirty", False),
    "Innodb_buffer_pool_pages_flushed": ("innodb_pages_flushed_per_s", True),
    "Innodb_os_log_written": ("innodb_log_written_bytes_per_s", True),
    "Innodb_data_written": ("innodb_data_written_bytes_per_s", True),
    "Innodb_data_reads": ("innodb_data_reads_per_s", True),
    "Innodb_data_fsyncs": ("innodb_data_fsyncs_per_s", True),
    "Innodb_buffer_pool_reads": ("innodb_buffer_pool_disk_reads_per_s", True),
    "Innodb_history_list_length": ("innodb_history_list_length", False),
    "Innodb_row_lock_waits": ("innodb_row_lock_waits_per_s", True),
    "Threads_running": ("threads_running", False),
    "Threads_connected": ("threads_connected", False),
    "Threadpool_threads": ("threadpool_threads", False),
    "Threadpool_idle_threads": ("threadpool_idle_threads", False),
    "Questions": ("questions_per_s", True),
}

# PostgreSQL: one row of named values; (column, is a counter).
POSTGRES_COLUMNS = (
    ("checkpoints_per_s", True),
    ("checkpoint_buffers_written_per_s", True),
    ("bgwriter_buffers_clean_per_s", True),
    ("wal_bytes_per_s", True),
    ("commits_per_s", True),
    ("rollbacks_per_s", True),
    ("blks_read_per_s", True),
    ("blks_hit_per_s", True),
    ("deadlocks_per_s", True),
    ("active_backends", False),
    ("waiting_backends", False),
)
_PG_DB = (
    "(SELECT sum(xact_commit), sum(xact_rollback), sum(blks_read), sum(blks_hit), "
    "sum(deadlocks) FROM pg_stat_database) d"
)
_PG_ACTIVITY = (
    "(SELECT count(*) FILTER (WHERE state = 'active'), "
    "count(*) FILTER (WHERE wait_event_type = 'Lock') FROM pg_stat_activity "
    "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()) a"
)
# PostgreSQL 17 moved the checkpoint counters to pg_stat_checkpointer.
_PG15_QUERY = (
    "SELECT b.checkpoints_timed + b.checkpoints_req, b.buffers_checkpoint, b.buffers_clean, "
    f"w.wal_bytes, d.*, a.* FROM pg_stat_bgwriter b, pg_stat_wal w, {_PG_DB}, {_PG_ACTIVITY};"
)
_PG17_QUERY = (
    "SELECT c.num_timed + c.num_requested, c.buffers_written, b.buffers_clean, w.wal_bytes, "
    f"d.*, a.* FROM pg_stat_checkpointer c, pg_stat_bgwriter b, pg_stat_wal w, {_PG_DB}, "
    f"{_PG_ACTIVITY};"
)


@dataclass
class PipeClient:
    """A command-line client reading statements from a pipe: one connection kept open, so a
    query costs neither a process nor a connection (both slow on a loaded host)."""

    argv: list[str]
    env: dict[str, str]
    proc: subprocess.Popen[str] | None = field(default=None)

    def start(self) -> None:
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            env=self.env,
        )

    def lines(self, sql: str) -> list[str]:
        """The output lines of `sql`; [] when the client died (the sample is then empty)."""
        proc = self.proc
        if proc is None or proc.poll() is not None or proc.stdin is None or proc.stdout is None:
            return []
        try:
            proc.stdin.write(f"{sql}\nSELECT '{_END}';\n")
            proc.stdin.flush()
        except OSError:
            return []
        out: list[str] = []
        for line in proc.stdout:
            line = line.rstrip("\n")
            if line == _END:
                return out
            out.append(line)
        return []

    def cpu_s(self) -> float:
        """CPU seconds the client process has used so far; 0 once gone. /proc/PID/schedstat
        counts nanoseconds (the few ms a run's samples cost vanish in /proc/PID/stat's 10 ms
        ticks); its utime + stime is the fallback."""
        if self.proc is None:
            return 0.0
        proc_dir = Path(f"/proc/{self.proc.pid}")
        try:
            return int((proc_dir / "schedstat").read_text().split()[0]) / 1e9
        except (OSError, IndexError, ValueError):
            pass
        try:
            fields = (proc_dir / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return 0.0
        # utime and stime are fields 14 and 15 of /proc/PID/stat (1-based; fields[0] is 3).
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=_READ_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self.proc = None


def _program(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise ConfigError(
        f"--metrics server needs the {names[0]} command-line client; install it "
        f"(Debian: mariadb-client or postgresql-client)"
    )


def _env(extra: dict[str, str]) -> dict[str, str]:
    kept = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    return kept | {"LC_ALL": "C.UTF-8"} | extra


def pipe_client(url: str) -> "PipeClient":
    """A command-line client (not started) for the server at `url`, connected to its database."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    user, password = unquote(parts.username or ""), unquote(parts.password or "")
    database = parts.path.lstrip("/")
    if parts.scheme in ("mysql", "mariadb"):
        argv = [_program("mariadb", "mysql"), "--batch", "--skip-column-names", "--unbuffered"]
        if "socket" in query:
            argv.append(f"--socket={query['socket'][0]}")
        else:
            argv += ["--protocol=TCP", "-h", parts.hostname or "127.0.0.1"]
            argv += ["-P", str(parts.port or 3306)]
        argv += ["-u", user, database]
        return PipeClient(argv, _env({"MYSQL_PWD": password}))
    if parts.scheme in ("postgresql", "postgres"):
        host = query.get("host", [parts.hostname or "127.0.0.1"])[0]
        conninfo = f"host={host} port={parts.port or 5432} user={user} dbname={database}"
        argv = [_program("psql"), "-X", "-q", "-A", "-t", "-F", "\t", conninfo]
        return PipeClient(argv, _env({"PGPASSWORD": password, "PGAPPNAME": "oltplab"}))
    raise ConfigError(
        f"--metrics server reads MariaDB/MySQL and PostgreSQL, not {parts.scheme}; "
        "leave it out for this database"
    )


class ServerProbe:
    """Reads the server's counters; `columns` and `row` turn two samples into a CSV row."""

    def __init__(self, url: str) -> None:
        self.scheme = urlsplit(url).scheme
        self._client = pipe_client(url)
        self._pg_query = _PG15_QUERY

    def start(self) -> None:
        self._client.start()
        if self.scheme.startswith("postgres"):
            version = self._client.lines("SHOW server_version_num;")
            if version and version[0].strip().isdigit() and int(version[0]) >= 170000:
                self._pg_query = _PG17_QUERY

    def close(self) -> float:
        """Closes the connection; returns the CPU seconds its client process used (a child of
        ours, so outside the engine's client_cpu_s: counted as sampling's cost)."""
        cpu_s = self._client.cpu_s()  # read before it exits: /proc forgets it then
        self._client.close()
        return cpu_s

    def columns(self) -> list[tuple[str, bool]]:
        if self.scheme.startswith("postgres"):
            return list(POSTGRES_COLUMNS)
        return list(MARIADB_STATUS.values())

    def sample(self) -> tuple[float, dict[str, float]]:
        """(monotonic time, raw values by column); missing values are absent."""
        at_s = time.monotonic()
        values: dict[str, float] = {}
        if self.scheme.startswith("postgres"):
            lines = self._client.lines(self._pg_query)
            if lines:
                cells = lines[0].split("\t")
                for (name, _), cell in zip(POSTGRES_COLUMNS, cells, strict=False):
                    if cell.strip():
                        values[name] = float(cell)
        else:
            for line in self._client.lines("SHOW GLOBAL STATUS;"):
                name, _, value = line.partition("\t")
                column = MARIADB_STATUS.get(name)
                if column is not None:
                    try:
                        values[column[0]] = float(value)
                    except ValueError:
                        continue
        return at_s, values


def server_row(
    columns: list[tuple[str, bool]],
    before: tuple[float, dict[str, float]],
    now: tuple[float, dict[str, float]],
) -> dict[str, float | None]:
    """Counters as per-second rates between two samples, gauges as read now."""
    elapsed_s = max(now[0] - before[0], 1e-9)
    row: dict[str, float | None] = {}
    for name, counter in columns:
        value = now[1].get(name)
        if value is None:
            row[name] = None
        elif counter:
            previous = before[1].get(name)
            row[name] = None if previous is None else (value - previous) / elapsed_s
        else:
            row[name] = value
    return row
