"""Finding a server's programs: an explicit bin_dir first, then where distributions put them."""

import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from oltplab.exceptions import ServerError

# Daemons live in sbin, which is not on a normal user's PATH on Debian.
_SYSTEM_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
_INSTALL_HINT = "install it with scripts/install-test-deps.sh or give the server's bin_dir"


def find_program(names: Sequence[str], *, bin_dir: Path | None, what: str) -> Path:
    """The first of `names` found in `bin_dir` (when given, only there), else on PATH or in
    the system directories."""
    if bin_dir is not None:
        search = [str(bin_dir)]
    else:
        search = [*os.environ.get("PATH", "").split(os.pathsep), *_SYSTEM_DIRS]
    path = os.pathsep.join(d for d in search if d)
    for name in names:
        found = shutil.which(name, path=path)
        if found:
            return Path(found)
    where = bin_dir if bin_dir is not None else "PATH or " + ", ".join(_SYSTEM_DIRS)
    raise ServerError(f"{what} ({' or '.join(names)}) not found in {where}; {_INSTALL_HINT}")


def postgres_bin_dir(bin_dir: Path | None) -> Path:
    """PostgreSQL's bin directory: `bin_dir`, else Debian's newest /usr/lib/postgresql/N/bin,
    else the directory of an `initdb` on PATH (other distributions)."""
    if bin_dir is not None:
        return bin_dir
    versions = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "initdb").is_file()]
    if versions:
        return max(versions, key=lambda p: _version_key(p.parent.name))
    return find_program(["initdb"], bin_dir=None, what="PostgreSQL's initdb").parent


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text))
