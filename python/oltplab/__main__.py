"""`python -m oltplab` is the `oltplab` command."""

import sys

from oltplab.cli.main import main

sys.exit(main())
