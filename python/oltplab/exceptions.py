"""oltplab's exceptions: the engine's classes, re-exported so users import them from here.

    OltpLabError          base class
    ├── ConfigError       bad options, workload or path: fix the command line (CLI exit 2)
    ├── ConnectError      the database cannot be reached or opened (exit 2)
    ├── NotPreparedError  the database lacks the workload's tables: run `prepare` (exit 2)
    ├── DriverError       a database error stopped the work (exit 1)
    ├── ServerError       a managed server under test failed to start or stop (exit 1)
    └── StorageError      a run directory could not be written: disk full, I/O error (exit 1)

Python-side checks (an unusable --out directory, an unknown option name) raise the same
classes, so callers and the CLI handle one hierarchy.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oltplab._core import (
        ConfigError,
        ConnectError,
        DriverError,
        NotPreparedError,
        OltpLabError,
    )
else:
    try:
        from oltplab._core import (
            ConfigError,
            ConnectError,
            DriverError,
            NotPreparedError,
            OltpLabError,
        )
    except ImportError:
        # A source tree whose engine is not built yet: keep the names (and everything that
        # does not run the engine, such as reading run directories) usable.
        class OltpLabError(Exception):
            """Base class of oltplab's errors."""

        class ConfigError(OltpLabError):
            """Bad options or spec: fix the command line."""

        class ConnectError(OltpLabError):
            """The database could not be reached or opened."""

        class NotPreparedError(OltpLabError):
            """The database lacks the workload's tables."""

        class DriverError(OltpLabError):
            """A database error that stopped the work."""


class EngineMissingError(OltpLabError):
    """The compiled engine (oltplab._core) is not importable: the package was not built."""


class ServerError(OltpLabError):
    """A managed server under test (oltplab.servers) failed to start, stop or answer; the
    message names the server's log file."""


class StorageError(OltpLabError):
    """A run directory could not be written (a full disk, an I/O error); the message says
    what was kept of what was measured."""


__all__ = [
    "ConfigError",
    "ConnectError",
    "DriverError",
    "EngineMissingError",
    "NotPreparedError",
    "OltpLabError",
    "ServerError",
    "StorageError",
]
