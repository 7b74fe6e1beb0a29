"""Shared fixtures. Unit tests run against synthetic engine output (tests/synthetic.py)
and a fake engine (tests/fakecore.py), so they need neither the compiled engine nor a
database; tests/test_cli_e2e.py runs the real one."""

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("oltplab") is None:  # a checkout where `maturin develop` never ran
    sys.path.insert(0, str(ROOT / "python"))

from oltplab import engine  # noqa: E402
from oltplab.catalog import load_catalog  # noqa: E402
from tests.fakecore import FakeCore  # noqa: E402


@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCore]:
    """Replaces the compiled engine with a scripted fake for the duration of a test."""
    core = FakeCore()
    monkeypatch.setattr(engine, "_load_core", lambda: core)
    load_catalog.cache_clear()
    yield core
    load_catalog.cache_clear()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs the test from an empty directory (the default results root is relative)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
