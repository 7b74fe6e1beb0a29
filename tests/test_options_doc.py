"""docs/options.md is generated from the engine's catalogue and must be current."""

from pathlib import Path

from oltplab.catalog import load_catalog
from oltplab.options_doc import render

DOC = Path(__file__).resolve().parent.parent / "docs" / "options.md"


def test_options_doc_is_current() -> None:
    assert DOC.read_text() == render(load_catalog()), "docs/options.md is stale: run `make docs`"


def test_every_option_is_documented() -> None:
    text = DOC.read_text()
    catalog = load_catalog()
    for d in catalog.all_options().values():
        assert f"`{d.flag}`" in text
