"""Step ``build_sft_data``: training dialogues of one SFT variant (:mod:`lecode.sft.make_data`)."""

from lecode.sft.make_data import run

__all__ = ["run"]
