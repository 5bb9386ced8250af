"""The paper's tables: orchestration that runs the library on configs and writes tables.

Library code (corpus, metrics, parsers, amr, builder, training, simcse, sts) never imports this
package; entry points in ``experiments/`` and ``analysis/`` do.

- :mod:`paraamr.tables.render`: md / csv / json writers with the paper's rows beside ours.
- :mod:`paraamr.tables.table2`, :mod:`paraamr.tables.run_table2`: Table 2 (the scoring of one
  shard: :mod:`paraamr.diversity.scoring`).
- :mod:`paraamr.tables.table5`: Table 5 gathering (the jobs: :mod:`paraamr.simcse.job`).
"""
