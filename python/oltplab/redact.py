"""Removes passwords from database URLs and command lines before they are stored."""

import re
from collections.abc import Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit

MASK = "***"
# Option and query-parameter names whose values are secrets (`--mysql-password`, `?password=`).
_SECRET_NAME = re.compile(r"(^|_)(pass|password|passwd|pwd|secret|token)$", re.IGNORECASE)


def redact_url(url: str) -> str:
    """`mysql://user:pass@host/db?password=x` -> `mysql://user:***@host/db?password=***`."""
    if "://" not in url:
        return url
    parts = urlsplit(url)
    out = url  # edited in place: urlunsplit would rewrite sqlite:///x as sqlite:/x
    userinfo = parts.netloc.rpartition("@")[0]
    if ":" in userinfo:
        out = out.replace(f"{userinfo}@", f"{userinfo.split(':', 1)[0]}:{MASK}@", 1)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if any(_SECRET_NAME.search(k) for k, _ in pairs):
        masked = [(k, MASK if _SECRET_NAME.search(k) else v) for k, v in pairs]
        out = out.replace(parts.query, urlencode(masked, safe="/*"), 1)
    return out


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
