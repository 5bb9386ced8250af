"""The builder's similarity field and ``filter.min_similarity``: each paraphrase's cosine to its
source (checked against a cosine computed by hand), what the filter keeps, drops and rejects
(counted), and the signature."""

import json
import math

import numpy as np
import pytest

from paraamr.builder.inputs import read_items
from paraamr.builder.pipeline import BuildConfig, Builder
from paraamr.errors import ConfigError
from paraamr.metrics.pairwise import Similarity
from paraamr.signature import Signature
from paraamr.testing.fakes import ConceptGenerator


def _letters(s: str) -> list[float]:
    return [float(s.lower().count(c)) for c in "abcdefghijklmnopqrstuvwxyz"]


class LetterEncoder:
    """Letter counts, normalised (an encoder whose cosine a test computes by hand)."""

    def encode(self, xs, **kw):
        v = np.array([_letters(x) for x in xs])
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def hand_cosine(a: str, b: str) -> float:
    u, v = _letters(a), _letters(b)
    dot = sum(x * y for x, y in zip(u, v, strict=True))
    return dot / (math.sqrt(sum(x * x for x in u)) * math.sqrt(sum(y * y for y in v)))


@pytest.fixture(scope="module")
def items(data_dir):
    src = (data_dir / "amr" / "amr-bank-struct-v3.0.txt").read_text(encoding="utf-8")
    blocks = [b for b in src.split("\n\n") if "::snt" in b][:60]
    return blocks


def _run(items, tmp_path, **cfg):
    p = tmp_path / "lp.amr"
    p.write_text("\n\n".join(items) + "\n", encoding="utf-8")
    b = Builder(
        ConceptGenerator(),
        cfg=BuildConfig(**cfg),
        similarity=Similarity(LetterEncoder(), "letters"),
    )
    return b, b.process_chunk(list(read_items(p)))


def test_every_paraphrase_gets_its_cosine_to_its_source(items, tmp_path):
    b, (records, _, counts) = _run(items, tmp_path)
    paras = [(r["text"], p) for r in records for p in r["paraphrases"]]
    assert len(paras) == counts["paraphrases"] > 100
    for text, p in paras:
        assert p["similarity"] == pytest.approx(hand_cosine(text, p["para_text"]), abs=5e-5)
    assert Signature(b.signature()).fields["sim"] == "cos(letters)"
    assert counts["dropped_similarity"] == 0


def test_the_filter_keeps_drops_and_rejects_what_a_hand_count_says(items, tmp_path):
    _, (everything, rejects0, _) = _run(items, tmp_path)
    floor = 0.8
    b, (records, rejects, counts) = _run(items, tmp_path, min_similarity=floor)
    want = {
        r["line"]: [p for p in r["paraphrases"] if p["similarity"] >= floor] for r in everything
    }
    assert {r["line"]: r["paraphrases"] for r in records} == {k: v for k, v in want.items() if v}
    below = sum(p["similarity"] < floor for r in everything for p in r["paraphrases"])
    assert counts["dropped_similarity"] == below > 0
    emptied = sorted(k for k, v in want.items() if not v)
    filtered = [r for r in rejects if r["stage"] == "filter"]
    assert [r["line"] for r in filtered] == emptied and emptied
    assert all(f"similarity >= {floor:g}" in r["reason"] for r in filtered)
    # no record is lost: every line is a record or a reject, and the rejects are in line order
    assert len(records) + len(rejects) == len(everything) + len(rejects0)
    assert [r["line"] for r in rejects] == sorted(r["line"] for r in rejects)
    assert counts["rejects"] == len(rejects)
    assert "min_similarity=0.8" in Signature(b.signature()).fields["config"]


def test_a_filter_without_an_encoder_or_off_the_cosine_scale_is_refused():
    with pytest.raises(ConfigError, match="needs a similarity encoder"):
        Builder(ConceptGenerator(), cfg=BuildConfig(min_similarity=0.5))
    with pytest.raises(ConfigError, match="no cosine"):
        BuildConfig(min_similarity=70)


def test_the_hydra_config_wires_the_encoder_and_the_filter(compose_config):
    cfg = compose_config("build", "input=x.txt", "filter.min_similarity=0.6")
    assert cfg.similarity.name == "minilm" and cfg.settings.min_similarity == 0.6
    assert "similarity" not in compose_config("build", "input=x.txt", "~similarity")


def test_filter_cli_on_similarity(tmp_path, capsys):
    from paraamr.builder.__main__ import main

    rows = [
        {"text": "a b", "paraphrases": [{"para_text": "b a", "similarity": 0.9},
                                        {"para_text": "x", "similarity": 0.2}]},
        {"text": "c", "paraphrases": [{"para_text": "d", "similarity": 0.1}]},
        {"text": "e", "paraphrases": [{"para_text": "f"}]},
    ]  # fmt: skip
    src = tmp_path / "c.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["filter", str(src), str(tmp_path / "f.jsonl"), "--min-similarity", "0.5"])
    out = [json.loads(x) for x in (tmp_path / "f.jsonl").read_text().splitlines()]
    assert out == [{"text": "a b", "paraphrases": [{"para_text": "b a", "similarity": 0.9}]}]
    err = capsys.readouterr().err
    assert "kept 1 of 3 sources (33.3%)" in err
    stats = {"dropped_similarity": 2, "dropped_no_similarity": 1, "dropped_sources": 2}
    assert eval(err.split("dropped: ", 1)[1]) == stats
    with pytest.raises(SystemExit):
        main(["filter", str(src), str(tmp_path / "g.jsonl")])


class WordStog:
    """A parser that reads at most ``read`` words: a graph of the words it read."""

    def __init__(self, read: int) -> None:
        self.read = read

    def signature(self) -> str:
        return f"word-stog(reads={self.read})"

    def parse(self, sentences):
        out = []
        for s in sentences:
            words = [w for w in s.lower().split() if w.isalpha()][: self.read] or ["x"]
            ops = " ".join(f":op{i + 1} (v{i} / {w})" for i, w in enumerate(words))
            out.append(f"# ::snt {s}\n(a / and {ops})")
        return out

    def cut(self, sentences) -> int:
        return sum(len(s.split()) > self.read for s in sentences)


def test_table1_counts_the_sources_longer_than_the_parser_reads(tmp_path):
    """Table 1 of a build from sentences gets the share of sources the parser cut (here 2 of
    the 5 it parsed are longer than 7 tokens; the empty line, rejected before parsing, is not
    one of them), from the builder's counts."""
    from paraamr.builder.pipeline import build_shard
    from paraamr.builder.run import finish_build
    from paraamr.tables.table1 import write_build_table1

    src = tmp_path / "s.txt"
    sents = ["The cat sat on the mat .", "A dog ran .", "One two three four five six seven .",
             "", "Birds sing .", "We saw the little prince smile at the fox ."]  # fmt: skip
    src.write_text("\n".join(sents) + "\n")
    b = Builder(ConceptGenerator(), stog=WordStog(7), cfg=BuildConfig(chunk_size=2))
    build_shard(b, src, tmp_path / "out", progress=False)
    summary = finish_build(str(tmp_path / "out"), 1)
    c = summary["counts"]
    assert (c["parse_cut"], c["parsed"], c["items"]) == (2, 5, 6)
    assert summary["table1"]["sources_cut"] == 40.0
    md = write_build_table1(tmp_path / "out", summary)["md"].read_text()
    assert "sources cut (%)" in md and "| 40.00 |" in md


class NaNAt:
    """A similarity whose cosine is NaN for every paraphrase with the letter ``z``, else 0.9."""

    def signature(self) -> str:
        return "cos(nan-at-z)"

    def cosines(self, pairs):
        return np.array([np.nan if "z" in b else 0.9 for _, b in pairs])


def test_a_nan_similarity_is_no_score_and_never_passes_the_filter(tmp_path):
    src = tmp_path / "s.amr"
    src.write_text(
        "# ::snt The fox sat .\n(s / sit-01 :ARG1 (f / fox))\n\n"
        "# ::snt A zebra ran .\n(r / run-02 :ARG0 (z / zebra))\n"
    )
    items = list(read_items(src))
    b = Builder(ConceptGenerator(), cfg=BuildConfig(), similarity=NaNAt())
    records, _, _ = b.process_chunk(items)
    sims = {p["para_text"]: p["similarity"] for r in records for p in r["paraphrases"]}
    assert sims and all((v is None) == ("z" in k) for k, v in sims.items())
    json.dumps(records, allow_nan=False)  # the corpus line stays valid JSON
    b = Builder(ConceptGenerator(), cfg=BuildConfig(min_similarity=0.5), similarity=NaNAt())
    records, rejects, counts = b.process_chunk(list(read_items(src)))
    assert counts["dropped_no_similarity"] == sum("z" in k for k in sims) > 0
    assert [r["stage"] for r in rejects] == ["filter"] and "best nan" in rejects[0]["reason"]
