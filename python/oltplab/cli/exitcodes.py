"""Exit codes of the `oltplab` command, and how errors map to them."""

from oltplab._messages import without_url_secrets
from oltplab.exceptions import ConfigError, ConnectError, NotPreparedError

OK = 0
FAILED = 1  # the run failed (a database error stopped it, or the engine is missing)
BAD_INPUT = 2  # fix the command line, the path or the database state
INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it
TERMINATED = 143  # SIGTERM (128 + 15): stopped as Ctrl-C stops, told apart by the caller

# Errors the user fixes by changing the command line or preparing the database.
_BAD_INPUT_ERRORS = (ConfigError, ConnectError, NotPreparedError)

_BY_STOP_REASON = {"time": OK, "events": OK, "interrupted": INTERRUPTED, "error": FAILED}


def for_error(error: Exception) -> int:
    return BAD_INPUT if isinstance(error, _BAD_INPUT_ERRORS) else FAILED


def for_stop_reason(stop_reason: str) -> int:
    return _BY_STOP_REASON.get(stop_reason, FAILED)


def error_line(message: str) -> str:
    """`oltplab: error: ...` on one line, whatever the message holds; a database URL it quotes
    (a path or value that was one) is shown without its password."""
    return "oltplab: error: " + " ".join(without_url_secrets(message).split())
