"""server.json: what another oltplab process needs to find, use and stop a managed server.

It holds the engine and the settings as resolved at the first start (port and password
included), so it is private to the user who started the server (mode 0600)."""

import json
import os
from pathlib import Path
from typing import Any

from oltplab.exceptions import ConfigError
from oltplab.servers.settings import ServerSettings

STATE_FILE = "server.json"
_FORMAT = 1


def write_state(base_dir: Path, engine: str, settings: ServerSettings) -> None:
    doc = {"format": _FORMAT, "engine": engine, "settings": settings.to_json()}
    path = base_dir / STATE_FILE
    tmp = path.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    tmp.replace(path)


def read_state(base_dir: Path) -> tuple[str, ServerSettings] | None:
    """(engine, settings) of the server in `base_dir`; None when none was started there."""
    path = base_dir / STATE_FILE
    try:
        doc: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read {path}: {e}; remove the directory to start afresh") from e
    if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
        raise ConfigError(f"{path} was written by another oltplab version; recreate the server")
    return str(doc["engine"]), ServerSettings.from_json(doc["settings"])
