"""The operating-system account a managed server runs as, and what that account may reach.

PostgreSQL refuses to run as root, and no server under test should: when oltplab runs as
root, servers run as the distribution's daemon account (`mysql`, `postgres`); otherwise as
the invoking user.
"""

import os
import pwd
import stat
from dataclasses import dataclass
from pathlib import Path

from oltplab.exceptions import ServerError


@dataclass(frozen=True)
class OsUser:
    name: str
    uid: int
    gid: int

    @property
    def is_current(self) -> bool:
        return self.uid == os.geteuid()

    def groups(self) -> set[int]:
        return set(os.getgrouplist(self.name, self.gid))


def current_user() -> OsUser:
    entry = pwd.getpwuid(os.geteuid())
    return OsUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def server_account(daemon_account: str) -> OsUser:
    """The account a server runs as: `daemon_account` when we are root, else ourselves."""
    if os.geteuid() != 0:
        return current_user()
    try:
        entry = pwd.getpwnam(daemon_account)
    except KeyError:
        raise ServerError(
            f"running as root, but there is no '{daemon_account}' account to run the server as; "
            "install the server package (scripts/install-test-deps.sh) or run as another user"
        ) from None
    return OsUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def give_to(user: OsUser, *paths: Path) -> None:
    """Makes `paths` (and everything below them) owned by `user`; a no-op for ourselves."""
    if user.is_current:
        return
    for path in paths:
        os.chown(path, user.uid, user.gid)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                for name in (*dirs, *files):
                    os.chown(Path(root, name), user.uid, user.gid, follow_symlinks=False)


def check_reachable(path: Path, user: OsUser) -> None:
    """Fails, saying which directory to open, when `user` cannot walk down to `path`."""
    if user.is_current:
        return
    groups = user.groups()
    for directory in reversed(path.parents):
        st = directory.stat()
        if st.st_uid == user.uid:
            bit = stat.S_IXUSR
        elif st.st_gid in groups:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            raise ServerError(
                f"the server runs as '{user.name}', which cannot enter {directory} "
                f"(mode {stat.S_IMODE(st.st_mode):04o}); allow it with `chmod o+x {directory}` "
                "or put the server in a directory it can reach (e.g. under /var/tmp)"
            )
