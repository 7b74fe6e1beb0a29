import pytest

from tests.report.html_fixtures import Built, build


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """One report of synthesised runs (two configs, three connection counts, repeats) and a
    real SQLite run, shared by the HTML report's tests."""
    return build(tmp_path_factory.mktemp("html"))
