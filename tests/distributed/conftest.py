"""A real multi-node Ray cluster on this machine (ray.cluster_utils.Cluster: one raylet
per node, on loopback), small enough for a 2-core machine: a head and two workers of one
CPU each and 80 MiB of object store. The runs under test are `oltplab` processes joining
it with --ray=ADDRESS, exactly as a user's driver joins a real cluster."""

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

NODES = 3
OBJECT_STORE_BYTES = 80 * 1024 * 1024
NODE_ARGS: dict[str, Any] = {
    "num_cpus": 1,
    "object_store_memory": OBJECT_STORE_BYTES,
    "include_dashboard": False,
}
# No token files in the user's home, no usage reports: a private loopback cluster.
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


def oltplab(*args: str, timeout_s: float = 180) -> subprocess.CompletedProcess[str]:
    """`oltplab ARGS` with the cluster's environment, without --ray (a lab, show, check...)."""
    return subprocess.run(
        [sys.executable, "-m", "oltplab", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=os.environ | RAY_ENV,
    )


class RayCluster:
    def __init__(self) -> None:
        from ray.cluster_utils import Cluster

        self.cluster = Cluster(initialize_head=True, head_node_args=NODE_ARGS)
        self.workers = [self.cluster.add_node(**NODE_ARGS) for _ in range(NODES - 1)]
        self.cluster.wait_for_nodes()

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def oltplab(self, *args: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
        """`oltplab ARGS --ray=ADDRESS` as a user runs it."""
        return subprocess.run(
            [sys.executable, "-m", "oltplab", *args, f"--ray={self.address}"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=os.environ | RAY_ENV,
        )

    def popen(self, *args: str, out: Path) -> subprocess.Popen[str]:
        """Started in the background, its output in `out`/stdout and `out`/stderr."""
        with (out / "stdout").open("w") as stdout, (out / "stderr").open("w") as stderr:
            return subprocess.Popen(
                [sys.executable, "-m", "oltplab", *args, f"--ray={self.address}"],
                stdout=stdout,
                stderr=stderr,
                text=True,
                env=os.environ | RAY_ENV,
            )

    def shutdown(self) -> None:
        self.cluster.shutdown()  # type: ignore[no-untyped-call]


@pytest.fixture(scope="package")  # not the session's: its raylets would idle on through the
def ray_cluster() -> Iterator[RayCluster]:  # timing tests after tests/distributed
    os.environ.update(RAY_ENV)
    cluster = RayCluster()
    try:
        yield cluster
    finally:
        cluster.shutdown()
