import json

import pytest

from paraamr.corpus import (
    SkipLog,
    SourceRecord,
    common_keys,
    filter_common,
    read_corpus,
    source_keys,
    write_corpus,
)
from paraamr.corpus.subset import key_of
from paraamr.errors import CorpusFormatError


def write(tmp_path, name, content, mode="w"):
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content, encoding="utf-8")
    return p


def test_paraamr_jsonl_roundtrip(tmp_path):
    rec = {
        "text": "He left.",
        "id": 7,
        "paraphrases": [{"para_text": "He went away.", "perplexity": 27.1, "focus": "l"}],
    }
    p = write(tmp_path, "c.jsonl", json.dumps(rec) + "\n\n")
    [r] = list(read_corpus(p))
    assert r.text == "He left." and r.paraphrases[0].perplexity == 27.1
    assert r.line == 1 and r.path == str(p)
    out = tmp_path / "o.jsonl"
    write_corpus([r], out)
    assert json.loads(out.read_text()) == rec


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"text": "a", "paraphrases": [', "malformed JSON"),
        ('{"paraphrases": []}', "missing field 'text'"),
        ('{"text": "a", "paraphrases": [{"perplexity": 1}]}', "missing field 'para_text'"),
        ('{"text": "   ", "paraphrases": []}', "empty source sentence"),
        ('["not", "an", "object"]', "not an object"),
        ('{"text": 3, "paraphrases": []}', "not a string"),
    ],
)
def test_bad_jsonl_names_file_and_line(tmp_path, line, reason):
    good = json.dumps({"text": "ok", "paraphrases": [{"para_text": "fine"}]})
    p = write(tmp_path, "bad.jsonl", good + "\n" + line + "\n" + good + "\n")
    with pytest.raises(CorpusFormatError) as e:
        list(read_corpus(p))
    assert e.value.line == 2 and e.value.path == str(p)
    assert reason in str(e.value) and f"{p}:2" in str(e.value)
    skips = SkipLog("skip")
    recs = list(read_corpus(p, skips=skips))
    assert len(recs) == 2 and skips.total == 1


def test_undecodable_bytes_are_reported(tmp_path):
    p = write(tmp_path, "b.tsv", b"good\tfine\nbad \xff\xfe\tx\nok\tyes\n")
    with pytest.raises(CorpusFormatError, match=r"b.tsv:2: undecodable"):
        list(read_corpus(p, "pairs"))
    skips = SkipLog("skip")
    assert [r.text for r in read_corpus(p, "pairs", skips)] == ["good", "ok"]
    assert skips.counts and skips.total == 1


def test_empty_paraphrase_is_skipped_and_counted(tmp_path):
    p = write(tmp_path, "e.tsv", "A.\t \nA.\tB.\n")
    skips = SkipLog("skip")
    [r] = list(read_corpus(p, "pairs", skips))
    assert [x.text for x in r.paraphrases] == ["B."] and skips.counts["empty paraphrase"] == 1


def test_paranmt_layout_groups_consecutive_lines(tmp_path):
    p = write(tmp_path, "p.txt", "a b .\tb a .\t0.8\na b .\tab .\t0.7\nc .\td .\t0.9\n")
    recs = list(read_corpus(p, "paranmt"))
    assert [(r.text, len(r.paraphrases)) for r in recs] == [("a b .", 2), ("c .", 1)]
    bad = write(tmp_path, "q.txt", "a\tb\tnot-a-score\n")
    with pytest.raises(CorpusFormatError, match="q.txt:1"):
        list(read_corpus(bad, "paranmt"))


def test_parabank_layouts(tmp_path):
    p1 = write(tmp_path, "pb1.tsv", "ref one\tpara a\tpara b\n")
    [r] = list(read_corpus(p1, "parabank1"))
    assert r.text == "ref one" and [x.text for x in r.paraphrases] == ["para a", "para b"]
    p2 = write(tmp_path, "pb2.tsv", "-0.5\tref two\tp1\tp2\tp3\n")
    [r] = list(read_corpus(p2, "parabank2"))
    assert r.extra["score"] == -0.5 and len(r.paraphrases) == 3
    bad = write(tmp_path, "pb2bad.tsv", "ref two\tp1\tp2\n")
    with pytest.raises(CorpusFormatError, match="not a score"):
        list(read_corpus(bad, "parabank2"))


def test_bom_is_stripped(tmp_path):
    p = write(tmp_path, "bom.tsv", "\ufeffA.\tB.\n")
    assert next(iter(read_corpus(p, "pairs"))).text == "A."


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(FileNotFoundError, match="No such file"):
        list(read_corpus(tmp_path / "nope.jsonl"))
    with pytest.raises(CorpusFormatError, match="unknown corpus format"):
        read_corpus(write(tmp_path, "x.tsv", ""), "nonsense")


def test_parabank_eval_real(parabank_eval):
    nmt = list(read_corpus(parabank_eval, "parabank-eval-paranmt"))
    pb1 = list(read_corpus(parabank_eval, "parabank-eval-parabank1"))
    assert len(nmt) == len(pb1) == 400
    assert [r.text for r in nmt] == [r.text for r in pb1]
    assert sum(len(r.paraphrases) for r in nmt) >= 390  # about one ParaNMT output per source
    assert sum(len(r.paraphrases) for r in pb1) / 400 > 5
    for r in pb1:  # distinct candidates only
        assert len({p.text for p in r.paraphrases}) == len(r.paraphrases)


def test_common_subset_streams():
    a = [SourceRecord("A.", []), SourceRecord("B.", []), SourceRecord("C.", [])]
    b = [SourceRecord("C.", []), SourceRecord(" B. ", [])]
    keys = common_keys([source_keys(a), source_keys(b)])
    assert len(keys) == 2
    assert [r.text for r in filter_common(iter(a), keys)] == ["B.", "C."]
    assert [r.text for r in filter_common(iter(b), keys)] == ["C.", " B. "]


def test_msrp_positive_pairs_real(data_dir):
    recs = list(read_corpus(data_dir / "paraphrase" / "msrp" / "msr-para-train.tsv", "msrp"))
    assert 2300 < len(recs) < 3576  # about two thirds of the pairs are paraphrases
    assert recs[0].text.startswith("Amrozi accused his brother")


def test_msrp_header_is_checked(tmp_path):
    p = write(tmp_path, "m.tsv", "a\tb\n")
    with pytest.raises(CorpusFormatError, match="MSRP header"):
        list(read_corpus(p, "msrp"))


def _pairs(path, rows):
    path.write_text("".join(f"{s}\t{p}\n" for s, p in rows), encoding="utf-8")
    return str(path)


def test_common_subset_drops_sources_whose_paraphrases_all_equal_the_source(tmp_path):
    from paraamr.corpus.specs import CorpusSpec
    from paraamr.corpus.subset import common_subset
    from paraamr.tables.table2 import subset_stream

    a = _pairs(
        tmp_path / "a.tsv",
        [("Kept.", "Still kept."), ("Same.", "same."), ("Same.", "SAME."), ("Mixed.", "mixed.")]
        + [("Mixed.", "Other.")],
    )
    b = _pairs(tmp_path / "b.tsv", [("Kept.", "K."), ("Same.", "Different."), ("Mixed.", "M.")])
    specs = [CorpusSpec("A", a, "pairs"), CorpusSpec("B", b, "pairs")]
    keys = common_subset(specs, progress=False)
    # "Same." has only identical paraphrases in A: not comparable, so dropped from both corpora
    assert set(keys.tolist()) == {key_of("Kept."), key_of("Mixed.")}
    for spec in specs:
        got = [r.text for r in subset_stream(spec, keys, SkipLog("raise"))]
        assert got == ["Kept.", "Mixed."]


def test_lowercase_keys_matches_sources_case_insensitively(tmp_path):
    from paraamr.corpus.specs import CorpusSpec
    from paraamr.corpus.subset import common_subset
    from paraamr.tables.table2 import subset_stream

    a = _pairs(tmp_path / "a.tsv", [("The Cat sat.", "A cat sat."), ("Dogs bark.", "Dogs woof.")])
    b = _pairs(tmp_path / "b.tsv", [("the cat  sat.", "The cat was sitting."), ("Dogs.", "D.")])
    specs = [CorpusSpec("A", a, "pairs"), CorpusSpec("B", b, "pairs")]
    assert len(common_subset(specs, progress=False)) == 0
    keys = common_subset(specs, progress=False, lowercase_keys=True)
    assert keys.tolist() == [key_of("the cat sat.", lowercase=True)]
    got = [
        [r.text for r in subset_stream(s, keys, SkipLog("raise"), lowercase_keys=True)]
        for s in specs
    ]
    assert got == [["The Cat sat."], ["the cat  sat."]]


def test_pan_and_src_trg_formats(tmp_path, data_dir):
    """PAN's positive pairs and QQP-Pos' aligned src/trg files as corpus formats: the real
    files by hand, bad labels and misaligned files with file and line."""
    from paraamr.corpus.readers import guess_format, read_corpus

    pan = data_dir / "paraphrase" / "pan"
    s1 = (pan / "pan-test_s1.txt").read_text(encoding="utf-8").splitlines()
    s2 = (pan / "pan-test_s2.txt").read_text(encoding="utf-8").splitlines()
    labels = (pan / "pan-test.labels").read_text(encoding="utf-8").splitlines()
    by_hand = [(a.strip(), b.strip()) for a, b, lab in zip(s1, s2, labels, strict=True)
               if lab.strip() == "1"]  # fmt: skip
    got = [(r.text, p.text) for r in read_corpus(pan, "pan-test") for p in r.paraphrases]
    assert got == by_hand and len(got) == 1500

    q = data_dir / "paraphrase" / "qqppos-paranmt-small" / "quora" / "test_src.txt"
    assert guess_format(q) == "src-trg"
    src = q.read_text(encoding="utf-8").splitlines()
    trg = q.with_name("test_trg.txt").read_text(encoding="utf-8").splitlines()
    got = [(r.text, p.text) for r in read_corpus(q) for p in r.paraphrases]
    assert got == [(a.strip(), b.strip()) for a, b in zip(src, trg, strict=True)]

    d = tmp_path / "pan"
    d.mkdir()
    (d / "pan-train_s1.txt").write_text("A.\nB.\nC.\n")
    (d / "pan-train_s2.txt").write_text("A2.\nB2.\nC2.\n")
    (d / "pan-train.labels").write_text("1\nmaybe\n1\n")
    with pytest.raises(CorpusFormatError, match=r"pan-train\.labels:2: label must be 0 or 1"):
        list(read_corpus(d, "pan-train"))
    skips = SkipLog("skip")
    assert [r.text for r in read_corpus(d, "pan-train", skips)] == ["A.", "C."]
    assert skips.total == 1
    (d / "pan-train_s2.txt").write_text("A2.\nB2.\n")
    with pytest.raises(CorpusFormatError, match="differ in length: pan-train_s1.txt 3, "
                       "pan-train_s2.txt 2"):  # fmt: skip
        list(read_corpus(d, "pan-train"))
    # an undecodable line drops that line of both files (counted), the rest stays aligned
    s = tmp_path / "x_src.txt"
    s.write_bytes(b"One.\n\xff\xfe bad\nThree.\n")
    (tmp_path / "x_trg.txt").write_text("Uno.\nDos.\nTres.\n")
    skips = SkipLog("skip")
    assert [(r.text, r.paraphrases[0].text) for r in read_corpus(s, None, skips)] == [
        ("One.", "Uno."), ("Three.", "Tres.")]  # fmt: skip
    assert skips.total == 1
