"""``paraamr paraphrase``: template-controlled paraphrases of sentences read from stdin or a file.

    paraamr paraphrase --model DIR --template "(ROOT (S (NP) (VP) (.)))" < sentences.txt
    paraamr paraphrase --model DIR --template T1 --template T2 --input in.txt --out runs/p

    paraamr paraphrase --model DIR --input lines.tsv        # sentence<TAB>template per line

One output line per input line and template (sentence-major; with several templates each line is
``template<TAB>output``); a skipped input gives an empty line, so outputs stay aligned. Without
``--template`` every input line carries its own template after a tab. A template-infilling
model (``output_format=tree``) takes the template as it is (depth 3, as the paper's, or deeper);
a ``plain`` model gets a full parse for it from the parse generator. Counts
of skipped and truncated inputs go to stderr. With ``--out`` the work runs through the shard
runner (crash-safe, resumable; ``--shard i --num-shards n`` for job arrays) and
``outputs.jsonl`` holds every row.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from paraamr.utils import whole_number

__all__ = ["add_paraphrase_parser", "run_paraphrase"]


def add_paraphrase_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("paraphrase", help="paraphrase sentences with the syntax of a template")
    p.add_argument("--model", required=True, help="a trained SCPN dir (training's best_model)")
    p.add_argument("--template", action="append", default=None,
                   help='e.g. "(ROOT (S (NP) (VP) (.)))"; repeat for several; without it each '
                   "input line is sentence<TAB>template")  # fmt: skip
    p.add_argument("--input", default="-", help="one sentence per line (default: stdin)")
    p.add_argument("--parse-generator", default="retrieval",
                   help="retrieval (default) or a trained parse-generator dir")  # fmt: skip
    p.add_argument("--no-fit", default="skip", choices=("skip", "nearest"),
                   help="a template no training parse fits: skip it (default) or use the parse "
                   "of the nearest template (counted)")  # fmt: skip
    p.add_argument("--batch-size", type=whole_number(1), default=16)
    p.add_argument(
        "--beams", type=whole_number(1), default=None, help="beam size (default: the model's)"
    )
    p.add_argument(
        "--no-repeat-words",
        type=whole_number(1),
        default=None,
        metavar="N",
        help="no word N-gram twice in one answer (default: the model's setting)",
    )
    p.add_argument(
        "--word-cap",
        type=float,
        nargs=2,
        default=None,
        metavar=("RATIO", "EXTRA"),
        help="no output longer than RATIO x the source's words + EXTRA (default: the model's)",
    )
    p.add_argument(
        "--force-template",
        action="store_true",
        default=None,
        help="template-infilling models: decode inside each template, its brackets and labels "
        "forced, only the words free (default: the model's setting)",
    )
    p.add_argument("--on-error", default="skip", choices=("raise", "skip"))
    p.add_argument("--out", default=None, help="run through the shard runner into this dir")
    p.add_argument("--shard", type=whole_number(0), default=0)
    p.add_argument("--num-shards", type=whole_number(1), default=1)
    p.add_argument("--chunk-size", type=whole_number(1), default=64)
    p.add_argument("--device", default=None)
    return p


def _read(path: str, skips: Any) -> list[tuple[int, str]]:
    from paraamr.corpus.readers import iter_lines

    if path and path != "-":
        return list(iter_lines(path, skips))
    return list(enumerate((ln.rstrip("\n") for ln in sys.stdin), 1))


def split_templates(
    lines: list[tuple[int, str]], where: str, skips: Any
) -> tuple[list[tuple[int, str]], list[str]]:
    """``sentence<TAB>template`` lines -> ``(lines, templates)``; a line without a tab or with
    a malformed template is an error naming it (or a counted skip with ``--on-error skip``).

    >>> from paraamr.corpus.errors import SkipLog
    >>> split_templates([(1, "Hi.\\t(ROOT (S (NP) (.)))"), (2, "no tab")], "in", SkipLog("skip"))
    ([(1, 'Hi.')], ['(ROOT (S (NP) (.)))'])
    """
    from paraamr.scpn.parse_generator import TemplateError, parse_template

    out, templates = [], []
    for n, line in lines:
        sentence, tab, template = line.partition("\t")
        if not tab:
            skips.skip("no <TAB>template after the sentence (or give --template)", where, n)
            continue
        try:
            parse_template(template.strip())
        except TemplateError as e:
            skips.skip(f"bad template: {e}", where, n)
            continue
        out.append((n, sentence))
        templates.append(template.strip())
    return out, templates


def run_paraphrase(a: argparse.Namespace) -> None:
    from pathlib import Path

    from paraamr.corpus.errors import CLI_HINT, SkipLog
    from paraamr.errors import DataNotFoundError
    from paraamr.scpn.paraphrase import Paraphraser, paraphrase_to_dir
    from paraamr.scpn.parse_generator import parse_template
    from paraamr.shards import Shard

    for t in a.template or ():
        parse_template(t)  # a malformed template fails before any model loads
    if a.input != "-" and not Path(a.input).is_file():
        raise FileNotFoundError(2, "No such file or directory", a.input)
    if not Path(a.model).is_dir():
        raise DataNotFoundError(f"--model {a.model}: no such model dir (a training's best_model)")
    skips = SkipLog(a.on_error, hint=CLI_HINT)
    where = a.input if a.input != "-" else "<stdin>"
    lines = _read(a.input, skips)
    per_sentence = not a.template
    numbers = [n for n, _ in lines]  # every input line gets an output line
    if per_sentence:
        lines, templates = split_templates(lines, where, skips)
    else:
        templates = a.template
    p = Paraphraser.load(a.model, a.parse_generator, batch_size=a.batch_size, num_beams=a.beams,
                         device=a.device, no_fit=a.no_fit,
                         no_repeat_words=a.no_repeat_words, word_cap=a.word_cap,
                         force_template=a.force_template)  # fmt: skip
    if a.out:
        shard = Shard(a.shard, a.num_shards)
        rows = paraphrase_to_dir(p, lines, templates, a.out, shard=shard,
                                 chunk_size=a.chunk_size, skips=skips, where=where,
                                 per_sentence=per_sentence)  # fmt: skip
        if a.num_shards > 1:
            print(f"shard {shard.name} done in {a.out}", file=sys.stderr)
            return
        import json

        with open(f"{a.out}/outputs.jsonl", "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    else:
        rows = p.paraphrase([s for _, s in lines], templates, skips=skips, where=where,
                            lines=[n for n, _ in lines], per_sentence=per_sentence)  # fmt: skip
    several = not per_sentence and len(templates) > 1
    if per_sentence:  # lines skipped for a missing or bad template stay as empty lines
        by_line = {lines[r["index"]][0]: r["output"] or "" for r in rows}
        for n in numbers:
            print(by_line.get(n, ""))
    else:
        for r in rows:
            out = r["output"] or ""
            print(f"{r['template']}\t{out}" if several else out)
    print(
        f"paraphrased {sum(r['output'] is not None for r in rows)} of {len(rows)}; "
        f"skipped {skips.total} {dict(skips.counts)}; "
        f"truncated {sum(bool(r['truncated']) for r in rows)}; "
        f"nearest template {sum('nearest' in (r['fit'] or '') for r in rows)}"
        + _answer_note(p.counts),
        file=sys.stderr,
    )


def _answer_note(counts: Any) -> str:
    """Template-infilling counts for the summary line (empty for a plain model)."""
    if "answers_failed" not in counts:
        return ""
    return (
        f"; answers following their template {counts['answers_follows_template']}, "
        f"repaired {counts['answers_repaired']}, failed (empty line) {counts['answers_failed']}"
    )
