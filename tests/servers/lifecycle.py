"""The life of a server of a test's own after its first start, the same for every engine:
stopped, other settings for the same directory, a restart that keeps the URL, a crash and its
recovery, another process finding the server from its directory alone, and a bad setting that
fails the start, naming the log file."""

from collections.abc import Callable

import pytest

from oltplab.exceptions import ServerError
from oltplab.servers import ManagedServer, ServerSettings, open_server
from oltplab.servers.process import pid_alive
from tests.servers.clients import processes_under


def check_life(
    started: ManagedServer,
    again: Callable[[ServerSettings], ManagedServer],
    small: ServerSettings,
    answers: Callable[[str], bool],
    bad: ServerSettings,
    bad_message: str,
) -> None:
    """`started` runs; `again(settings)` makes a server for the same directory; `answers(url)`
    says whether a client gets an answer there; starting with `bad` must fail with
    `bad_message`. Every server this starts is stopped, also when a check fails."""
    server_dir, url, server = started.base_dir, started.url, started
    try:
        server.stop()
        assert not server.is_running()
        assert processes_under(server_dir) == []

        # Other settings for the same directory (a smaller server: quicker restarts below).
        server = again(small)
        assert not server.socket_path.exists()
        server.stop()  # stopping a stopped server is a no-op

        server.start()  # a restart keeps the port and password: the URL stays valid
        assert server.url == url
        pid = server.pid()
        assert pid is not None
        server.kill()  # a crash
        assert not pid_alive(pid)
        assert not server.is_running()
        server.start()  # recovers
        assert answers(url)

        # Another process finds the server again from its directory alone.
        found = open_server(server_dir)
        assert (type(found), found.url) == (type(server), url)
        found.stop()
        assert not server.is_running()
        assert processes_under(server_dir) == []

        # A bad setting in an existing server's configuration: the start fails, saying why.
        assert_start_fails(again(bad), bad_message)
    finally:
        server.stop()


def assert_start_fails(server: ManagedServer, message: str) -> None:
    """The start fails with `message` and the log file's path, and leaves nothing running."""
    with pytest.raises(ServerError) as raised:
        server.start()
    said = str(raised.value)
    assert str(server.log_file) in said
    assert message in said
    assert not server.is_running()
    assert processes_under(server.base_dir) == []
