"""Chart definitions: one module per chart kind, each returning Vega-Lite charts (Altair)
that serve the HTML page and the PNG/SVG files alike."""
