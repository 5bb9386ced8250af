"""Merge Table 2 shards (cluster job arrays) and write table2.{md,csv,json} + W&B runs.

python analysis/make_table2.py --out results/table2 [--names ParaNMT ParaBank1] [--bootstrap 1000]
    [--acceptable] [--min-similarity 0.6|acceptable]

``--acceptable`` adds the acceptable share the scoring jobs calibrated (``OUT/acceptable.json``).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from paraamr.corpus.filters import similarity_floor
from paraamr.errors import cli_errors
from paraamr.tables.run_table2 import finish_table2


@cli_errors("python analysis/make_table2.py")
def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="results/table2", help="the scoring run's out_dir")
    ap.add_argument("--names", nargs="*", help="corpora in table order (default: all, sorted)")
    ap.add_argument("--bootstrap", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--description", default="merged shards")
    ap.add_argument("--no-wandb", action="store_true")
    ap.add_argument(
        "--min-similarity",
        type=lambda v: similarity_floor(v, "--min-similarity"),
        help="also a row per corpus with only its pairs at or above this cosine (or "
        "'acceptable': the calibrated one)",
    )
    ap.add_argument(
        "--acceptable",
        action="store_true",
        help="the acceptable-share column (the scoring jobs ran with acceptable.enabled)",
    )
    args = ap.parse_args(argv)
    names = args.names or sorted(p.name for p in (Path(args.out) / "shards").iterdir())
    wandb_cfg = {
        "enabled": not args.no_wandb,
        "project": "paraamr",
        "group": "table2",
        "mode": os.environ.get("WANDB_MODE"),
    }
    return finish_table2(
        args.out,
        names,
        meta={"description": args.description},
        bootstrap=args.bootstrap,
        seed=args.seed,
        wandb_cfg=wandb_cfg,
        min_similarity=args.min_similarity,
        acceptable=args.acceptable,
    )


if __name__ == "__main__":
    main()
