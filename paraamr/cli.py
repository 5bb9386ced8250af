"""Command line: ``paraamr <command>``. Each metric is usable on its own.

paraamr ted "(ROOT (S (NP (PRP I)) (VP (VBP know))))" "(ROOT (S (VP (VB go))))" --depth 3
paraamr metric bleu pairs.tsv          # source<TAB>paraphrase per line -> one value per line
paraamr metric tedf trees.tsv --trees  # tree<TAB>tree per line
paraamr score corpus.jsonl --out results/one   # one corpus, all five metrics, signed
paraamr paraphrase --model DIR --template "(ROOT (S (NP) (VP) (.)))" < sentences.txt
paraamr build-merge --out DIR --num-shards 4     # join a sharded build, write its Table 1
paraamr table1 corpus.jsonl                     # Table 1 statistics of a built corpus
paraamr paired results/table2 ParaAMR ParaNMT    # two corpora of a Table 2 run, source by source
paraamr humaneval sample A=a.jsonl B=b.tsv:paranmt --n 300 --out kit   # Table 4: blind kit
paraamr humaneval score --dir kit Batch_results.csv answers-*.json --out results/table4
paraamr humaneval examples A=a.jsonl B=b.tsv:paranmt --k 5 --out examples.md   # Table 3
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from paraamr.corpus.readers import FORMATS, check_corpus_path
from paraamr.errors import cli_errors
from paraamr.utils import whole_number

METRIC_NAMES = ("similarity", "bleu", "iou", "ted3", "tedf")
_positive = whole_number(1)


def _existing_file(path: str | None) -> None:
    """Fail before any model loads when an input file is missing or a folder (``-``: stdin)."""
    if path and path != "-":
        check_corpus_path(path)


def _word_band(text: str) -> tuple[int, int | None]:
    """``LO:HI`` (or ``LO:``) as ``(lo, hi)``: whole numbers, ``lo < hi``.

    >>> _word_band("10:25"), _word_band("25:")
    ((10, 25), (25, None))
    """
    lo, sep, hi = text.partition(":")
    try:
        band = (int(lo), int(hi) if hi.strip() else None)
    except ValueError:
        band = None
    if not sep or band is None or band[0] < 0 or (band[1] is not None and band[1] <= band[0]):
        raise argparse.ArgumentTypeError(f"expected LO:HI or LO: with 0 <= LO < HI, got {text!r}")
    return band


def _ted_variants() -> list[str]:
    """The TED variants' names, those signatures print (``paraamr-v2``) among them."""
    from paraamr.metrics.ted import variant_names

    return variant_names()


def _ted_variant(name: str) -> str:
    """``--variant`` / ``--ted-variant``: a preset name or the ``name-vN`` of a signature."""
    from paraamr.metrics.ted import variant_name

    try:
        return variant_name(name)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _pairs(path: str | None, skips):
    from paraamr.corpus.readers import iter_lines

    lines = (
        iter_lines(path, skips)
        if path and path != "-"
        else enumerate((ln.rstrip("\n") for ln in sys.stdin), 1)
    )
    for n, line in lines:
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != 2:
            skips.skip(f"expected 2 tab-separated columns, got {len(cols)}", path or "<stdin>", n)
            continue
        yield cols[0], cols[1]


def _cmd_ted(a) -> None:
    from paraamr.metrics.ted import tree_edit_distance

    print(tree_edit_distance(a.tree_a, a.tree_b, depth=a.depth, variant=a.variant, kernel=a.kernel))


#: the metrics ``paraamr metric`` prints in percent (Table 2's scale; TED in edit operations)
PERCENT_METRICS = ("similarity", "bleu", "iou")


def metric_value(name: str, value: float) -> str:
    """One value of ``paraamr metric`` as printed: similarity, BLEU and IoU in percent with two
    decimals (the scale ``paraamr score`` and Table 2 use; they report 100 - BLEU and 100 - IoU),
    TED as its edit count.

    >>> metric_value("bleu", 9.53e-155), metric_value("iou", 0.5), metric_value("ted3", 4)
    ('0.00', '50.00', '4')
    """
    if name in PERCENT_METRICS:
        return f"{100.0 * value:.2f}"
    return f"{value:g}"


def _cmd_metric(a) -> None:
    from paraamr.corpus.errors import CLI_HINT, SkipLog
    from paraamr.corpus.readers import require_records

    _existing_file(a.file)
    skips = SkipLog(a.on_error, hint=CLI_HINT)
    where = a.file if a.file and a.file != "-" else "<stdin>"
    pairs = list(require_records(_pairs(a.file, skips), where, skips=skips))

    from paraamr.metrics.pairwise import Bleu, Similarity, TokenIoU, TreeEdit

    ted = TreeEdit(a.variant, 3 if a.name == "ted3" else None)
    if a.name == "similarity":
        from paraamr.metrics.semantic import load_encoder

        vals = Similarity(load_encoder(a.model), a.model).pair_scores(pairs)
    elif a.name in ("ted3", "tedf") and a.trees:
        vals = ted.pair_scores(pairs)
    else:
        from paraamr.parsers.base import make_parser, parse_unique

        parsed = parse_unique([s for p in pairs for s in p], make_parser(a.parser))
        vals = []
        for x, y in pairs:
            px, py = parsed[x], parsed[y]
            if isinstance(px, Exception) or isinstance(py, Exception):
                skips.skip(f"not parsed: {px if isinstance(px, Exception) else py}")
                continue
            if a.name == "bleu":
                vals.append(Bleu().sentence_score(py.tokens, px.tokens))
            elif a.name == "iou":
                vals.append(TokenIoU().sentence_score(py.tokens, px.tokens))
            else:
                vals.append(ted.sentence_score(px.tree, py.tree))
    for v in vals:
        print(metric_value(a.name, v))
    if vals:
        mean = metric_value(a.name, sum(vals) / len(vals))
        print(f"mean\t{mean}\tn={len(vals)}\tskipped={skips.total}", file=sys.stderr)


def _cmd_score(a) -> None:
    from paraamr.corpus.errors import CLI_HINT, SkipLog
    from paraamr.corpus.readers import read_corpus, require_records
    from paraamr.diversity.scoring import MetricConfig, score_records
    from paraamr.metrics.semantic import load_encoder
    from paraamr.metrics.signature import metric_signature
    from paraamr.parsers.base import make_parser
    from paraamr.tables.table2 import corpus_dir, table2_row
    from paraamr.utils import limited

    skips = SkipLog(a.on_error, hint=CLI_HINT)
    # the whole input is read once before spaCy and the encoder load: a missing, folder, empty
    # or malformed input fails at once, with its file and line
    check = SkipLog(a.on_error, hint=CLI_HINT)
    total = sum(
        1 for _ in require_records(read_corpus(a.file, a.format, check), a.file, skips=check)
    )
    records = read_corpus(a.file, a.format, skips)
    cfg = MetricConfig(
        bleu=a.bleu, ted_variant=a.ted_variant, on_error=a.on_error, lowercase=a.lowercase
    )
    parser = make_parser(a.parser)
    sig = metric_signature(
        similarity=a.similarity,
        parser_sig=parser.signature(),
        bleu=a.bleu,
        ted_variant=a.ted_variant,
        ted_kernel=cfg.ted_kernel,
        ted3_depth=cfg.ted3_depth,
        data=a.file,
        lowercase=a.lowercase,
    )
    out = a.out or tempfile.mkdtemp(prefix="paraamr-score-")
    try:
        score_records(
            limited(records, a.limit),
            parser=parser,
            encoder=load_encoder(a.similarity),
            cfg=cfg,
            out_dir=corpus_dir(out, "corpus"),
            signature=sig,
            skips=skips,
        )
    except BaseException:
        if not a.out:  # no temp folder left behind
            import shutil

            shutil.rmtree(out, ignore_errors=True)
        raise
    row = table2_row(out, "corpus")
    row["records_read"] = total
    if a.out:
        from paraamr.tables.render import write_table
        from paraamr.tables.table2 import TABLE2

        write_table(replace(TABLE2, name="score", paper=()), [row], a.out, {"description": a.file})
        from paraamr.utils import write_json_atomic

        write_json_atomic(Path(a.out) / "score.json", row, sort_keys=False)
    print(json.dumps(row, indent=2))


def _cmd_build_merge(a) -> None:
    from paraamr.tables.table1 import merge_corpus

    merge_corpus(a.out, a.num_shards)


def _cmd_table1(a) -> None:
    from paraamr.builder.stats import table1_stats
    from paraamr.corpus.errors import CLI_HINT, SkipLog
    from paraamr.corpus.readers import read_corpus, require_records
    from paraamr.tables.table1 import render_table1

    skips = SkipLog(a.on_error, hint=CLI_HINT)
    records = require_records(read_corpus(a.corpus, a.format, skips), a.corpus, skips=skips)
    stats = table1_stats(r.to_json() for r in records)
    if a.json:
        print(json.dumps(stats, indent=2))
    else:
        print(render_table1(Path(a.corpus).name, stats, a.corpus))


def _cmd_paired(a) -> None:
    from paraamr.errors import DataNotFoundError
    from paraamr.tables.paired import compare_corpora, render_paired

    if not Path(a.run).is_dir():
        raise DataNotFoundError(
            f"{a.run}: no such folder (the out_dir of a Table 2 run: make table2 OUT=DIR)"
        )

    res = compare_corpora(
        a.run,
        a.corpus_a,
        a.corpus_b,
        lowercase=a.lowercase_keys,
        bootstrap=a.bootstrap,
        seed=a.seed,
        words=a.words,
    )
    print(render_paired(res))
    if a.json:
        from paraamr.utils import write_json_atomic

        write_json_atomic(a.json, res)


def _cmd_sources(a) -> None:
    from paraamr.corpus.errors import CLI_HINT, SkipLog
    from paraamr.corpus.readers import read_corpus, require_records

    skips = SkipLog(a.on_error, hint=CLI_HINT)
    records = require_records(read_corpus(a.corpus, a.format, skips), a.corpus, skips=skips)
    seen: set[str] = set()
    for r in records:  # distinct sources, first-seen order: the builder's input
        text = " ".join(r.text.split())
        if text and text not in seen:
            seen.add(text)
            print(text)
    print(f"sources: {len(seen)} distinct source sentences of {a.corpus}", file=sys.stderr)


def _cmd_humaneval(a) -> None:
    from paraamr.corpus.specs import parse_corpus_specs

    if a.hcmd in ("sample", "examples"):
        from paraamr.corpus.errors import CLI_HINT, SkipLog
        from paraamr.corpus.readers import read_corpus, require_records

        specs = parse_corpus_specs(a.corpora)
        for spec in specs:  # each corpus opens and has a record, before any model loads
            probe = SkipLog(a.on_error, hint=CLI_HINT, max_warnings=0)
            require_records(read_corpus(spec.path, spec.fmt, probe), spec.path, skips=probe)
    if a.hcmd == "sample":
        from paraamr.tables.table4 import sample_kit

        paths = sample_kit(specs, a.out, n=a.n, seed=a.seed, checks=a.checks, on_error=a.on_error)
        print(
            f"kit written to {a.out}: give annotators {paths['annotate.html']} or upload "
            f"{paths['mturk/input.csv']} with {paths['mturk/template.html']}; keep "
            f"{paths['key.jsonl']} to yourself"
        )
    elif a.hcmd == "score":
        for r in a.results:
            _existing_file(r)
        from paraamr.tables.table4 import score_kit

        scored, paths = score_kit(
            a.dir,
            a.results,
            a.out,
            on_error=a.on_error,
            bootstrap=a.bootstrap,
            seed=a.seed,
            max_failed_checks=a.max_failed_checks,
            wandb=not a.no_wandb,
        )
        print(paths["md"].read_text(encoding="utf-8"))
    else:
        from paraamr.tables.table3 import write_examples

        parser = encoder = None
        if not a.no_metrics:
            from paraamr.metrics.semantic import load_encoder
            from paraamr.parsers.base import make_parser

            parser, encoder = make_parser(a.parser), load_encoder(a.similarity)
        paths = write_examples(
            specs,
            a.out,
            k=a.k,
            seed=a.seed,
            max_per_corpus=a.max_per_corpus,
            parser=parser,
            encoder=encoder,
            encoder_name=a.similarity,
            on_error=a.on_error,
            lowercase_keys=a.lowercase_keys,
        )
        print(paths["md"].read_text(encoding="utf-8"))


def _add_humaneval(sub) -> None:
    h = sub.add_parser(
        "humaneval", help="Table 4 human evaluation kit (sample, score) and Table 3 examples"
    )
    hs = h.add_subparsers(dest="hcmd", required=True)
    s = hs.add_parser(
        "sample",
        help="blind pairs of every corpus on common sources -> a kit "
        "(annotate.html, MTurk batch, key)",
    )
    s.add_argument("corpora", nargs="+", metavar="NAME=FILE[:format]")
    s.add_argument("--n", type=_positive, default=300, help="pairs per corpus (paper: 300)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument(
        "--checks",
        type=int,
        default=0,
        help="attention checks of each kind (a copy, an unrelated pair)",
    )
    s.add_argument("--out", required=True, help="the kit folder")
    s.add_argument("--on-error", default="raise", choices=("raise", "skip"))
    c = hs.add_parser("score", help="MTurk batch results and/or page downloads -> Table 4")
    c.add_argument("results", nargs="+", help="Batch_*_batch_results.csv, answers-*.csv/json")
    c.add_argument("--dir", required=True, help="the kit folder (key.jsonl, manifest.json)")
    c.add_argument("--out", required=True)
    c.add_argument("--bootstrap", type=int, default=1000, help="resamples of items (0: none)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument(
        "--max-failed-checks",
        type=int,
        default=None,
        help="leave out annotators who failed more attention checks than this",
    )
    c.add_argument("--no-wandb", action="store_true")
    c.add_argument("--on-error", default="raise", choices=("raise", "skip"))
    e = hs.add_parser("examples", help="Table 3: paraphrases of K common sources side by side")
    e.add_argument("corpora", nargs="+", metavar="NAME=FILE[:format]")
    e.add_argument("--k", type=_positive, default=5)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--max-per-corpus", type=_positive, default=3)
    e.add_argument("--out", required=True, help="markdown file (JSON beside it)")
    e.add_argument("--parser", default="spacy", choices=("spacy", "stanza"))
    e.add_argument("--similarity", default="minilm")
    e.add_argument("--no-metrics", action="store_true", help="sentences only (no parser/encoder)")
    e.add_argument(
        "--lowercase-keys",
        action="store_true",
        help="match sources case-insensitively (a built corpus)",
    )
    e.add_argument("--on-error", default="raise", choices=("raise", "skip"))
    h.set_defaults(func=_cmd_humaneval)


def _cmd_amr(a) -> None:
    from paraamr.amrlm.cli import run_amr

    run_amr(a)


def _cmd_paraphrase(a) -> None:
    from paraamr.scpn.cli import run_paraphrase

    run_paraphrase(a)


def build_parser() -> argparse.ArgumentParser:
    """The ``paraamr`` argument parser (every subcommand but ``top``, which keeps its own)."""
    ap = argparse.ArgumentParser(
        prog="paraamr",
        description="Command line of paraamr: corpus metrics, builds, tables and models.",
        epilog="--debug (or PARAAMR_DEBUG=1) shows tracebacks",
    )
    from paraamr.signature import package_versions

    ap.add_argument(
        "--version", action="version", version=f"paraamr {package_versions()['paraamr']}"
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("ted", help="tree edit distance between two bracket strings")
    t.add_argument("tree_a")
    t.add_argument("tree_b")
    t.add_argument("--depth", type=_positive, default=None, help="prune both trees to this depth")
    t.add_argument(
        "--variant",
        default="paraamr",
        type=_ted_variant,
        metavar="VARIANT",
        help=f"TED variant: {', '.join(_ted_variants())}",
    )
    t.add_argument("--kernel", default="edist", choices=("edist", "zss"))
    t.set_defaults(func=_cmd_ted)
    m = sub.add_parser("metric", help="one metric per line of a source<TAB>paraphrase file "
                       "(similarity, BLEU, IoU in percent; TED in edits)")  # fmt: skip
    m.add_argument("name", choices=METRIC_NAMES)
    m.add_argument("file", nargs="?", default="-")
    m.add_argument("--parser", default="spacy", choices=("spacy", "stanza"))
    m.add_argument("--model", default="minilm", help="sentence encoder (similarity)")
    m.add_argument(
        "--variant",
        default="paraamr",
        type=_ted_variant,
        metavar="VARIANT",
        help=f"TED variant: {', '.join(_ted_variants())}",
    )
    m.add_argument("--trees", action="store_true", help="columns are bracket trees (ted3/tedf)")
    m.add_argument("--on-error", default="raise", choices=("raise", "skip"))
    m.set_defaults(func=_cmd_metric)
    s = sub.add_parser(
        "score",
        help="all five Table 2 metrics of one corpus, signed",
        description="All five Table 2 metrics of one corpus (similarity, 1-BLEU, "
        "1-IoU, TED-3, TED-F), signed; the whole input is checked before any "
        "model loads.",
    )
    s.add_argument("file", help="the corpus (a folder for the ParaBank-Eval formats)")
    s.add_argument(
        "--format",
        default=None,
        choices=FORMATS,
        help="the corpus format (default: from the extension)",
    )
    s.add_argument(
        "--parser",
        default="spacy",
        choices=("spacy", "stanza", "gold"),
        help="constituency parser for BLEU / IoU tokens and TED trees",
    )
    s.add_argument(
        "--similarity",
        default="minilm",
        help="sentence encoder: minilm (offline), simcse (the paper's) or a folder",
    )
    s.add_argument(
        "--bleu",
        default="nltk-sentence",
        choices=("nltk-sentence", "sacrebleu-sentence", "sacrebleu-corpus"),
        help="BLEU implementation (the paper: nltk-sentence)",
    )
    s.add_argument(
        "--ted-variant",
        default="paraamr",
        type=_ted_variant,
        metavar="VARIANT",
        help=f"TED variant: {', '.join(_ted_variants())}",
    )
    s.add_argument(
        "--limit", type=whole_number(0), default=None, help="score the first N records (0: all)"
    )
    s.add_argument("--lowercase", action="store_true", help="lowercase tokens for BLEU and IoU")
    s.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="write score.json and score.md (the metrics, signed) and the shards here",
    )
    s.add_argument(
        "--on-error",
        default="raise",
        choices=("raise", "skip"),
        help="raise: stop at the first bad record (file:line); skip: count and go on",
    )
    s.set_defaults(func=_cmd_score)
    b = sub.add_parser("build-merge", help="merge a sharded build's shards + its Table 1")
    b.add_argument("--out", required=True, help="the build's out_dir")
    b.add_argument("--num-shards", type=_positive, required=True)
    b.set_defaults(func=_cmd_build_merge)
    t1 = sub.add_parser("table1", help="Table 1 statistics of a built corpus (JSON lines)")
    t1.add_argument("corpus")
    t1.add_argument(
        "--format",
        default=None,
        choices=FORMATS,
        help="default: from the extension (.jsonl: the built corpus's)",
    )
    t1.add_argument("--on-error", default="raise", choices=("raise", "skip"))
    t1.add_argument(
        "--json",
        action="store_true",
        help="print the statistics as JSON (default: the markdown table)",
    )
    t1.set_defaults(func=_cmd_table1)
    pa = sub.add_parser(
        "paired",
        help="two corpora of one Table 2 run compared source by "
        "source: mean differences with paired bootstrap intervals",
    )
    pa.add_argument("run", help="the Table 2 run's out_dir (holds shards/<name>/)")
    pa.add_argument("corpus_a")
    pa.add_argument("corpus_b")
    pa.add_argument(
        "--lowercase-keys",
        action="store_true",
        help="match sources lowercased (a run with lowercase_keys=true)",
    )
    pa.add_argument(
        "--bootstrap",
        type=whole_number(0),
        default=1000,
        metavar="N",
        help="resamples of the sources (0: no interval)",
    )
    pa.add_argument("--seed", type=whole_number(0), default=0)
    pa.add_argument("--json", default=None, metavar="FILE", help="also write the numbers here")
    pa.add_argument(
        "--words",
        type=_word_band,
        default=None,
        metavar="LO:HI",
        help="only sources of LO <= words < HI (whitespace words of the source; "
        "LO: for no upper bound)",
    )
    pa.set_defaults(func=_cmd_paired)
    so = sub.add_parser(
        "sources",
        help="the distinct source sentences of a corpus, one a line (input for the builder)",
    )
    so.add_argument("corpus", help="corpus file (a folder for the ParaBank-Eval formats)")
    so.add_argument("--format", default=None, choices=FORMATS)
    so.add_argument("--on-error", default="raise", choices=("raise", "skip"))
    so.set_defaults(func=_cmd_sources)
    from paraamr.amrlm.cli import add_amr_parser
    from paraamr.scpn.cli import add_paraphrase_parser

    add_amr_parser(sub).set_defaults(func=_cmd_amr)

    add_paraphrase_parser(sub).set_defaults(func=_cmd_paraphrase)
    _add_humaneval(sub)
    sub.add_parser(
        "top", help="TOP: `paraamr top stats ...`, `paraamr top parse --model DIR`", add_help=False
    )
    return ap


@cli_errors("paraamr")
def main(argv: list[str] | None = None) -> None:
    ap = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["top"]:  # the TOP commands keep their own parser (python -m paraamr.top)
        from paraamr.top.__main__ import run as top_run

        top_run(argv[1:], prog="paraamr top")
        return
    args = ap.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
