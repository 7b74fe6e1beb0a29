"""The package version, from the installed distribution's metadata (set by maturin from Cargo)."""

from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    try:
        return version("oltplab")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


__version__ = package_version()
