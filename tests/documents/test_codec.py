"""The codec's rules (documents/codec.py) on a small document of every kind of field."""

import math
from typing import Annotated, Any, Literal

import pytest

from oltplab.documents.codec import DocumentError, JsonKey, decode, document, encode, fields_of


@document
class Point:
    at_s: float
    p99_9: Annotated[float | None, JsonKey("p99.9")]


@document
class Doc:
    name: str
    kind: Literal["a", "b"]
    count: int
    points: tuple[Point, ...]
    pair: tuple[float, int]
    by_name: dict[str, int]
    value: str | int | bool | None  # an option's value
    note: str | None  # nullable: always written
    extra: Point | None = None  # optional: absent when None
    tags: tuple[str, ...] | None = None


FULL: dict[str, Any] = {
    "name": "x",
    "kind": "b",
    "count": 3,
    "points": [{"at_s": 1, "p99.9": 2.5}, {"at_s": 2.0, "p99.9": None}],
    "pair": [0.5, 7],
    "by_name": {"a": 1},
    "value": True,
    "note": None,
    "extra": {"at_s": 3.0, "p99.9": 1.0},
    "tags": ["t"],
}


def test_a_document_round_trips_unchanged() -> None:
    doc = decode(Doc, FULL, "doc.json")
    assert doc.points[0].p99_9 == 2.5
    assert doc.pair == (0.5, 7)
    assert doc.value is True
    assert encode(doc) == FULL
    assert isinstance(encode(doc)["points"][0]["at_s"], int)  # 1 stays 1, not 1.0


def test_optional_fields_are_left_out_when_none_and_nullable_ones_written() -> None:
    lean = {k: v for k, v in FULL.items() if k not in ("extra", "tags")}
    doc = decode(Doc, lean, "doc.json")
    assert (doc.extra, doc.tags) == (None, None)
    assert encode(doc) == lean
    assert "note" in encode(doc)


def test_unknown_keys_are_ignored_and_a_missing_nullable_field_reads_none() -> None:
    newer = FULL | {"added_later": [1, 2]}
    older = {k: v for k, v in FULL.items() if k != "note"}
    assert decode(Doc, newer, "doc.json") == decode(Doc, FULL, "doc.json")
    assert decode(Doc, older, "doc.json").note is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"count": None}, "doc.json: count: null where an integer was expected"),
        ({"count": True}, "doc.json: count: True is not an integer"),
        ({"count": 1.5}, "doc.json: count: 1.5 is not an integer"),
        ({"kind": "c"}, "doc.json: kind: 'c' is none of 'a', 'b'"),
        ({"points": {}}, "doc.json: points: {} where an array was expected"),
        ({"points": [{"at_s": "x", "p99.9": 1}]}, "doc.json: points[0].at_s: 'x' is not a number"),
        ({"points": [{"p99.9": 1}]}, "doc.json: points[0]: 'at_s' is missing"),
        ({"pair": [1, 2, 3]}, "doc.json: pair: 3 items where 2 were expected"),
        ({"by_name": {"a": "1"}}, "doc.json: by_name.a: '1' is not an integer"),
        ({"value": 1.5}, "doc.json: value: 1.5 is not a string or an integer or true or false"),
        (
            {"extra": {"at_s": None, "p99.9": 1}},
            "doc.json: extra.at_s: null where a number was expected",
        ),
    ],
)
def test_a_wrong_document_is_one_line_naming_the_field(
    change: dict[str, Any], message: str
) -> None:
    with pytest.raises(DocumentError) as raised:
        decode(Doc, FULL | change, "doc.json")
    assert str(raised.value) == message


def test_a_required_field_cannot_be_missing() -> None:
    with pytest.raises(DocumentError, match=r"^doc\.json: 'count' is missing$"):
        decode(Doc, {k: v for k, v in FULL.items() if k != "count"}, "doc.json")


def test_non_finite_numbers_are_refused_when_written() -> None:
    doc = decode(Doc, FULL, "doc.json")
    with pytest.raises(ValueError, match="cannot be written as JSON"):
        encode(Point(at_s=math.nan, p99_9=None))
    assert fields_of(doc)["name"] == "x"
