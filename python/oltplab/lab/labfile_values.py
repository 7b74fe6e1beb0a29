"""The lab file's reader: a TOML document's tables and values checked against what each key
takes, every error one line that names the file, the line and the key (`FILE:LINE: KEY: what is
wrong; how to fix it`)."""

import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from oltplab.catalog import Catalog, load_catalog
from oltplab.exceptions import ConfigError
from oltplab.lab.tomlwhere import Path_, line_of
from oltplab.metrics import METRIC_KINDS

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}")
_T = TypeVar("_T")


class LabFileError(ConfigError):
    """A lab file that cannot be read or is not valid; its message is one line."""


class Reader:
    """One lab file's document: tables checked for their keys, values for their types, names
    for what may name a directory; every failure located by the key's line in the text."""

    def __init__(self, source: str, text: str, catalog: Catalog | None) -> None:
        self.source, self.text, self._catalog = source, text, catalog

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = load_catalog()
        return self._catalog

    def fail(self, path: Path_, problem: str) -> LabFileError:
        key = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in path)
        key = key.replace(".[", "[")
        line = line_of(self.text, path)
        return LabFileError(f"{self.source}:{line}: {key or 'lab file'}: {problem}")

    def table(self, doc: Any, path: Path_, keys: Mapping[str, str]) -> dict[str, Any]:
        """A table whose keys must be among `keys` (name -> what it is, for the message)."""
        if not isinstance(doc, dict):
            raise self.fail(path, f"must be a table, not {kind(doc)}")
        for key in doc:
            if key not in keys:
                raise self.fail(
                    (*path, key), f"unknown key; {known(path)} takes: {', '.join(keys)}"
                )
        return doc

    def get(
        self,
        doc: Mapping[str, Any],
        path: Path_,
        key: str,
        check: Callable[[Any], _T | None],
        expected: str,
        default: _T | None = None,
        required: bool = False,
    ) -> _T:
        if key not in doc:
            if required:
                raise self.fail(path, f"needs `{key}` ({expected})")
            return cast(_T, default)
        value = check(doc[key])
        if value is None:
            raise self.fail((*path, key), f"must be {expected}, not {show(doc[key])}")
        return value

    def name(self, path: Path_, value: str, what: str) -> str:
        if not is_name(value):
            raise self.fail(
                path, f"{what} {value!r} must be letters, digits, _ and - (it names directories)"
            )
        return value


def is_name(value: str) -> bool:
    """Letters, digits, _ and -: a name that can name a directory."""
    return _NAME.fullmatch(value) is not None


def kind(value: Any) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


def show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def known(path: Path_) -> str:
    return f"[{'.'.join(str(p) for p in path)}]" if path else "the lab file"


def string(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def number(minimum: float, strict: bool) -> Callable[[Any], float | None]:
    def check(v: Any) -> float | None:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return None
        ok = v > minimum if strict else v >= minimum
        return float(v) if ok and v == v and v != float("inf") else None

    return check


def integer(minimum: int) -> Callable[[Any], int | None]:
    def check(v: Any) -> int | None:
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= minimum else None

    return check


def choice(choices: tuple[str, ...]) -> Callable[[Any], str | None]:
    return lambda v: v if v in choices else None


def scalar_table(v: Any) -> dict[str, Any] | None:
    if not isinstance(v, dict):
        return None
    ok = all(isinstance(x, str | int | float | bool) for x in v.values())
    return dict(v) if ok else None


def metric_list(v: Any) -> list[str] | None:
    if isinstance(v, list) and all(x in METRIC_KINDS for x in v):
        return list(dict.fromkeys(v))
    return None


def positive_ints(v: Any) -> list[int] | None:
    if isinstance(v, list) and v and all(integer(1)(x) is not None for x in v):
        return list(dict.fromkeys(v))
    return None


def positive_numbers(v: Any) -> list[float] | None:
    if isinstance(v, list) and v and all(number(0, True)(x) is not None for x in v):
        return [float(x) for x in dict.fromkeys(v)]
    return None
