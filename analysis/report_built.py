"""The offline ParaAMR analogue in numbers (Table 1, rejects, perplexity filter, the paper's
claim) from the folders ``make corpus-offline`` writes (:mod:`paraamr.tables.built_report`).

python analysis/report_built.py --built results/built [--max-ppl 120] [--out report.json]
python analysis/report_built.py --built results/built-seed0 --built results/built-seed1
    (several runs: each one's report, then the checks side by side with mean, lowest, highest)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from paraamr.errors import cli_errors
from paraamr.tables.built_report import checks_across, report_built


@cli_errors("python analysis/report_built.py")
def main(argv: list[str] | None = None) -> dict:
    """One ``--built`` folder: its report (``{set: ...}``); several: ``{"runs": {folder: its
    report}, "across": checks_across(...)}``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--built", action="append", default=None, metavar="BUILT",
                    help="make corpus-offline's BUILT (default results/built; repeatable: "
                    "runs side by side)")  # fmt: skip
    ap.add_argument("--max-ppl", type=float, default=120.0, help="the filter to count")
    ap.add_argument("--out", default=None, help="JSON of every number printed")
    a = ap.parse_args(argv)
    folders = a.built or ["results/built"]
    if len(set(folders)) < len(folders):
        ap.error("a --built folder is named twice")
    runs = {}
    for folder in folders:
        runs[folder], text = report_built(Path(folder), a.max_ppl)
        print(f"## {folder}\n\n{text}" if len(folders) > 1 else text)
    out = runs[folders[0]]
    if len(folders) > 1:
        across, text = checks_across(runs)
        out = {"runs": runs, "across": across}
        print("## side by side\n\n" + text)
    if a.out:
        Path(a.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
