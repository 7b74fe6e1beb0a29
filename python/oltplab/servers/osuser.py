"""The operating-system account a managed server runs as, and what that account may reach.

PostgreSQL refuses to run as root, and no server under test should: when oltplab runs as
root, servers run as the distribution's daemon account (`mysql`, `postgres`); otherwise as
the invoking user.
"""

import os
import pwd
import stat
from collections.abc import Iterable
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


def closed_directory(path: Path, user: OsUser) -> tuple[Path, int] | None:
    """The first directory from / down to `path` (as far as it exists) that `user` cannot
    enter, with its mode; None when `user` can walk down to `path`."""
    if user.is_current:
        return None
    groups = user.groups()
    for directory in (*reversed(path.parents), path):
        try:
            st = directory.stat()
        except FileNotFoundError:
            return None  # what does not exist yet, oltplab creates (make_reachable_dirs)
        if st.st_uid == user.uid:
            bit = stat.S_IXUSR
        elif st.st_gid in groups:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            return directory, stat.S_IMODE(st.st_mode)
    return None


def unreachable_message(user: OsUser, closed: tuple[Path, int], elsewhere: str) -> str:
    directory, mode = closed
    return (
        f"the server runs as '{user.name}', which cannot enter {directory} (mode {mode:04o}); "
        f"allow it with `chmod o+x {directory}` or {elsewhere}"
    )


def check_reachable(path: Path, user: OsUser) -> None:
    """Fails, saying which directory to open, when `user` cannot walk down to `path`."""
    closed = closed_directory(path, user)
    if closed is not None:
        raise ServerError(
            unreachable_message(
                user, closed, "put the server in a directory it can reach (e.g. under /var/tmp)"
            )
        )


def make_reachable_dirs(path: Path, users: Iterable[OsUser]) -> None:
    """Creates `path` and its missing parents; when a server runs as another account, each
    directory created here may be entered (not read) by others, whatever the umask: the
    directories oltplab makes must not shut out the servers it puts in them."""
    missing = [d for d in (*reversed(path.parents), path) if not d.exists()]
    path.mkdir(parents=True, exist_ok=True)
    if all(user.is_current for user in users):
        return
    for directory in missing:
        mode = stat.S_IMODE(directory.stat().st_mode)
        directory.chmod(mode | stat.S_IXGRP | stat.S_IXOTH)
