"""Where a run's load comes from, chosen once: this process's engine (`LocalRunner`) or engine
actors on a Ray cluster (`RayRunner`). Both take the same calls and write the same run
directory, so the CLI and labs never branch on Ray again (`runner_for`)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from oltplab import runner
from oltplab._types import EventHandler, Json
from oltplab.defaultdb import DEFAULT_RESULTS_ROOT
from oltplab.exceptions import ConfigError
from oltplab.runner import NO_HOOKS, Hooks, LabFields, RunResult


class Runner(Protocol):
    def seeded(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """`options` with what the runner fixes before the run (the banner shows it)."""
        ...

    def prepare(
        self,
        workload: str,
        db: str | None,
        options: Mapping[str, Any],
        *,
        on_event: EventHandler | None = None,
    ) -> Json:
        """Creates and loads the workload's tables; returns the engine's prepare result."""
        ...

    def run(
        self,
        workload: str,
        db: str | None,
        options: Mapping[str, Any],
        *,
        out: Path | None = None,
        argv: Sequence[str] | None = None,
        hooks: Hooks = NO_HOOKS,
        metrics: Sequence[str] = (),
        lab: LabFields | None = None,
        script: Json | None = None,
    ) -> RunResult:
        """Runs the load and writes its run directory (see `oltplab.runner.run`)."""
        ...


@dataclass(frozen=True)
class LocalRunner:
    """The engine in this process; without `db`, the default SQLite database under
    `results_root`."""

    results_root: Path = DEFAULT_RESULTS_ROOT

    def seeded(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return dict(options)

    def prepare(
        self,
        workload: str,
        db: str | None,
        options: Mapping[str, Any],
        *,
        on_event: EventHandler | None = None,
    ) -> Json:
        return runner.prepare(
            workload, db, options, results_root=self.results_root, on_event=on_event
        )

    def run(
        self,
        workload: str,
        db: str | None,
        options: Mapping[str, Any],
        *,
        out: Path | None = None,
        argv: Sequence[str] | None = None,
        hooks: Hooks = NO_HOOKS,
        metrics: Sequence[str] = (),
        lab: LabFields | None = None,
        script: Json | None = None,
    ) -> RunResult:
        return runner.run(
            workload,
            db,
            options,
            out=out,
            argv=argv,
            results_root=self.results_root,
            hooks=hooks,
            metrics=metrics,
            lab=lab,
            script=script,
        )


@dataclass(frozen=True)
class RayRunner:
    """`clients` engine actors (one per node when None) on the Ray cluster at `address`
    ("auto" or HOST:PORT), their intervals merged by the engine (docs/distributed.md)."""

    address: str
    clients: int | None = None
    results_root: Path = DEFAULT_RESULTS_ROOT

    def seeded(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The seed every client's is derived from, drawn now."""
        from oltplab.distributed.shares import with_fixed_seed

        return with_fixed_seed(options)

    def prepare(
        self,
        workload: str,
        db: str | None,
        options: Mapping[str, Any],
        *,
        on_event: EventHandler | None = None,
    ) -> Json:
        from oltplab import distributed

        return distributed.prepare(
            workload,
            db,
            options,
            ray_address=self.address,
            clients=self.clients,
            on_event=on_event,
        )

    def run(
        self,
        workload: str,
        db: str | None,
        options: Mapping[str, Any],
        *,
        out: Path | None = None,
        argv: Sequence[str] | None = None,
        hooks: Hooks = NO_HOOKS,
        metrics: Sequence[str] = (),
        lab: LabFields | None = None,
        script: Json | None = None,
    ) -> RunResult:
        """`hooks.on_event` sees the merged events; a distributed run has no default
        database, so the other hooks are never called. Scripts run locally only."""
        from oltplab import distributed

        if script is not None:
            raise ConfigError("a sysbench script runs on this host only, not on Ray")

        return distributed.run(
            workload,
            db,
            options,
            ray_address=self.address,
            clients=self.clients,
            out=out,
            argv=argv,
            results_root=self.results_root,
            on_event=hooks.on_event,
            metrics=metrics,
            lab=lab,
        )


def runner_for(
    ray: str | None, clients: int | None, *, results_root: Path = DEFAULT_RESULTS_ROOT
) -> Runner:
    """The runner for `--ray ADDRESS` and `--clients N` (local without `ray`). Choosing Ray
    checks that it is installed before any work (ConfigError saying how to install it)."""
    if ray is None:
        return LocalRunner(results_root)
    from oltplab.distributed import cluster

    cluster.require_ray()
    return RayRunner(ray, clients, results_root)
