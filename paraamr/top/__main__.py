"""``python -m paraamr.top`` (also ``paraamr top``):

    python -m paraamr.top stats --train FILE [--test FILE ...] [--out DIR]
    python -m paraamr.top parse --model DIR [--input FILE] [--beams N] < utterances.txt

``parse``: one tree per input line from a trained TOP parser (a ``make top`` run's
``target_parser/`` or ``ap_parser/`` model dir, or any :meth:`TopModule.save` dir). Each
line is tokenized as the TOP trees are (:func:`paraamr.top.trees.tokenize_utterance`:
``hereford?`` is ``hereford ?``, ``6:00 P.M.`` is ``6 : 00 P.M .``); ``--pretokenized`` splits
on spaces only. An output that is not a valid tree, and an empty input line, give an empty
line (outputs stay aligned) and are counted on stderr with the trees whose words differ from
the utterance's. The ``--help`` text is :data:`DESCRIPTION` (plain text).
"""

from __future__ import annotations

import argparse

from paraamr.corpus.errors import CLI_HINT, ON_ERROR
from paraamr.errors import cli_errors
from paraamr.top.readers import FORMATS
from paraamr.utils import whole_number

PROG = "python -m paraamr.top"
STATS_HELP = """\
stats: template statistics of a training set (TOP v1 TSV, .seq or TOPv2 TSV) and the
frequency buckets of each --test file."""
PARSE_HELP = """\
parse: one tree per input line from a trained TOP parser (the target_parser/ or ap_parser/
folder of a `make top` run, or any saved TOP model folder). Each line is tokenized as the
TOP trees are: punctuation, 's and the am/pm of 5pm become words of their own
("hereford?" is "hereford ?", "6:00 P.M." is "6 : 00 P.M ."), while "don't", "a.m" and
"4.00" stay whole; --pretokenized splits on spaces only. An output that is not a valid
tree, and an empty input line, give an empty line (outputs stay aligned); the counts go
to stderr."""
DESCRIPTION = f"""\
TOP semantic parsing data and parsers.

  {{prog}} stats --train FILE [--test FILE ...] [--out DIR]
  {{prog}} parse --model DIR [--input FILE] [--beams N] < utterances.txt

{STATS_HELP}

{PARSE_HELP}
"""


@cli_errors(PROG)
def main(argv: list[str] | None = None) -> None:
    run(argv)


def run(argv: list[str] | None, prog: str = PROG) -> None:
    """The TOP commands; ``prog`` names them in help and usage (``paraamr top`` from the
    ``paraamr`` command, whose own wrapper reports errors)."""
    raw = argparse.RawDescriptionHelpFormatter
    ap = argparse.ArgumentParser(
        prog=prog, description=DESCRIPTION.format(prog=prog), formatter_class=raw
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    st = sub.add_parser("stats", help="template statistics of a training set",
                        description=STATS_HELP, formatter_class=raw)  # fmt: skip
    st.add_argument("--train", required=True, help="training trees (TOP v1 TSV, .seq or TOPv2)")
    st.add_argument("--test", action="append", default=[], help="evaluation file (repeatable)")
    st.add_argument("--format", choices=FORMATS, default=None, help="default: guessed per file")
    st.add_argument("--out", default="results/top", help="where the JSON and plot go")
    st.add_argument("--no-out", action="store_true", help="print only")
    st.add_argument("--top-k", type=whole_number(1), default=10)
    st.add_argument("--allow-empty", action="store_true", help="accept empty spans ([SL:X ])")
    st.add_argument("--on-error", choices=ON_ERROR, default="raise")
    pa = sub.add_parser("parse", help="parse utterances with a trained TOP parser",
                        description=PARSE_HELP, formatter_class=raw)  # fmt: skip
    pa.add_argument("--model", required=True, help="a saved parser dir (top_module.json)")
    pa.add_argument("--input", default="-", help="one utterance per line (default: stdin)")
    pa.add_argument("--beams", type=whole_number(1), default=1)
    pa.add_argument("--batch-size", type=whole_number(1), default=32)
    pa.add_argument("--plain-targets", action="store_true",
                    help="plain trees (parsing.encoded_targets=false)")  # fmt: skip
    pa.add_argument("--pretokenized", action="store_true",
                    help="words are split by spaces already (default: tokenized as the TOP "
                    "trees are, 'hereford?' -> 'hereford ?')")  # fmt: skip
    a = ap.parse_args(argv)
    if a.cmd == "parse":
        from paraamr.corpus.readers import require_records

        lines = _read_lines(a.input)
        where = "<stdin>" if a.input == "-" else a.input
        require_records((ln for ln in lines if ln.strip()), where, "utterances")  # before loading
        lines = parse_lines(lines, a.model, beams=a.beams, batch_size=a.batch_size,
                            encoded=not a.plain_targets,
                            tokenize=not a.pretokenized)  # fmt: skip
        print("\n".join(lines))
        return
    if a.cmd == "stats":
        from paraamr.top.stats import run_stats

        run_stats(
            a.train,
            a.test,
            None if a.no_out else a.out,
            fmt=a.format,
            on_error=a.on_error,
            hint=CLI_HINT,
            allow_empty=a.allow_empty,
            top_k=a.top_k,
        )


def _read_lines(path: str) -> list[str]:
    import sys

    if path == "-":
        return [ln.rstrip("\n") for ln in sys.stdin]
    from pathlib import Path

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"input file {path} does not exist")
    return p.read_text(encoding="utf-8").splitlines()


def parse_lines(
    lines: list[str],
    model_dir: str,
    *,
    beams: int = 1,
    batch_size: int = 32,
    encoded: bool = True,
    tokenize: bool = True,
    counts: dict | None = None,
) -> list[str]:
    """One output line per input line: the tree, or ``""`` (invalid tree or empty input).

    ``tokenize``: each line's words as the TOP trees have them
    (:func:`~paraamr.top.trees.tokenize_utterance`); else the line split on spaces.

    ``counts`` (a dict, filled in) gets ``utterances``, ``valid``, ``invalid``, ``empty_input``
    and ``words_not_restored``; they also go to stderr.
    """
    import sys
    from collections import Counter

    from paraamr.top.encoding import LabelVocab
    from paraamr.top.module import TopModule
    from paraamr.top.stages import decode_parse
    from paraamr.top.surface import tokenizer_normalizer
    from paraamr.top.trees import tokenize_utterance
    from paraamr.utils import map_length_batches

    module = TopModule.from_saved(model_dir)
    vocab = LabelVocab.from_labels(module.settings["labels"])
    normalize = tokenizer_normalizer(module.tokenizer)
    words = tokenize_utterance if tokenize else str.split
    utts = [" ".join(words(line)) for line in lines]
    live = [k for k, u in enumerate(utts) if u]
    outs = map_length_batches([utts[k] for k in live],
                              lambda b: module.generate(b, num_beams=beams), batch_size,
                              longest_first=True)  # fmt: skip
    c: Counter = Counter(utterances=len(live), empty_input=len(utts) - len(live))
    result = [""] * len(utts)
    for k, o in zip(live, outs, strict=True):
        tree, ok = decode_parse(o, utts[k].split(), vocab=vocab, encoded=encoded,
                                normalize=normalize)  # fmt: skip
        c["invalid" if tree is None else "valid"] += 1
        c["words_not_restored"] += tree is not None and not ok
        result[k] = tree or ""
    for key in ("valid", "invalid", "words_not_restored"):
        c.setdefault(key, 0)
    if counts is not None:
        counts.update(c)
    print(f"parsed {c['utterances']}: valid {c['valid']}, invalid (empty line) {c['invalid']}, "
          f"words differ from the utterance {c['words_not_restored']}, empty input lines "
          f"{c['empty_input']}", file=sys.stderr)  # fmt: skip
    return result


if __name__ == "__main__":
    main()
