"""A Snakemake run must not run beside ``dvc repro``: DVC records (hashes and caches) the
outputs after its stage's Snakemake run ends, and a second run writing them meanwhile would
leave ``dvc.lock`` describing files that are not the ones in the workspace.

``dvc repro`` holds the repository lock ``.dvc/tmp/lock`` (an exclusive ``flock``, with the
holder's PID written in it) from start to end, recording included. The stage command
(``scripts/dvc_stage.sh``) marks its own Snakemake run with ``LECODE_DVC_STAGE=1``; any other
run started while the lock is held is refused before its first job (the Snakefile's
``onstart``). Probing takes the lock for an instant; a ``dvc`` command starting in that instant
waits and retries (DVC retries its lock for a few seconds).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Mapping
from pathlib import Path

STAGE_ENV = "LECODE_DVC_STAGE"
LOCK = Path(".dvc") / "tmp" / "lock"


def dvc_lock_holder(root: str | Path = ".") -> str | None:
    """Who holds DVC's repository lock under ``root`` (``"PID 1234"``, or ``"a dvc process"``
    when the file names none); None when nobody does."""
    path = Path(root) / LOCK
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pid = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
            return f"PID {pid}" if pid.isdigit() else "a dvc process"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def refusal(root: str | Path = ".", environ: Mapping[str, str] | None = None) -> str | None:
    """Why this Snakemake run must not start (``dvc repro`` is running and this run is not its
    stage's), or None."""
    env = os.environ if environ is None else environ
    if env.get(STAGE_ENV) == "1":
        return None
    holder = dvc_lock_holder(root)
    if holder is None:
        return None
    return (
        f"`dvc repro` is running in this project ({holder} holds {LOCK}); it records the "
        "outputs after its Snakemake run, so no other run may write them now. Wait for it to "
        "finish, then run again."
    )
