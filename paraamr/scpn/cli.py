"""``paraamr paraphrase``: template-controlled paraphrases of sentences read from stdin or a file.

    paraamr paraphrase --model DIR --template "(ROOT (S (NP) (VP) (.)))" < sentences.txt
    paraamr paraphrase --model DIR --template T1 --template T2 --input in.txt --out runs/p

One output line per input line and template (sentence-major; with several templates each line is
``template<TAB>output``); a skipped input gives an empty line, so outputs stay aligned. Counts
of skipped and truncated inputs go to stderr. With ``--out`` the work runs through the shard
runner (crash-safe, resumable; ``--shard i --num-shards n`` for job arrays) and
``outputs.jsonl`` holds every row.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_paraphrase_parser", "run_paraphrase"]


def add_paraphrase_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("paraphrase", help="paraphrase sentences with the syntax of a template")
    p.add_argument("--model", required=True, help="a trained SCPN dir (training's best_model)")
    p.add_argument("--template", action="append", required=True,
                   help='e.g. "(ROOT (S (NP) (VP) (.)))"; repeat for several')  # fmt: skip
    p.add_argument("--input", default="-", help="one sentence per line (default: stdin)")
    p.add_argument("--parse-generator", default="retrieval",
                   help="retrieval (default) or a trained parse-generator dir")  # fmt: skip
    p.add_argument("--no-fit", default="skip", choices=("skip", "nearest"),
                   help="a template no training parse fits: skip it (default) or use the parse "
                   "of the nearest template (counted)")  # fmt: skip
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--beams", type=int, default=None, help="beam size (default: the model's)")
    p.add_argument("--on-error", default="skip", choices=("raise", "skip"))
    p.add_argument("--out", default=None, help="run through the shard runner into this dir")
    p.add_argument("--shard", type=int, default=0)
    p.add_argument("--num-shards", type=int, default=1)
    p.add_argument("--chunk-size", type=int, default=64)
    p.add_argument("--device", default=None)
    return p


def _read(path: str, skips: Any) -> list[tuple[int, str]]:
    from paraamr.corpus.readers import iter_lines

    if path and path != "-":
        return list(iter_lines(path, skips))
    return list(enumerate((ln.rstrip("\n") for ln in sys.stdin), 1))


def run_paraphrase(a: argparse.Namespace) -> None:
    from paraamr.corpus.errors import SkipLog
    from paraamr.scpn.paraphrase import Paraphraser, paraphrase_to_dir
    from paraamr.scpn.parse_generator import parse_template
    from paraamr.shards import Shard

    for t in a.template:
        parse_template(t)  # a malformed template fails before any model loads
    skips = SkipLog(a.on_error)
    where = a.input if a.input != "-" else "<stdin>"
    lines = _read(a.input, skips)
    p = Paraphraser.load(a.model, a.parse_generator, batch_size=a.batch_size, num_beams=a.beams,
                         device=a.device, no_fit=a.no_fit)  # fmt: skip
    if a.out:
        shard = Shard(a.shard, a.num_shards)
        rows = paraphrase_to_dir(p, lines, a.template, a.out, shard=shard,
                                 chunk_size=a.chunk_size, skips=skips, where=where)  # fmt: skip
        if a.num_shards > 1:
            print(f"shard {shard.name} done in {a.out}", file=sys.stderr)
            return
        import json

        with open(f"{a.out}/outputs.jsonl", "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    else:
        rows = p.paraphrase([s for _, s in lines], a.template, skips=skips, where=where,
                            lines=[n for n, _ in lines])  # fmt: skip
    several = len(a.template) > 1
    for r in rows:
        out = r["output"] or ""
        print(f"{r['template']}\t{out}" if several else out)
    print(
        f"paraphrased {sum(r['output'] is not None for r in rows)} of {len(rows)}; "
        f"skipped {skips.total} {dict(skips.counts)}; "
        f"truncated {sum(bool(r['truncated']) for r in rows)}; "
        f"nearest template {sum('nearest' in (r['fit'] or '') for r in rows)}",
        file=sys.stderr,
    )
