"""JSON <-> frozen dataclasses, driven by their type hints: the one codec of oltplab's
documents (run.json, the analysis documents). No document has a hand-written from_json.

Types it knows: dataclasses, `X | None`, `tuple[X, ...]`, `tuple[X, Y]`, `list[X]`,
`dict[str, X]`, `Literal[...]`, str, int, float, bool, and `Any` (taken as it is).

The rules, the same for every document (docs/run-directory.md, "Reading a run"):
- A field without a default is required: `decode` refuses a document that lacks it, unless
  its type allows None (a nullable field an older oltplab did not write yet reads as None).
  `encode` always writes it, null when None.
- A field with a default is optional: the default when absent, left out when None.
- Keys the type does not know are ignored when reading, so that an older oltplab reads the
  run.json of a newer one of the same schema_version (fields may be added, never redefined).
- A JSON key that is not an identifier ("p99.9") is declared once, `Annotated[T, JsonKey(k)]`.
- Numbers keep their JSON type: an int read into a float field stays an int, so that a
  document round-trips unchanged. Non-finite floats cannot be written (JSON has none).
"""

import dataclasses
import math
import types
from collections.abc import Mapping
from functools import cache
from typing import (
    Annotated,
    Any,
    Literal,
    TypeVar,
    Union,
    cast,
    dataclass_transform,
    get_args,
    get_origin,
    get_type_hints,
)

from oltplab.exceptions import ConfigError

T = TypeVar("T")


class DocumentError(ConfigError):
    """A document that does not have its type's shape: where, and what is wrong."""


@dataclasses.dataclass(frozen=True, slots=True)
class JsonKey:
    """`Annotated[T, JsonKey("p99.9")]`: the field's JSON key, when not its name."""

    key: str


@dataclass_transform(frozen_default=True, kw_only_default=True)
def document(cls: type[T]) -> type[T]:
    """A document type: a frozen, slotted dataclass built by keyword."""
    return dataclasses.dataclass(frozen=True, slots=True, kw_only=True)(cls)


@dataclasses.dataclass(frozen=True, slots=True)
class FieldSpec:
    """One dataclass field as the codec (and the schema test) see it."""

    name: str  # the attribute
    key: str  # the JSON key
    hint: Any  # the resolved type, Annotated stripped
    required: bool  # no default


@cache
def field_specs(cls: type) -> tuple[FieldSpec, ...]:
    hints = get_type_hints(cls, include_extras=True)
    specs = []
    for f in dataclasses.fields(cls):
        hint, key = hints[f.name], f.name
        if get_origin(hint) is Annotated:
            hint, *extras = get_args(hint)
            key = next((e.key for e in extras if isinstance(e, JsonKey)), key)
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        specs.append(FieldSpec(f.name, key, hint, required))
    return tuple(specs)


def fields_of(doc: Any) -> dict[str, Any]:
    """A document's fields by name, not copied: to build a document that extends it
    (`Summary(**fields_of(measured), ...)`)."""
    return {f.name: getattr(doc, f.name) for f in dataclasses.fields(doc)}


def nullable(hint: Any) -> bool:
    return _is_union(hint) and type(None) in get_args(hint)


def without_none(hint: Any) -> Any:
    """`X` from `X | None` (`X | Y` stays a union)."""
    if not nullable(hint):
        return hint
    rest = tuple(a for a in get_args(hint) if a is not type(None))
    return rest[0] if len(rest) == 1 else Union[rest]  # noqa: UP007 (built at run time)


def _is_union(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType)


# -- decoding -----------------------------------------------------------------------------


def decode(cls: type[T], value: Any, name: str) -> T:
    """`value` (decoded JSON) as `cls`; DocumentError naming the document (`name`) and the
    first thing in it that is wrong ("run.json: summary.tps: 'x' is not a number")."""
    try:
        return cast(T, _decode(cls, value, ""))
    except DocumentError as e:
        raise DocumentError(f"{name}: {e}") from None


def _decode(hint: Any, value: Any, where: str) -> Any:
    if hint is Any:
        return value
    if value is None and not nullable(hint):
        raise _wrong(where, f"null where {_name(hint)} was expected")
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _decode_dataclass(hint, value, where)
    origin = get_origin(hint)
    if _is_union(hint):
        return None if value is None else _decode_union(hint, value, where)
    if origin is Literal:
        if value not in get_args(hint) or isinstance(value, bool) != _bool_literal(hint):
            choices = ", ".join(repr(a) for a in get_args(hint))
            raise _wrong(where, f"{_shown(value)} is none of {choices}")
        return value
    if origin in (tuple, list):
        items = _expect(list, value, where, "an array")
        return _decode_sequence(hint, items, where)
    if origin is dict:
        found = _expect(dict, value, where, "an object")
        _, item = get_args(hint)
        return {str(k): _decode(item, v, _at(where, str(k))) for k, v in found.items()}
    return _decode_scalar(hint, value, where)


def _decode_dataclass(cls: type, value: Any, where: str) -> Any:
    found = _expect(dict, value, where, "an object")
    kwargs = {}
    for spec in field_specs(cls):
        if spec.key in found:
            kwargs[spec.name] = _decode(spec.hint, found[spec.key], _at(where, spec.key))
        elif spec.required and nullable(spec.hint):
            kwargs[spec.name] = None  # a field added after the document was written
        elif spec.required:
            raise _wrong(where, f"{spec.key!r} is missing")
    return cls(**kwargs)


def _decode_union(hint: Any, value: Any, where: str) -> Any:
    options = [a for a in get_args(hint) if a is not type(None)]
    if len(options) == 1:
        return _decode(options[0], value, where)
    for option in options:  # an option's value, "geomean" or a group: the first that fits
        try:
            return _decode(option, value, where)
        except DocumentError:
            continue
    raise _wrong(where, f"{_shown(value)} is not {_name(hint)}")


def _decode_sequence(hint: Any, items: list[Any], where: str) -> Any:
    args = get_args(hint)
    if get_origin(hint) is list:
        return [_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(items)]
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(items))
    if len(items) != len(args):
        raise _wrong(where, f"{len(items)} items where {len(args)} were expected")
    pairs = enumerate(zip(args, items, strict=True))
    return tuple(_decode(a, v, f"{where}[{i}]") for i, (a, v) in pairs)


def _decode_scalar(hint: Any, value: Any, where: str) -> Any:
    if hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint in (str, bool):
        ok = isinstance(value, hint)
    else:
        raise TypeError(f"{where}: the codec does not know the type {hint!r}")
    if not ok:
        raise _wrong(where, f"{_shown(value)} is not {_name(hint)}")
    return value


def _wrong(where: str, problem: str) -> DocumentError:
    return DocumentError(f"{where}: {problem}" if where else problem)


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _bool_literal(hint: Any) -> bool:
    return all(isinstance(a, bool) for a in get_args(hint))


def _expect(kind: type[T], value: Any, where: str, what: str) -> T:
    if not isinstance(value, kind):
        raise _wrong(where, f"{_shown(value)} where {what} was expected")
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _name(hint: Any) -> str:
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
    if hint in names:
        return names[hint]
    if _is_union(hint):
        return " or ".join(_name(a) for a in get_args(hint) if a is not type(None))
    return getattr(hint, "__name__", str(hint))


# -- encoding -----------------------------------------------------------------------------


def encode(value: Any) -> Any:
    """`value` as JSON-ready data: dataclasses as objects (their declared keys, optional
    fields left out when None), tuples as arrays."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        doc = {}
        for spec in field_specs(type(value)):
            item = getattr(value, spec.name)
            if item is None and not spec.required:
                continue
            doc[spec.key] = encode(item)
        return doc
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} cannot be written as JSON: make it None first")
    return value
