"""STS evaluation as SentEval / SimCSE report it (cosine similarity, Spearman, "all" setting).

>>> from paraamr.sts import STS_YEARS
>>> STS_YEARS[0], STS_YEARS[-1]
('STS12', 'STS16')

See :mod:`paraamr.sts.readers` for the data layouts and :mod:`paraamr.sts.evaluate` for the
metric; ``python experiments/sts.py`` runs the whole suite.
"""

from __future__ import annotations

from paraamr.sts.evaluate import (
    METRIC,
    correlations,
    evaluate_sts,
    markdown_table,
    run_sts,
    sts_signature,
)
from paraamr.sts.readers import (
    DEFAULT_INCLUDE,
    HUB_NAMES,
    SICKR,
    STS_YEARS,
    STSB_DEV,
    StsSet,
    load_hub,
    load_sts_suite,
    read_original_year,
    read_senteval_year,
    read_sickr,
    read_stsb,
)

__all__ = [
    "DEFAULT_INCLUDE",
    "HUB_NAMES",
    "METRIC",
    "SICKR",
    "STSB_DEV",
    "STS_YEARS",
    "StsSet",
    "correlations",
    "evaluate_sts",
    "load_hub",
    "load_sts_suite",
    "markdown_table",
    "read_original_year",
    "read_senteval_year",
    "read_sickr",
    "read_stsb",
    "run_sts",
    "sts_signature",
]
