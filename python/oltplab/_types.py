"""Type aliases shared across the package."""

from collections.abc import Callable
from typing import Any

# A decoded JSON object: the engine's results and events (run.json is typed: documents/run.py).
Json = dict[str, Any]

# Receives the engine's progress events, decoded (see _core.pyi for their shapes).
EventHandler = Callable[[Json], None]
