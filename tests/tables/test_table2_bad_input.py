"""Every bad-input class of Table 2, fed through a real file: with ``on_error=raise`` a
:class:`CorpusFormatError` naming file and line (and the stage: the reader's check, the parser,
the similarity); with ``on_error=skip`` a counted skip, and every line / pair is accounted for."""

from __future__ import annotations

import re

import numpy as np
import pytest

from paraamr.corpus import SkipLog, read_corpus
from paraamr.diversity.scoring import MetricConfig, score_records
from paraamr.errors import CorpusFormatError
from paraamr.shards import Shard

# (format, the wrong line, the reason the reader gives); good lines are "src<TAB>para"-like
WRONG_COLUMNS = {
    "paranmt": ("A wrong line.\tIts paraphrase.\t0.5\textra", r"expected 2 or 3 columns, got 4"),
    "pairs": ("A wrong line.\tIts paraphrase.\textra", r"expected 2 columns .*got 3"),
    "parabank1": ("A wrong line without paraphrases.", r"expected reference and >=1 .*got 1"),
    "parabank2": ("0.5\tA wrong line.", r"expected score, reference and >=1 .*got 2 columns"),
    "msrp": ("1\t11\t12\tA wrong line.", r"expected 5 columns with Quality 0/1, got 4"),
}


def _good(fmt: str, k: int) -> str:
    src, para = f"Source sentence number {k}.", f"Paraphrase of sentence {k}."
    return {
        "paranmt": f"{src}\t{para}\t0.8",
        "pairs": f"{src}\t{para}",
        "parabank1": f"{src}\t{para}\tAnother paraphrase {k}.",
        "parabank2": f"0.9\t{src}\t{para}",
        "msrp": f"1\t{k}\t{k + 100}\t{src}\t{para}",
    }[fmt]


@pytest.mark.parametrize("fmt", list(WRONG_COLUMNS))
def test_wrong_column_count_in_each_tsv_reader(tmp_path, fmt):
    bad, reason = WRONG_COLUMNS[fmt]
    header = ["Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"] if fmt == "msrp" else []
    lines = [*header, _good(fmt, 1), _good(fmt, 2), bad, _good(fmt, 3)]
    path = tmp_path / f"{fmt}.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    bad_line = lines.index(bad) + 1

    with pytest.raises(CorpusFormatError, match=rf"^{path}:{bad_line}: {reason}"):
        list(read_corpus(path, fmt, SkipLog("raise")))
    skips = SkipLog("skip")
    records = list(read_corpus(path, fmt, skips))
    assert [r.text for r in records] == [f"Source sentence number {k}." for k in (1, 2, 3)]
    assert skips.total == 1 and skips.examples == {next(iter(skips.counts)): f"{path}:{bad_line}"}
    assert len(lines) - len(header) == len(records) + skips.total  # every line accounted for


REF_HEADER = "ref_id\tref_sent\tref_len\tczeng_s"
CAND_HEADER = "worker_id_anon\tref_id\tref_len\tsys_id\tcandidate\tNLL\thuman_score\tgm"


@pytest.mark.parametrize(
    "which, bad, got",
    [
        ("ref", "2\tA reference with two columns.", 2),
        ("ref", "2\tA reference.\t3\t0.5\textra", 5),
        ("cand", "0\t1\t3\t35\tA candidate.", 5),
        ("cand", "0\t1\t3\t35\tA candidate.\t0.4\t90\t2\textra", 9),
    ],
    ids=["ref-too-few", "ref-too-many", "cand-too-few", "cand-too-many"],
)
def test_wrong_column_count_in_parabank_eval(tmp_path, which, bad, got):
    refs = [REF_HEADER, "0\tThe first reference.\t3\t0.1", "1\tThe second reference.\t3\t0.2"]
    cands = [
        CAND_HEADER,
        "0\t0\t3\t35\tThe first candidate.\t0.4\t90\t2",
        "0\t1\t3\t35 4\tThe second candidate.\t0.4\t90\t2",
    ]
    (refs if which == "ref" else cands).insert(2, bad)
    (tmp_path / "ref.tsv").write_text("\n".join(refs) + "\n", encoding="utf-8")
    (tmp_path / "candidates.tsv").write_text("\n".join(cands) + "\n", encoding="utf-8")
    name = "ref.tsv" if which == "ref" else "candidates.tsv"
    pattern = rf"^{tmp_path / name}:3: expected {8 if which == 'cand' else 4} columns.*got {got}"

    with pytest.raises(CorpusFormatError, match=pattern):
        list(read_corpus(tmp_path, "parabank-eval-paranmt", SkipLog("raise")))
    skips = SkipLog("skip")
    records = list(read_corpus(tmp_path, "parabank-eval-paranmt", skips))
    assert [(r.text, [p.text for p in r.paraphrases]) for r in records] == [
        ("The first reference.", ["The first candidate."]),
        ("The second reference.", ["The second candidate."]),
    ]
    assert skips.total == 1


def _write_parabank_eval(tmp_path, refs, cands):
    (tmp_path / "ref.tsv").write_text("\n".join([REF_HEADER, *refs]) + "\n", encoding="utf-8")
    cand_text = "\n".join([CAND_HEADER, *cands]) + "\n"
    (tmp_path / "candidates.tsv").write_text(cand_text, encoding="utf-8")


def test_parabank_eval_fields_are_csv_unquoted(tmp_path):
    # the release wraps a field holding a double quote in quotes and doubles its quotes
    _write_parabank_eval(
        tmp_path,
        ['0\t"I ""went out"" once."\t4\t0.1', '1\tSay "hi" to him.\t4\t0.2'],
        [
            '0\t0\t4\t35\t"""Out,"" I said."\t0.4\t90\t2',
            "",  # an empty line is no row
            '0\t1\t4\t35\tHe said "hi".\t0.4\t90\t2',  # a quote inside a field is literal
        ],
    )
    records = list(read_corpus(tmp_path, "parabank-eval-paranmt", SkipLog("raise")))
    assert [(r.text, [p.text for p in r.paraphrases]) for r in records] == [
        ('I "went out" once.', ['"Out," I said.']),
        ('Say "hi" to him.', ['He said "hi".']),
    ]


def test_parabank_eval_real_has_no_csv_quoting_left(parabank_eval):
    records = list(read_corpus(parabank_eval, "parabank-eval-parabank1"))
    by_text = {r.text for r in records}
    # ref_id 14 in ref.tsv is written "I ""went out for ice cream"" once with your dad."
    assert 'I "went out for ice cream" once with your dad.' in by_text
    texts = [r.text for r in records] + [p.text for r in records for p in r.paraphrases]
    assert not [t for t in texts if '""' in t]


def test_parabank_eval_row_over_two_lines_is_counted(tmp_path):
    bad = '0\t1\t4\t35\t"A quote closed\non the next line."\t0.4\t90\t2'  # lines 3-4
    cands = ["0\t0\t4\t35\tThe first candidate.\t0.4\t90\t2", bad]
    cands.append("0\t1\t4\t35\tThe second candidate.\t0.4\t90\t2")
    _write_parabank_eval(tmp_path, ["0\tThe first.\t4\t0.1", "1\tThe second.\t4\t0.2"], cands)
    with pytest.raises(CorpusFormatError, match=r"candidates.tsv:3: row spans lines 3-4"):
        list(read_corpus(tmp_path, "parabank-eval-paranmt", SkipLog("raise")))
    skips = SkipLog("skip")
    records = list(read_corpus(tmp_path, "parabank-eval-paranmt", skips))
    assert skips.total == 1 and next(iter(skips.counts)).startswith("row spans lines 3-4")
    assert [[p.text for p in r.paraphrases] for r in records] == [
        ["The first candidate."],
        ["The second candidate."],
    ]


@pytest.mark.parametrize(
    "bad",
    ['0\t0\t4\t35\t"Closed" then more.\t0.4\t90\t2', '0\t0\t4\t35\t"Never closed.\t0.4\t90\t2'],
    ids=["text-after-closing-quote", "quote-open-to-the-end"],
)
def test_parabank_eval_malformed_quoting_names_the_line(tmp_path, bad):
    _write_parabank_eval(
        tmp_path, ["0\tThe first.\t4\t0.1"], ["0\t0\t4\t35\tFine.\t0.4\t90\t2", bad]
    )
    with pytest.raises(CorpusFormatError, match=r"candidates.tsv:3: bad CSV quoting"):
        list(read_corpus(tmp_path, "parabank-eval-paranmt", SkipLog("skip")))


class NaNForSome:
    """An encoder stand-in whose embedding of sentences containing ``degenerate`` is NaN (as a
    model in half precision can overflow); others get bag-of-characters vectors."""

    def encode(self, sents, **kw):
        out = np.zeros((len(sents), 64), dtype=np.float32)
        for i, s in enumerate(sents):
            for ch in s.lower():
                out[i, ord(ch) % 64] += 1
            out[i] = np.nan if "degenerate" in s else out[i] / np.linalg.norm(out[i])
        return out


@pytest.fixture(scope="module")
def spacy_parser():
    from paraamr.parsers.spacy_backend import SpacyParser

    return SpacyParser(max_tokens=8)


def _score(path, out, parser, encoder, on_error):
    skips = SkipLog(on_error)
    res = score_records(
        read_corpus(path, "pairs", skips),
        parser=parser,
        encoder=encoder,
        cfg=MetricConfig(on_error=on_error, chunk_size=2),
        out_dir=out,
        shard=Shard(),
        signature="test",
        skips=skips,
    )
    return res


CORPUS = [
    "The cat sat on the mat.\tA cat was sitting on the mat.",
    "The cat sat on the mat.\tOn the mat sat the cat.",
    "Dogs bark.\tDogs are barking.",
    "Birds sing.\tBirds sing.",  # identical: dropped and counted, not scored
    "It rains.\tIt is raining.",
]


@pytest.mark.parametrize(
    "bad, line, reason",
    [
        (
            "The boy ran home.\tThe boy ran all the way back to his home today.",
            6,
            r"paraphrase 0 not parsed: sentence longer than the parser accepts "
            r"\(12 tokens > max_tokens=8\)",
        ),
        (
            "The boy ran all the way back to his home today.\tThe boy ran home.",
            6,
            r"source not parsed: sentence longer than the parser accepts",
        ),
        ("A degenerate sentence.\tA sentence.", 6, r"paraphrase 0: non-finite similarity"),
    ],
    ids=["paraphrase-over-max-tokens", "source-over-max-tokens", "non-finite-similarity"],
)
def test_scoring_stage_bad_input(tmp_path, spacy_parser, bad, line, reason):
    path = tmp_path / "c.tsv"
    path.write_text("\n".join([*CORPUS, bad]) + "\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=rf"^{path}:{line}: {reason}"):
        _score(path, tmp_path / "raise", spacy_parser, NaNForSome(), "raise")
    res = _score(path, tmp_path / "skip", spacy_parser, NaNForSome(), "skip")
    (why,) = res.skips["by_reason"]  # one skip, with the reason the error gave
    assert res.skips["total"] == 1 and re.match(reason, why), why
    assert res.n_records == 5 and res.n_sources == 3 and res.dropped_identical == 1
    pairs_in = len(CORPUS) + 1
    assert pairs_in == res.n_pairs + res.dropped_identical + res.skips["total"] == 4 + 1 + 1
