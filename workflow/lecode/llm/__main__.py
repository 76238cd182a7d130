"""``python -m lecode.llm``: the LLM layer's subcommands on their own."""

from __future__ import annotations

import sys

from lecode.llm.cli import main

if __name__ == "__main__":
    sys.exit(main())
