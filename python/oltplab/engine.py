"""The only module that touches the compiled engine (oltplab._core).

Everything crosses as JSON text (see _core.pyi): one spec in, one result out, and
progress events through a callback. This module turns them into dicts and back and
does nothing else; the engine validates options and maps its errors to exceptions.
"""

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from oltplab._types import EventHandler, Json
from oltplab.exceptions import EngineMissingError

RawHandler = Callable[[str], None]


class CoreApi(Protocol):
    """What we use of oltplab._core; tests substitute a fake with the same shape."""

    __version__: str

    def catalog(self) -> str: ...
    def prepare(self, spec_json: str, on_event: RawHandler | None = None) -> str: ...
    def run(self, spec_json: str, on_event: RawHandler | None = None) -> str: ...
    def cleanup(self, spec_json: str, on_event: RawHandler | None = None) -> str: ...
    def merge_histograms(self, encoded: list[str], ranks: list[float]) -> str: ...
    def check(self, spec_json: str, on_event: RawHandler | None = None) -> str: ...
    def RunMerge(self, spec_json: str) -> "CoreMerge": ...  # a class in _core


class CoreMerge(Protocol):
    """oltplab._core.RunMerge."""

    def interval(self, events_json: list[str]) -> str: ...
    def finish(self, results_json: list[str], end_json: str) -> str: ...


def _load_core() -> CoreApi:
    try:
        from oltplab import _core
    except ImportError as e:
        raise EngineMissingError(
            "the engine (oltplab._core) is not built; "
            "run `make build-dev` in the source tree, or `pip install .`"
        ) from e
    return _core


def build_spec(workload: str, db: str, options: Mapping[str, Any], *, create: bool = False) -> Json:
    """The spec document; `create` lets prepare create a missing SQLite file."""
    return {"workload": workload, "db": db, "options": dict(options), "target": {"create": create}}


def _adapt(on_event: EventHandler | None) -> RawHandler | None:
    if on_event is None:
        return None
    handler = on_event

    # An exception raised here stops the engine, which re-raises it once it has finished;
    # KeyboardInterrupt raised here counts as Ctrl-C.
    def deliver(event_json: str) -> None:
        handler(json.loads(event_json))

    return deliver


def engine_version() -> str:
    return _load_core().__version__


def catalog() -> Json:
    doc: Json = json.loads(_load_core().catalog())
    return doc


def prepare(spec: Json, on_event: EventHandler | None = None) -> Json:
    result: Json = json.loads(_load_core().prepare(json.dumps(spec), _adapt(on_event)))
    return result


def raise_open_files_limit() -> None:
    """Lifts the soft limit on open files to the hard one: thousands of connections need
    thousands of sockets, and the engine's pre-flight check fails on a default of 1024."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        # On failure the engine's pre-flight check says what to do.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def run(spec: Json, on_event: EventHandler | None = None) -> Json:
    """Runs the load. Ctrl-C returns the partial result with stop_reason "interrupted"."""
    raise_open_files_limit()
    result: Json = json.loads(_load_core().run(json.dumps(spec), _adapt(on_event)))
    return result


def cleanup(spec: Json, on_event: EventHandler | None = None) -> Json:
    result: Json = json.loads(_load_core().cleanup(json.dumps(spec), _adapt(on_event)))
    return result


def merge_histograms(encoded: list[str], ranks: list[float]) -> Json:
    """Adds V2 compressed histograms (base64, 1 ns..1 h, 3 digits) exactly, refusing another
    shape: {"encoded", "count", "min_ns", "max_ns", "mean_ns", "percentiles_ns": [[rank, ns],
    ...]}. The one histogram addition: the analysis and reports add through it too."""
    merged: Json = json.loads(_load_core().merge_histograms(encoded, ranks))
    return merged


class RunMerge:
    """A distributed run's merge, done by the engine with the code a local run reports and
    summarises itself with: the clients' interval events added into the run's, and the run's
    result assembled from the merged measured intervals."""

    def __init__(self, spec: Json) -> None:
        """`spec`: the run as a whole (the total threads and rate), as `run` takes it."""
        self._merge = _load_core().RunMerge(json.dumps(spec))

    def interval(self, events: Sequence[Json]) -> Json:
        """One interval event of each client (the same interval) -> the merged event."""
        merged: Json = json.loads(self._merge.interval([json.dumps(e) for e in events]))
        return merged

    def finish(
        self,
        results: Sequence[Json],
        *,
        started_at: float,
        ended_at: float,
        interrupted: bool,
        error: str | None,
        flags: Sequence[str],
    ) -> Json:
        """The run's result, from the merged intervals, the results of the clients that
        finished, and the driver's view of the end (times on its clock; `error`: the
        failed or lost clients; `flags`: its own, after the clients')."""
        end = {
            "started_at": started_at,
            "ended_at": ended_at,
            "interrupted": interrupted,
            "error": error,
            "flags": list(flags),
        }
        doc = self._merge.finish([json.dumps(r) for r in results], json.dumps(end))
        result: Json = json.loads(doc)
        return result


def check(spec: Json) -> Json:
    """TPC-C's consistency conditions (clause 3.3.2): {"driver", "table_sets", "passed",
    "conditions": [{"table_set", "number", "description", "offending", "status"}, ...]}."""
    result: Json = json.loads(_load_core().check(json.dumps(spec)))
    return result
