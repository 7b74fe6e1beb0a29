"""What `oltplab report` was given: run directories and lab directories, resolved to the run
directories they hold. Anything else is bad input (one line, exit 2)."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from oltplab.exceptions import ConfigError
from oltplab.rundir.manifest import MANIFEST_FILE

LAB_FILE = "lab.json"
LAB_RUNS = "runs"


@dataclass(frozen=True)
class Inputs:
    run_dirs: tuple[Path, ...]
    lab_dirs: tuple[Path, ...]


def resolve(paths: Sequence[str | Path]) -> Inputs:
    """Run directories in the order given; a lab directory contributes its runs/<cell>/
    directories in name order."""
    if not paths:
        raise ConfigError("oltplab report needs at least one run or lab directory")
    runs: list[Path] = []
    labs: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.name == MANIFEST_FILE and path.is_file():
            path = path.parent
        if (path / MANIFEST_FILE).is_file():
            runs.append(path)
        elif (path / LAB_FILE).is_file():
            labs.append(path)
            runs += _lab_runs(path)
        elif not path.exists():
            raise ConfigError(f"{path} does not exist; give a run directory or a lab directory")
        else:
            raise ConfigError(
                f"{path} is neither a run directory (no {MANIFEST_FILE}) nor a lab directory "
                f"(no {LAB_FILE}); give a directory that `oltplab run --out` or `oltplab lab run` "
                "wrote"
            )
    unique = tuple(dict.fromkeys(p.resolve() for p in runs))
    return Inputs(unique, tuple(labs))


def _lab_runs(lab: Path) -> Iterable[Path]:
    found = sorted(p.parent for p in (lab / LAB_RUNS).glob(f"*/{MANIFEST_FILE}"))
    if not found:
        raise ConfigError(f"lab directory {lab} has no runs yet ({lab / LAB_RUNS} is empty)")
    return found
