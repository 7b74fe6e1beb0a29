"""Every example lab passes --dry-run in both its settings."""

from pathlib import Path

import pytest

from oltplab.cli.main import main
from tests.conftest import ROOT

EXAMPLES = sorted((ROOT / "examples" / "labs").glob("*.toml"))


def test_the_seed_examples_exist() -> None:
    assert [p.stem for p in EXAMPLES] == ["flushing", "servers", "stability", "threadpool", "tpcc"]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("scale", [None, "small"])
def test_dry_run(
    example: Path, scale: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["lab", "run", str(example), "--dry-run", "--out", str(tmp_path / "lab")]
    assert main(args + (["--scale", scale] if scale else [])) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"lab {example.stem}: ")
    assert not (tmp_path / "lab").exists()
