"""Checks of the PNG and SVG files a report writes: they decode, the PNG has the SVG's size
at PNG_SCALE, and neither is blank."""

from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageStat

from oltplab.report.html.export import PNG_SCALE


def assert_drawn_images(pngs: Sequence[Path], svgs: Sequence[Path]) -> None:
    assert len(pngs) == len(svgs) > 0
    for png, svg in zip(sorted(pngs), sorted(svgs), strict=True):
        assert png.stem == svg.stem
        root = svg.read_text()
        assert root.startswith("<svg")
        assert "</svg>" in root
        width = float(root.split('width="', 1)[1].split('"', 1)[0])
        height = float(root.split('height="', 1)[1].split('"', 1)[0])
        image = Image.open(png)
        image.load()
        # The PNG is the SVG's drawing at PNG_SCALE: its stated size.
        assert image.size == (round(width * PNG_SCALE), round(height * PNG_SCALE)), png.name
        grey = ImageStat.Stat(image.convert("L"))
        assert grey.stddev[0] > 10, png.name  # not uniform
        assert root.count("<path") > 5, svg.name
