"""Fixtures of the image tier (``make test-image``): the image `make image` built for this
lock file, and commands run in it through ``scripts/in_image.sh``.

Outside ``make test-image`` a missing image skips these tests; under it
(``LECODE_IMAGE_TESTS=1``) it fails them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REQUIRED = os.environ.get("LECODE_IMAGE_TESTS") == "1"
IN_IMAGE = REPO / "scripts" / "in_image.sh"


def image_setting(name: str) -> str:
    """A variable of scripts/image_env.sh (IMAGE_REF, IMAGE_TAG, ENGINE, LOCK_DIGEST)."""
    proc = subprocess.run(
        ["bash", "-c", f'source scripts/image_env.sh && echo "${name}"'],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return proc.stdout.strip()


def in_image(
    cwd: Path, *args: str, network: str = "host", timeout: int = 900
) -> subprocess.CompletedProcess[str]:
    """``args`` run in the image with ``cwd`` mounted as the working directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LECODE_")}
    env["LECODE_IMAGE_NETWORK"] = network
    return subprocess.run(
        ["bash", str(IN_IMAGE), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.fixture(scope="session")
def image() -> str:
    """The image's reference; skips (fails under make test-image) when it is not built."""
    ref = image_setting("IMAGE_REF")
    engine = image_setting("ENGINE")
    proc = subprocess.run(
        [engine, "image", "inspect", ref], capture_output=True, text=True, timeout=60
    )
    if proc.returncode != 0:
        why = f"no image {ref}: make image"
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)
    return ref
