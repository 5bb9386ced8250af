"""Scoring a paraphrase corpus on the diversity metrics of Table 2, shard by shard.

- :mod:`paraamr.diversity.scoring`: :func:`~paraamr.diversity.scoring.score_records` (every
  (source, paraphrase) pair on similarity, 1 - BLEU, 1 - IoU, TED-3 and TED-F; Self-BLEU per
  source) through the shard runner; :class:`~paraamr.diversity.scoring.MetricConfig` names
  the metrics and their settings.

The table itself (merging shards, bootstrap intervals, the paper's rows beside ours) is
orchestration: :mod:`paraamr.tables.table2` and :mod:`paraamr.tables.run_table2`.
"""
