"""A manifest of a folder a job wrote: every file's sha256. Rules that read such a folder by
existence (its name is a spec digest) also read its manifest, a plain file, so that rewriting
the folder in place (``--forcerun``, ``lecode retry-errors``) reaches them, while a checkout's
folder times do not."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from lecode.recordio import atomic_write_text


def write_manifest(folders: Sequence[str | Path], out: str | Path) -> None:
    data: dict[str, dict[str, str]] = {}
    for folder in folders:
        root = Path(folder)
        data[root.as_posix()] = {
            p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            if p.is_file()
        }
    atomic_write_text(out, json.dumps(data, indent=1, sort_keys=True) + "\n")
