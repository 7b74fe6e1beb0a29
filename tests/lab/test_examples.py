"""Every example lab passes --dry-run in each of its settings; the medium ones (the published
studies, docs/studies/) plan at most 35 minutes of measured time."""

import re
from pathlib import Path

import pytest

from oltplab.cli.main import main
from tests.conftest import ROOT

EXAMPLES = sorted((ROOT / "examples" / "labs").glob("*.toml"))
MEDIUM_BUDGET_MIN = 35.0


def test_the_seed_examples_exist() -> None:
    assert [p.stem for p in EXAMPLES] == [
        "flushing",
        "servers",
        "stability",
        "threadpool-open-loop",
        "threadpool",
        "tpcc",
    ]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("scale", [None, "small", "medium"])
def test_dry_run(
    example: Path, scale: str | None, lab_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # lab_dir: a directory the servers' accounts can reach (a dry run refuses one they cannot).
    args = ["lab", "run", str(example), "--dry-run", "--out", str(lab_dir)]
    assert main(args + (["--scale", scale] if scale else [])) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"lab {example.stem}: ")
    assert not lab_dir.exists()
    if scale == "medium":
        planned = re.search(r"([\d.]+) min measured", out)
        assert planned is not None, out
        assert 10.0 <= float(planned.group(1)) <= MEDIUM_BUDGET_MIN
