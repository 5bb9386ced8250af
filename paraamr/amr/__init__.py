"""AMR graph utilities: reading PENMAN files, re-focusing and linearizing graphs."""

from __future__ import annotations

from paraamr.amr.refocus import (
    POLICIES,
    AMRError,
    candidate_foci,
    check_policy,
    linearize,
    read_amr_file,
    refocus,
)

__all__ = [
    "AMRError",
    "POLICIES",
    "candidate_foci",
    "check_policy",
    "linearize",
    "read_amr_file",
    "refocus",
]
