"""One colour per config across every chart, from a colour-blind-safe palette (Okabe & Ito,
"Color Universal Design"), ordered so that the first configs are the most distinct; the
yellow, weak on white paper, comes last."""

from collections.abc import Sequence

OKABE_ITO = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow
)
# Annotation layers drawn in greys, so that they never read as a config.
WARMUP_GREY = "#9e9e9e"
STALL_INK = "#222222"


def colours(configs: Sequence[str]) -> dict[str, str]:
    """Config -> colour, in the configs' order (cycling past eight configs)."""
    return {c: OKABE_ITO[i % len(OKABE_ITO)] for i, c in enumerate(configs)}
