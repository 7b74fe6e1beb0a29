"""`nice -n -5 oltplab ...` reaches the managed server's session and oltplab's own (autogroup
scheduling shares CPU between sessions first: without this the nice only counts inside a
session). A child process in a session of its own, niced, starts a real MariaDB."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oltplab import priority

NICE = -5
_CHILD = """
import json, os, sys
from pathlib import Path
from oltplab import priority
from oltplab.servers import MariaDBServer, ServerSettings

out = {"own_before": priority.autogroup_nice()}
with priority.own_session():
    out["own_inside"] = priority.autogroup_nice()
    settings = ServerSettings(variables={"innodb_buffer_pool_size": "32M"})
    with MariaDBServer(Path(sys.argv[1]), settings) as server:
        pid = server.pid()
        out["server_group"] = priority.autogroup_nice(pid)
        out["server_nice"] = os.getpriority(os.PRIO_PROCESS, pid)
        out["server_session"] = os.getsid(pid) != os.getsid(0)
out["own_after"] = priority.autogroup_nice()
print(json.dumps(out))
"""

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not priority.autogroups_enabled(),
    reason="needs root (a negative nice) and a kernel with autogroup scheduling",
)


def test_a_niced_oltplab_gives_its_nice_to_the_servers_session_and_its_own(
    server_dir: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(server_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        start_new_session=True,  # an autogroup of its own: the test runner's stays as it is
        preexec_fn=lambda: os.nice(NICE),
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["server_session"]  # the server runs in a session (an autogroup) of its own
    assert found["server_nice"] == NICE  # inherited through fork, as always
    assert found["server_group"] == NICE  # and its session's group has it too
    assert (found["own_before"], found["own_inside"], found["own_after"]) == (0, NICE, 0)


def test_a_process_at_nice_0_changes_no_group() -> None:
    before = priority.autogroup_nice()
    with priority.own_session():
        assert priority.autogroup_nice() == before
