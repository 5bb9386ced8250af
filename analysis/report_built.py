"""The offline ParaAMR analogue in numbers (Table 1, rejects, perplexity filter, the paper's
claim) from the folders ``make corpus-offline`` writes (:mod:`paraamr.tables.built_report`).

python analysis/report_built.py --built results/built [--max-ppl 120] [--out report.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from paraamr.errors import cli_errors
from paraamr.tables.built_report import report_built


@cli_errors("python analysis/report_built.py")
def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--built", default="results/built", help="make corpus-offline's BUILT")
    ap.add_argument("--max-ppl", type=float, default=120.0, help="the filter to count")
    ap.add_argument("--out", default=None, help="JSON of every number printed")
    a = ap.parse_args(argv)
    out, text = report_built(Path(a.built), a.max_ppl)
    print(text)
    if a.out:
        Path(a.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
