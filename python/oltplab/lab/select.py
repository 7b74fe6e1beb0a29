"""Lab directories as arguments of `show`, `compare` and `table`: a lab stands for its done
cells' run directories, narrowed by selectors such as `config=pool-of-threads`."""

from collections.abc import Sequence
from pathlib import Path

from oltplab.documents.lab import CellRecord, is_lab_dir, read_lab_document
from oltplab.exceptions import ConfigError

SELECTOR_KEYS = ("server", "config", "workload", "threads", "rate", "repeat")
Selector = tuple[str, str]


def parse_selector(text: str) -> Selector | None:
    """`config=pool-of-threads` -> ("config", "pool-of-threads"); None for a path."""
    key, sep, value = text.partition("=")
    if not sep or "/" in key or Path(text).exists():
        return None
    if key not in SELECTOR_KEYS:
        raise ConfigError(
            f"selector {text!r}: unknown key {key!r}; use one of: {', '.join(SELECTOR_KEYS)}"
        )
    return key, value


def _value(cell: CellRecord, key: str) -> str:
    value = getattr(cell, key)
    return f"{value:g}" if isinstance(value, float) else str(value)


def matches(cell: CellRecord, selectors: Sequence[Selector]) -> bool:
    """All selectors hold; several values of one key are alternatives."""
    keys = {k for k, _ in selectors}
    return all(_value(cell, k) in {v for kk, v in selectors if kk == k} for k in keys)


def lab_runs(
    lab_dir: Path, selectors: Sequence[Selector] = (), exclude: Sequence[Selector] = ()
) -> list[Path]:
    doc = read_lab_document(lab_dir)
    return [
        lab_dir / c.run_dir
        for c in doc.cells
        if c.status == "done"
        and c.run_dir is not None
        and matches(c, selectors)
        and not (exclude and matches(c, exclude))
    ]


def split_args(args: Sequence[str]) -> tuple[list[str], list[Path], list[Selector]]:
    """(plain run directories, lab directories, selectors)."""
    runs: list[str] = []
    labs: list[Path] = []
    selectors: list[Selector] = []
    for arg in args:
        selector = parse_selector(arg)
        if selector is not None:
            selectors.append(selector)
        elif is_lab_dir(Path(arg)):
            labs.append(Path(arg))
        else:
            runs.append(arg)
    return runs, labs, selectors


def expand(args: Sequence[str], exclude: Sequence[Selector] = ()) -> list[str]:
    """Run directories for `args`: labs become their (selected) cells' run directories."""
    runs, labs, selectors = split_args(args)
    if selectors and not labs:
        raise ConfigError(f"selector {'='.join(selectors[0])} needs a lab directory to select from")
    for lab in labs:
        runs += [str(p) for p in lab_runs(lab, selectors, exclude)]
    return runs


def compare_sides(
    candidates: Sequence[str], baselines: Sequence[str]
) -> tuple[list[str], list[str]]:
    """`compare LAB [config=b] --vs config=a`: the baseline selectors pick from the
    candidates' labs; candidates are then the labs' other cells."""
    _, labs, candidate_selectors = split_args(candidates)
    base_runs, base_labs, base_selectors = split_args(baselines)
    if base_selectors and not base_labs:
        if not labs:
            raise ConfigError("--vs config=...: give a lab directory as the candidate")
        # The candidates' narrowing (threads=512) holds for the baseline too, but for the keys
        # the baseline names itself (config=...).
        named = {k for k, _ in base_selectors}
        selectors = [s for s in candidate_selectors if s[0] not in named] + base_selectors
        base = base_runs + [str(p) for lab in labs for p in lab_runs(lab, selectors)]
        return expand(candidates, exclude=base_selectors), base
    return expand(candidates), expand(baselines)


def label_of(selector_or_label: str, lab_args: Sequence[str]) -> str:
    """`--baseline config=X` in a table of labs: the label (server/config) of those runs."""
    selector = parse_selector(selector_or_label)
    if selector is None:
        return selector_or_label
    for lab in split_args(lab_args)[1]:
        for c in read_lab_document(lab).cells:
            if matches(c, [selector]):
                return f"{c.server}/{c.config}"
    raise ConfigError(f"no lab cell matches {selector_or_label}")
