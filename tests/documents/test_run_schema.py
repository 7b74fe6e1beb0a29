"""The run.json types (oltplab.documents.run) and schema/run.schema.json describe the same
document: every property on both sides, the same required ones, the same nullable ones, the
same nested types. A field added to one and not the other fails here."""

import json
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest

from oltplab.documents.codec import field_specs, nullable, without_none
from oltplab.documents.run import RunManifest

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schema" / "run.schema.json"
_SCALARS = {int: "integer", float: "number", str: "string", bool: "boolean"}

Schema = dict[str, Any]


def _schema() -> Schema:
    doc: Schema = json.loads(SCHEMA_PATH.read_text())
    return doc


def _resolve(node: Schema, root: Schema) -> Schema:
    while "$ref" in node:
        node = root["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def _variants(node: Schema, root: Schema) -> tuple[bool, Schema]:
    """(whether null is allowed, the non-null part) of a property's schema."""
    node = _resolve(node, root)
    if "oneOf" in node:
        rest = [v for v in node["oneOf"] if v != {"type": "null"}]
        assert len(rest) == 1, node
        return len(rest) < len(node["oneOf"]), _resolve(rest[0], root)
    kinds = node.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        others = [k for k in kinds if k != "null"]
        return True, node | {"type": others[0] if len(others) == 1 else others}
    if "enum" in node and None in node["enum"]:
        return True, node | {"enum": [v for v in node["enum"] if v is not None]}
    return False, node


def _compare_scalar(hint: Any, node: Schema, where: str) -> list[str]:
    if get_origin(hint) is Literal:
        allowed = set(node["enum"]) if "enum" in node else {node.get("const")}
        if set(get_args(hint)) != allowed:
            return [f"{where}: Literal{list(get_args(hint))} against {sorted(allowed, key=str)}"]
        return []
    if node.get("type") == _SCALARS[hint] or (hint is float and node.get("type") == "integer"):
        return []
    if "const" in node and isinstance(node["const"], hint):
        return []
    return [f"{where}: {hint.__name__} in the type, {node} in the schema"]


def _compare(hint: Any, node: Schema, root: Schema, where: str) -> list[str]:
    """Differences between a (non-null) type and a (non-null) schema node."""
    if get_origin(hint) is Literal or (isinstance(hint, type) and hint in _SCALARS):
        return _compare_scalar(hint, node, where)
    if get_origin(hint) in (tuple, list):
        if node.get("type") != "array":
            return [f"{where}: an array in the type, {node.get('type')} in the schema"]
        args = get_args(hint)
        if (len(args) == 2 and args[1] is Ellipsis) or get_origin(hint) is list:
            return _compare_value(args[0], node.get("items", {}), root, f"{where}[]")
        items = node.get("prefixItems", [])
        return [
            d
            for i, (a, n) in enumerate(zip(args, items, strict=True))
            for d in _compare_value(a, n, root, f"{where}[{i}]")
        ]
    if get_origin(hint) is dict:
        if node.get("type") != "object" or "properties" in node:
            return [f"{where}: a dict in the type, not a free object in the schema"]
        return _compare_value(get_args(hint)[1], node.get("additionalProperties", {}), root, where)
    if isinstance(hint, type):  # a document dataclass
        return _compare_object(hint, node, root, where)
    if get_origin(hint) in (Union, types.UnionType):  # an option's value: a JSON scalar
        return []
    return [f"{where}: the test does not know the type {hint!r}"]


def _compare_value(hint: Any, node: Schema, root: Schema, where: str) -> list[str]:
    schema_null, rest = _variants(node, root)
    if nullable(hint) != schema_null:
        return [f"{where}: nullable in the {'type' if nullable(hint) else 'schema'} only"]
    return _compare(without_none(hint), rest, root, where)


def _compare_object(cls: type, node: Schema, root: Schema, where: str) -> list[str]:
    if node.get("type") != "object":
        return [f"{where}: {cls.__name__} against a schema of type {node.get('type')}"]
    props, required = node.get("properties", {}), set(node.get("required", []))
    specs = {s.key: s for s in field_specs(cls)}
    out = [f"{where}.{k}: in the schema, not in {cls.__name__}" for k in props if k not in specs]
    out += [f"{where}.{k}: in {cls.__name__}, not in the schema" for k in specs if k not in props]
    for key, spec in specs.items():
        if key not in props:
            continue
        here = f"{where}.{key}"
        if spec.required != (key in required):
            side = "the type" if spec.required else "the schema"
            out.append(f"{here}: required in {side} only")
        if spec.required:
            out += _compare_value(spec.hint, props[key], root, here)
            continue
        # An optional field's None means "absent": the schema must not allow null as well.
        schema_null, rest = _variants(props[key], root)
        if schema_null:
            out.append(f"{here}: optional and nullable in the schema (make it required)")
        out += _compare(without_none(spec.hint), rest, root, here)
    return out


def test_the_types_and_the_schema_describe_the_same_document() -> None:
    root = _schema()
    assert _compare_object(RunManifest, root, root, "run.json") == []


def _drifted(schema: Schema) -> list[str]:
    return _compare_object(RunManifest, schema, schema, "run.json")


@pytest.mark.parametrize(
    ("change", "found"),
    [
        (lambda s: s["properties"].pop("label"), "run.json.label: in RunManifest, not in"),
        (
            lambda s: s["$defs"]["summary"]["properties"].update(extra={"type": "number"}),
            "run.json.summary.extra: in the schema",
        ),
        (lambda s: s["required"].remove("segments"), "run.json.segments: required in the type"),
        (
            lambda s: s["properties"]["load"]["properties"]["threads"].update(type="integer"),
            "run.json.load.threads: nullable in the type only",
        ),
        (
            lambda s: s["$defs"]["latency"]["properties"].update(
                {"p99.9": {"type": ["string", "null"]}}
            ),
            "run.json.summary.latency_ms.p99.9: float in the type",
        ),
        (
            lambda s: s["properties"]["tool"]["properties"]["name"].update(enum=["oltplab"]),
            "run.json.tool.name: Literal",
        ),
    ],
)
def test_drift_is_found(change: Any, found: str) -> None:
    schema = _schema()
    change(schema)
    assert any(d.startswith(found) for d in _drifted(schema)), _drifted(schema)
