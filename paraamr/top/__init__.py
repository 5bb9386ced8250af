"""Synthetic data for TOP semantic parsing by template infilling (Tran & Tan).

Phase 1 (no neural training): :mod:`~paraamr.top.trees` (read, validate, write, compare
trees), :mod:`~paraamr.top.readers` (TOP v1, ``.seq`` and TOPv2 files),
:mod:`~paraamr.top.templates` (templates, statistics, frequency buckets),
:mod:`~paraamr.top.encoding` (the generator's target encoding), :mod:`~paraamr.top.evaluate`
(exact match, the auxiliary-parser filter, low-resource subsamples) and
:mod:`~paraamr.top.pairs` (training pairs and the sampling plan the models will use).
``python -m paraamr.top stats`` prints the template statistics of a training set.
"""
