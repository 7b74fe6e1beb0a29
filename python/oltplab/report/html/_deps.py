"""The report's plotting libraries are an optional extra (`oltplab[report]`): without them
`oltplab report` says how to install them instead of failing with an ImportError."""

from oltplab.exceptions import ConfigError

INSTALL_HINT = "pip install 'oltplab[report]' (altair and vl-convert-python)"


def require_plotting() -> None:
    """Raises ConfigError (exit 2) naming the install command when altair or vl-convert is
    missing."""
    missing = []
    for module, package in (("altair", "altair"), ("vl_convert", "vl-convert-python")):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        raise ConfigError(
            f"oltplab report needs {' and '.join(missing)}, which are not installed: {INSTALL_HINT}"
        )
