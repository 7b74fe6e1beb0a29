"""The report in a real headless Chromium: it renders with no console error and no request
beyond its own file, every chart draws marks, and a full-page screenshot is not blank."""

import pytest
from PIL import Image, ImageStat

from tests.report.browser import Page, chromium_page
from tests.report.html_fixtures import Built

# Vega's SVG: data marks are the children of g.role-mark groups (axes and legends are not).
MARKS_PER_CHART = """Array.from(document.querySelectorAll('div.chart')).map(
  e => [e.dataset.name, e.querySelectorAll('g.role-mark > *').length,
        e.querySelectorAll('svg').length])"""


@pytest.fixture(scope="module")
def opened(built: Built, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    shot = tmp_path_factory.mktemp("shots") / "report.png"
    with chromium_page() as page:
        page.open(built.html, "window.__report")
        marks = page.evaluate(MARKS_PER_CHART)
        failures = page.evaluate("window.__report.failures")
        sorted_rows = page.evaluate(
            """(() => { const t = document.getElementById('runs');
                 t.querySelectorAll('th')[4].click();
                 return Array.from(t.tBodies[0].rows)
                   .map(r => parseFloat(r.cells[4].dataset.value)); })()"""
        )
        zoom = _wheel_zoom(page)
        page.screenshot(shot)
        log = page.log
    return {
        "marks": marks,
        "failures": failures,
        "log": log,
        "shot": shot,
        "sorted": sorted_rows,
        "zoom": zoom,
    }


def _wheel_zoom(page: Page) -> dict[str, object]:
    """Turns the mouse wheel over a timeline's top panel: (x domain before, after, the
    view's scales). Every panel draws from the one x scale, so one zoom moves them all."""
    name = page.evaluate("Object.keys(window.__report.views).find(n => n.startsWith('timeline-'))")
    view = f"window.__report.views['{name}']"
    svg = f"document.querySelector('div.chart[data-name=\"{name}\"] svg')"
    before = page.evaluate(f"{view}.scale('x').domain()")
    page.evaluate(f"{svg}.scrollIntoView()")
    box = page.evaluate(
        f"(() => {{ const r = {svg}.getBoundingClientRect(); return [r.left, r.top]; }})()"
    )
    for _ in range(3):
        page.send(
            "Input.dispatchMouseEvent",
            type="mouseWheel",
            x=box[0] + 300,
            y=box[1] + 150,
            deltaX=0,
            deltaY=-300,
        )
    page.evaluate("new Promise(r => setTimeout(r, 500))")
    after = page.evaluate(f"{view}.scale('x').domain()")
    scales = page.evaluate(f"Object.keys({view}._runtime.scales)")
    return {"before": before, "after": after, "scales": scales}


def test_no_console_error_and_no_request(built: Built, opened: dict[str, object]) -> None:
    log = opened["log"]
    assert log.console_errors == []  # type: ignore[attr-defined]
    assert log.exceptions == []  # type: ignore[attr-defined]
    # The only request is the page itself, from its file: no CDN, no font, no image.
    assert log.requests == [built.html.resolve().as_uri()]  # type: ignore[attr-defined]
    assert opened["failures"] == []


def test_every_chart_draws_marks(built: Built, opened: dict[str, object]) -> None:
    marks = {name: (count, svgs) for name, count, svgs in opened["marks"]}  # type: ignore[attr-defined]
    assert sorted(marks) == sorted(c.name for c in built.report.charts)
    for name, (count, svgs) in marks.items():
        assert svgs >= 1, name
        assert count > 0, name
    kinds = {name.split("-")[0] for name in marks}
    assert kinds >= {"scaling", "timeline", "boxplot", "spectrum", "statements"}


def test_screenshot_is_not_blank(opened: dict[str, object]) -> None:
    image = Image.open(opened["shot"]).convert("L")  # type: ignore[arg-type]
    width, height = image.size
    assert width >= 1000, image.size
    assert height > 3000, image.size
    stats = ImageStat.Stat(image)
    assert stats.stddev[0] > 20, stats.stddev
    assert sum(1 for n in image.histogram() if n) > 50  # grey levels in use


def test_tables_sort_by_number(opened: dict[str, object]) -> None:
    values = opened["sorted"]
    assert isinstance(values, list)
    assert values == sorted(values)
    assert len(values) > 10


def test_timeline_panels_zoom_together(opened: dict[str, object]) -> None:
    zoom = opened["zoom"]
    assert isinstance(zoom, dict)
    (lo0, hi0), (lo1, hi1) = zoom["before"], zoom["after"]
    assert hi1 - lo1 < 0.8 * (hi0 - lo0)  # the wheel zoomed in
    scales = zoom["scales"]
    # One x scale for the tps and latency panels (and metrics when present); a y each.
    assert [s for s in scales if s.endswith("x")] == ["x"]
    assert len([s for s in scales if s.endswith("_y")]) >= 2
