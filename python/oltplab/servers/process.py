"""Running a server's programs: one-shot commands, the long-lived daemon, and watching its pid."""

import os
import re
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from oltplab.exceptions import ServerError
from oltplab.servers.osuser import OsUser

Popen = subprocess.Popen[bytes]

_POLL_S = 0.05
_KILL_WAIT_S = 10.0
# MariaDB's `[ERROR]`; PostgreSQL's `ERROR:`, `FATAL:`, `PANIC:`.
_ERROR_MARK = re.compile(r"\[ERROR\]|\b(ERROR|FATAL|PANIC):")
# Only these reach the server's programs: a stray PGHOST, PGOPTIONS or MYSQL_HOST in the
# caller's environment must not redirect or reconfigure them.
_KEPT_ENV = ("PATH", "TZ", "TMPDIR")


def clean_env(user: OsUser, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in _KEPT_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    # A fixed locale: the programs' messages stay in English, as our error parsing expects.
    env |= {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "USER": user.name, "LOGNAME": user.name}
    return env | dict(extra or {})


def run(
    argv: Sequence[str | Path],
    *,
    user: OsUser,
    what: str,
    timeout_s: float,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    log_file: Path | None = None,
) -> str:
    """Runs a program as `user` and returns its stdout; fails with its output when it fails.
    With `log_file`, the program's output is appended there too."""
    try:
        done = subprocess.run(
            [str(a) for a in argv],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
            check=False,
            cwd=cwd,
            env=dict(env) if env is not None else clean_env(user),
            stdin=subprocess.DEVNULL,
            user=None if user.is_current else user.uid,
            group=None if user.is_current else user.gid,
            extra_groups=None if user.is_current else [],
        )
    except subprocess.TimeoutExpired:
        raise ServerError(f"{what} did not finish within {timeout_s:g} s") from None
    except OSError as e:
        raise ServerError(f"{what} could not run: {e}") from e
    if log_file is not None:
        with log_file.open("a", encoding="utf-8") as log:
            log.write(done.stdout + done.stderr)
    if done.returncode != 0:
        output = (done.stderr.strip() or done.stdout.strip())[-2000:]
        raise ServerError(f"{what} failed (exit code {done.returncode}): {output}")
    return done.stdout


def spawn(argv: Sequence[str | Path], *, user: OsUser, log_file: Path, cwd: Path) -> Popen:
    """Starts a daemon in its own session (Ctrl-C at the terminal must not reach it), its
    stdout and stderr appended to `log_file` so that even early start-up errors land there."""
    with log_file.open("ab") as log:
        return subprocess.Popen(
            [str(a) for a in argv],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=clean_env(user),
            start_new_session=True,
            user=None if user.is_current else user.uid,
            group=None if user.is_current else user.gid,
            extra_groups=None if user.is_current else [],
        )


def read_pid_file(path: Path) -> int | None:
    try:
        first = path.read_text().split("\n", 1)[0].strip()
    except OSError:
        return None
    return int(first) if first.isdigit() else None


def pid_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (exited, not yet reaped) counts as gone."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state not in ("Z", "X"):
            return True
        # A process whose main thread has exited shows as a zombie while its other
        # threads still run (a multi-threaded server shutting down).
        return len(list(Path(f"/proc/{pid}/task").iterdir())) > 1
    except (OSError, IndexError):
        return False


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return raw.decode(errors="replace").split("\0")


def kill_group(pid: int) -> None:
    """SIGKILL to `pid` and, when it leads a process group (a daemon in its own session),
    to the whole group: PostgreSQL's backends must not outlive a crashed postmaster."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    wait_gone(pid, _KILL_WAIT_S)


def wait_gone(pid: int, timeout_s: float) -> bool:
    """Waits for `pid` to exit; False if it still runs after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while pid_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_S)
    return True


def log_excerpt(log_file: Path, since_byte: int = 0, lines: int = 6) -> str:
    """What a server's log says since `since_byte`, for an error message: its error lines
    (with PostgreSQL's LOG line before the first, which holds the cause of a FATAL), else its
    last lines."""
    try:
        with log_file.open("rb") as f:
            f.seek(since_byte)
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    all_lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    errors = [i for i, line in enumerate(all_lines) if _ERROR_MARK.search(line)]
    if not errors:
        return "\n".join(all_lines[-lines:])
    first = errors[0]
    context = [first - 1] if first > 0 and "LOG:" in all_lines[first - 1] else []
    return "\n".join(all_lines[i] for i in [*context, *errors][:lines])


def log_size(log_file: Path) -> int:
    try:
        return log_file.stat().st_size
    except OSError:
        return 0
