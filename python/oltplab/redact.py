"""Database URLs as the engine reads them, and passwords kept out of what is stored or printed.

The engine's URL parser (crates/oltplab-engine/src/driver/url.rs) is the one authority on
where a URL's password is: redaction asks it, so that it masks exactly what the engine will
send. A server URL the parser refuses (an unencoded '#', '?', '/' or '@' in the password, a
bad %-escape) is refused here too, before anything is written, and redacted to its scheme.
"""

import re
from collections.abc import Callable, Sequence
from urllib.parse import quote

from oltplab.exceptions import ConfigError

_engine_check: Callable[[str], None] | None
_engine_redact: Callable[[str], str] | None
try:
    from oltplab._core import check_db_url as _engine_check
    from oltplab._core import redact_db_url as _engine_redact
except ImportError:  # a source tree whose engine is not built: mask everything after the scheme
    _engine_check = None
    _engine_redact = None

MASK = "***"
# Option names whose values are secrets (`--mysql-password`, `--pgsql_password`).
_SECRET_NAME = re.compile(r"(^|_)(pass|password|passwd|pwd|secret|token)$", re.IGNORECASE)


def redact_url(url: str) -> str:
    """`mysql://user:pass@host/db?password=x` -> `mysql://user:***@host/db?password=***`."""
    if "://" not in url:
        return url
    if _engine_redact is None:
        return url.split("://", 1)[0] + "://" + MASK
    return _engine_redact(url)


def check_db_url(url: str) -> None:
    """Raises ConfigError (one line, no secret) for a server URL the engine cannot read one way."""
    if _engine_check is not None:
        _engine_check(url)
    elif "://" in url and not url.startswith("sqlite:"):
        raise ConfigError("the engine is not built: run `make build-dev` to check --db URLs")


def userinfo(user: str, password: str | None) -> str:
    """`user:password@` percent-encoded, so that any character reaches the server as written."""
    secret = "" if password is None else ":" + quote(password, safe="")
    return quote(user, safe="") + secret + "@"


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line with URLs redacted and the values of password-like options masked."""
    out: list[str] = []
    mask_next = False
    for token in argv:
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            if _SECRET_NAME.search(name.lstrip("-").replace("-", "_")):
                if eq:
                    out.append(f"{name}={MASK}")
                else:
                    out.append(token)
                    mask_next = True
                continue
            out.append(f"{name}={redact_url(value)}" if eq else token)
            continue
        out.append(redact_url(token))
    return out
