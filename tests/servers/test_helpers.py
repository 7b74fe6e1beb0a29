"""The servers' helpers that need no server: ports, processes, logs, accounts, programs."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oltplab.exceptions import ServerError
from oltplab.servers.binaries import find_program
from oltplab.servers.net import free_loopback_port, listening_addresses
from oltplab.servers.osuser import OsUser, check_reachable
from oltplab.servers.process import log_excerpt, pid_alive


def test_free_loopback_port_is_bindable_and_seen_listening() -> None:
    port = free_loopback_port()
    assert listening_addresses(port) == set()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        s.listen()
        assert listening_addresses(port) == {"127.0.0.1"}


def test_listening_addresses_tells_wildcard_from_loopback() -> None:
    with socket.socket(socket.AF_INET6) as s:
        s.bind(("::", 0))
        s.listen()
        assert listening_addresses(s.getsockname()[1]) == {"::"}


def test_a_zombie_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    assert pid_alive(os.getpid())
    deadline = time.monotonic() + 30
    while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the child never exited"
        time.sleep(0.01)  # exited, not reaped yet
    assert not pid_alive(child.pid)
    child.wait()
    assert not pid_alive(child.pid)


@pytest.mark.parametrize(
    ("log", "excerpt"),
    [
        ("a [Note] x\nb [ERROR] unknown variable\nc [ERROR] Aborting\nd [Note] y\n",
         "b [ERROR] unknown variable\nc [ERROR] Aborting"),
        ("LOG:  starting\nLOG:  unrecognized parameter\nFATAL:  contains errors\n",
         "LOG:  unrecognized parameter\nFATAL:  contains errors"),
        ("1\n2\n3\n4\n5\n6\n7\n", "2\n3\n4\n5\n6\n7"),
    ],
)  # fmt: skip
def test_log_excerpt_quotes_errors_and_their_cause(tmp_path: Path, log: str, excerpt: str) -> None:
    (tmp_path / "server.log").write_text(log)
    assert log_excerpt(tmp_path / "server.log") == excerpt


def test_log_excerpt_reads_from_an_offset(tmp_path: Path) -> None:
    (tmp_path / "server.log").write_text("old [ERROR] before\nnew line\n")
    assert log_excerpt(tmp_path / "server.log", since_byte=19) == "new line"


def test_an_unreachable_directory_is_named_with_the_fix(server_dir: Path) -> None:
    closed = server_dir.parent / "closed"  # server_dir's parent is open to all
    (closed / "inner").mkdir(parents=True)
    closed.chmod(0o700)
    stranger = OsUser("nobody", 65534, 65534)  # neither owner nor in the group
    with pytest.raises(ServerError, match=rf"'nobody', which cannot enter {closed} \(mode 0700\)"):
        check_reachable(closed / "inner" / "data", stranger)
    closed.chmod(0o711)
    check_reachable(closed / "inner" / "data", stranger)


def test_a_missing_program_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(ServerError, match=r"not found in .*scripts/install-test-deps\.sh"):
        find_program(["no-such-mariadbd"], bin_dir=tmp_path, what="MariaDB's server")
