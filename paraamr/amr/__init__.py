"""AMR graph utilities: reading PENMAN files, re-focusing and linearizing graphs."""

from __future__ import annotations

from paraamr.amr.io import PenmanBlock, read_amr_file, read_penman_blocks
from paraamr.amr.refocus import POLICIES, candidate_foci, check_policy, linearize, refocus
from paraamr.errors import AMRError

__all__ = [
    "AMRError",
    "POLICIES",
    "candidate_foci",
    "check_policy",
    "linearize",
    "PenmanBlock",
    "read_amr_file",
    "read_penman_blocks",
    "refocus",
]
