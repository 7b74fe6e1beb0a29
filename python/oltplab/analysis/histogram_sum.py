"""Adding many V2 compressed HdrHistograms at once with numpy. hdrh decodes each into a new
~34,000-count histogram and adds it count by count (about 0.13 ms each: 4 s for a lab of 50
runs x 600 intervals); here the payloads' varints are decoded together, vectorised, and only
the non-zero counts are added. The result is exactly hdrh's `decode` + `add` (counts, total,
min and max; tests/analysis/test_histogram_sum.py); payloads of another shape than latency.hlog's
(1 ns .. 1 h, 3 digits) return None, and the caller takes hdrh's way."""

import base64
import struct
import zlib
from collections.abc import Sequence

import numpy as np
from hdrh.histogram import HdrHistogram

from oltplab.rundir.hlog import HIGHEST_NS, LOWEST_NS, SIGNIFICANT_DIGITS

# The V2 format (HdrHistogram's "compressed" encoding): an outer header (cookie, length), a
# zlib stream holding a 40-byte payload header, then one ZigZag LEB128 varint per count, a
# negative one standing for a run of that many zero counts.
_COMPRESSION_COOKIE = 0x1C849304
_ENCODING_COOKIE = 0x1C849303
_COOKIE_BASE_MASK = ~0xF0
_OUTER = struct.Struct(">II")
_PAYLOAD = struct.Struct(">IIIIqqd")
# A count below 2^56 needs at most 8 varint bytes; the 9-byte form (all 8 bits of the last
# byte used) is left to hdrh.
_MAX_VARINT_BYTES = 8


def sum_encoded(encoded: Sequence[str]) -> HdrHistogram | None:
    """A new histogram holding the sum of the base64 V2 histograms `encoded` (an empty one when
    `encoded` is empty); None when one of them is not latency.hlog's shape or not plain V2."""
    payloads = []
    for text in encoded:
        payload = _varints(text)
        if payload is None:
            return None
        if payload:  # an interval in which nothing completed encodes no count
            payloads.append(payload)
    total = HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
    indices, counts = _indexed_counts(payloads, total.counts_len)
    if indices is None or counts is None:
        return None
    if len(indices):
        sums = np.ctypeslib.as_array(total.counts)
        np.add.at(sums, indices, counts.astype(sums.dtype))
        nonzero = np.flatnonzero(sums)
        if len(nonzero):
            total.set_internal_tacking_values(
                int(nonzero[0]), int(nonzero[-1]), int(sums.sum(dtype=np.uint64))
            )
    return total


def _varints(text: str) -> bytes | None:
    """The varint bytes of one encoded histogram; None when it is not latency.hlog's shape."""
    try:
        raw = base64.b64decode(text)
        cookie, length = _OUTER.unpack_from(raw)
        if cookie & _COOKIE_BASE_MASK != _COMPRESSION_COOKIE or length != len(raw) - _OUTER.size:
            return None
        data = zlib.decompress(raw[_OUTER.size :])
        cookie, size, offset, digits, lowest, highest, ratio = _PAYLOAD.unpack_from(data)
    except (ValueError, struct.error, zlib.error):
        return None
    shape = (digits, lowest, highest, offset, ratio)
    if (
        cookie & _COOKIE_BASE_MASK != _ENCODING_COOKIE
        or shape != (SIGNIFICANT_DIGITS, LOWEST_NS, HIGHEST_NS, 0, 1.0)
        or len(data) < _PAYLOAD.size + size
    ):
        return None
    return data[_PAYLOAD.size : _PAYLOAD.size + size]


def _indexed_counts(
    payloads: list[bytes], counts_len: int
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(count index, count) of every non-zero count of every payload (none empty), decoded
    together; (None, None) when a varint is longer than we decode or an index out of range."""
    if not payloads:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    data = np.frombuffer(b"".join(payloads), np.uint8)
    ends = (data & 0x80) == 0
    if not all(p[-1] < 0x80 for p in payloads):
        return None, None  # a varint runs past its payload: not for us
    last = np.flatnonzero(ends)
    first = np.concatenate(([0], last[:-1] + 1))
    lengths = last - first + 1
    if lengths.max() > _MAX_VARINT_BYTES:
        return None, None
    position = np.arange(len(data)) - np.repeat(first, lengths)
    parts = (data & 0x7F).astype(np.uint64) << (7 * position).astype(np.uint64)
    zigzag = np.add.reduceat(parts, first)  # the 7-bit groups do not overlap: add is or
    values = (zigzag >> np.uint64(1)).astype(np.int64) ^ -(zigzag & np.uint64(1)).astype(np.int64)
    # Each value moves the count index: a zero run by its length, anything else by one.
    steps = np.where(values < 0, -values, 1)
    at = np.cumsum(steps) - steps
    # The index restarts at 0 with every payload: subtract where each payload began.
    varints_per_payload = np.add.reduceat(ends.astype(np.int64), _starts(payloads))
    payload_first = np.concatenate(([0], np.cumsum(varints_per_payload)[:-1]))
    at -= np.repeat(at[payload_first], varints_per_payload)
    keep = values > 0
    indices, counts = at[keep], values[keep]
    if len(indices) and indices.max() >= counts_len:
        return None, None
    return indices, counts


def _starts(payloads: list[bytes]) -> np.ndarray:
    sizes = np.fromiter((len(p) for p in payloads), np.int64, len(payloads))
    return np.concatenate(([0], np.cumsum(sizes)[:-1]))
