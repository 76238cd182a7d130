"""``python -m lecode.mock``: run the mock endpoint in the foreground (see ``lecode
mock-server --help``)."""

from __future__ import annotations

import sys

from lecode.mock.cli import main

if __name__ == "__main__":
    sys.exit(main())
