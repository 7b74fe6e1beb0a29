"""The packages oltplab imports only when a command needs them, and the one line that says how
to install a missing one. Nothing here imports them: checking must work where they are absent.

The report's libraries (altair, vl-convert-python) are default dependencies, but a broken or
hand-trimmed environment can still lack them; Ray is the `ray` extra. Either way a missing
package is a one-line error with exit 2 (`cli/main.py` turns any ModuleNotFoundError of a
package outside oltplab into one), never a traceback.
"""

import importlib.util

from oltplab.exceptions import ConfigError

# import name -> (distribution, how to install it)
_PACKAGES: dict[str, tuple[str, str]] = {
    "altair": ("altair", "pip install altair vl-convert-python (dependencies of oltplab)"),
    "vl_convert": (
        "vl-convert-python",
        "pip install altair vl-convert-python (dependencies of oltplab)",
    ),
    "ray": ("ray", "pip install 'oltplab[ray]'"),
}
REPORT_MODULES = ("altair", "vl_convert")
_REINSTALL = "install oltplab again with its dependencies (pip install oltplab)"


def installed(module: str) -> bool:
    """Whether `module` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken parent package, or a module set to None
        return False


def require(what: str, modules: tuple[str, ...]) -> None:
    """Raises ConfigError (exit 2) naming the install command when a module `what` needs is
    missing."""
    missing = [m for m in modules if not installed(m)]
    if missing:
        names = " and ".join(_PACKAGES.get(m, (m, ""))[0] for m in missing)
        raise ConfigError(f"{what} needs {names}, which is not installed: {_install(missing[0])}")


def require_plotting() -> None:
    """The HTML report's and the chart images' libraries."""
    require("oltplab report", REPORT_MODULES)


def missing_module_line(error: ModuleNotFoundError) -> str | None:
    """The one-line message for an import that failed on a package outside oltplab; None when
    the missing module is oltplab's own (a bug: its traceback must show)."""
    top = (error.name or "").partition(".")[0]
    if not top or top == "oltplab":
        return None
    package = _PACKAGES.get(top, (top, ""))[0]
    return f"the Python package {package} is not installed: {_install(top)}"


def _install(module: str) -> str:
    return _PACKAGES.get(module, ("", _REINSTALL))[1]
