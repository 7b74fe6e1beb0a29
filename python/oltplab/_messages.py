"""Error messages that quote what the user typed: a database URL in the quoted text is shown
redacted (redact.py), so that a misplaced URL never prints its password."""

import re

from oltplab.redact import redact_url

_URL_IN_TEXT = re.compile(r"[A-Za-z][\w+.-]*://[^\s']*")


def without_url_secrets(text: str) -> str:
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group()), text)
