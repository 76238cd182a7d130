"""``python -m lecode.cli``: the LLM layer's subcommands on their own."""

from __future__ import annotations

import sys

from lecode.cli.llm import main

if __name__ == "__main__":
    sys.exit(main())
