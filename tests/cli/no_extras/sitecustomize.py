"""Makes the modules named in OLTPLAB_BLOCKED_MODULES (comma-separated) unimportable, as if
their packages were not installed: put this directory on PYTHONPATH and Python imports this
file at start-up (tests/cli/test_without_extras.py). `import ray` then raises
ModuleNotFoundError and importlib.util.find_spec("ray") returns None, exactly as without Ray."""

import os
import sys

for _name in filter(None, os.environ.get("OLTPLAB_BLOCKED_MODULES", "").split(",")):
    if _name not in sys.modules:  # what start-up itself already imported stays
        sys.modules[_name] = None  # type: ignore[assignment]
