"""What `oltplab report` was given: run directories, lab directories (read through the lab's
typed document and its selectors, as `show` and `compare` read them) and selectors such as
`config=pool-of-threads`. Anything else is bad input (one line, exit 2)."""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from oltplab.documents.lab import LabDocument, read_lab_document
from oltplab.documents.run import MANIFEST_FILE
from oltplab.exceptions import ConfigError
from oltplab.lab.select import lab_runs, split_args


@dataclass(frozen=True)
class Inputs:
    run_dirs: tuple[Path, ...]
    labs: tuple[tuple[Path, LabDocument], ...]  # each lab directory with its lab.json

    @property
    def lab_dirs(self) -> tuple[Path, ...]:
        return tuple(path for path, _ in self.labs)


def resolve(paths: Sequence[str | Path]) -> Inputs:
    """Run directories in the order given; a lab directory contributes its done cells'
    run directories (narrowed by any selectors), in the lab's cell order."""
    if not paths:
        raise ConfigError("oltplab report needs at least one run or lab directory")
    plain, lab_dirs, selectors = split_args([str(p) for p in paths])
    if selectors and not lab_dirs:
        raise ConfigError(f"selector {'='.join(selectors[0])} needs a lab directory to select from")
    runs: list[Path] = []
    for given in plain:
        path = Path(given)
        if path.name == MANIFEST_FILE and path.is_file():
            path = path.parent
        if not path.exists():
            raise ConfigError(f"{path} does not exist; give a run directory or a lab directory")
        if path.is_file() and path.suffix == ".toml":
            raise ConfigError(
                f"{path} is a lab file; report the lab directory that `oltplab lab run {path} "
                "--out DIR` wrote (DIR)"
            )
        if not (path / MANIFEST_FILE).is_file():
            raise ConfigError(
                f"{path} is neither a run directory (no {MANIFEST_FILE}) nor a lab directory "
                "(no lab.json); give a directory that `oltplab run --out` or `oltplab lab run` "
                "wrote"
            )
        runs.append(path)
    labs = []
    for lab in lab_dirs:
        found = lab_runs(lab, selectors)
        if not found:
            raise ConfigError(f"lab directory {lab} has no done cells to report (yet)")
        runs += found
        labs.append((lab, read_lab_document(lab)))
    unique = tuple(dict.fromkeys(p.resolve() for p in runs))
    return Inputs(unique, tuple(labs))
