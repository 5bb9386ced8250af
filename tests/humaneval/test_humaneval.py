"""The human-evaluation kit (Table 4): blind sampling, answer readers, scoring, agreement.

Expected values are computed by hand or by an independent loop in the test, never by the code
under test."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from paraamr.cli import main
from paraamr.corpus.errors import SkipLog
from paraamr.errors import CorpusFormatError, InputError
from paraamr.humaneval.answers import read_answers
from paraamr.humaneval.sample import KeyItem
from paraamr.humaneval.score import Kit, agreement, load_kit, score_answers, table4_rows

# Two corpora with partly shared sources. Sources S0..S5 in A, S2..S9 in B; S3 has only a copy
# in B, so the sources both have a non-copy paraphrase of are S2, S4, S5.
CORPUS_A = [
    (f"Source number {i}.", [f"Source number {i}.", f"Zeta rewrite {i}."]) for i in range(6)
]
CORPUS_B = [
    (
        f"Source number {i}.",
        [f"Source number {i}."] if i == 3 else [f"Omega take {i}.", f"Omega two {i}."],
    )
    for i in range(2, 10)
]
COMMON = {"Source number 2.", "Source number 4.", "Source number 5."}


def _write_pairs(path: Path, corpus, reverse: bool = False) -> str:
    rows = [(s, p) for s, ps in corpus for p in ps]
    if reverse:
        rows = rows[::-1]
    path.write_text("".join(f"{s}\t{p}\n" for s, p in rows), encoding="utf-8")
    return str(path)


def _sample(
    tmp_path: Path, name: str, n: int = 3, seed: int = 0, checks: int = 0, reverse: bool = False
) -> Path:
    a = _write_pairs(tmp_path / f"{name}-a.tsv", CORPUS_A)
    b = _write_pairs(tmp_path / f"{name}-b.tsv", CORPUS_B, reverse)
    out = tmp_path / name
    main(
        [
            "humaneval",
            "sample",
            f"ZetaCorpusQ={a}:pairs",
            f"OmegaSetR={b}:pairs",
            "--n",
            str(n),
            "--seed",
            str(seed),
            "--checks",
            str(checks),
            "--out",
            str(out),
        ]
    )
    return out


def _error(capsys, argv: list[str]) -> str:
    """Run the CLI, expect the one-line error exit, return the message."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("paraamr: error: ") and "\n" not in err, err
    return err


def _key(kit: Path) -> list[dict]:
    return [json.loads(line) for line in (kit / "key.jsonl").read_text().splitlines()]


def test_sample_keeps_common_sources_one_non_copy_per_corpus(tmp_path):
    kit = _sample(tmp_path, "k")
    key = _key(kit)
    assert len(key) == 6  # 3 sources x 2 corpora
    for corpus in ("ZetaCorpusQ", "OmegaSetR"):
        srcs = [k["source"] for k in key if k["corpus"] == corpus]
        assert sorted(srcs) == sorted(COMMON)  # n = all common sources, each once per corpus
    for k in key:
        assert k["paraphrase"] != k["source"]
        word = "Zeta" if k["corpus"] == "ZetaCorpusQ" else "Omega"
        assert k["paraphrase"].startswith(word)
        assert k["source"].split()[-1] == k["paraphrase"].split()[-1]  # a paraphrase of it
    assert len({k["item_id"] for k in key}) == 6


def test_sample_is_deterministic_and_ignores_file_order(tmp_path):
    one = _sample(tmp_path, "one", n=2, seed=7)
    two = _sample(tmp_path, "two", n=2, seed=7)
    rev = _sample(tmp_path, "rev", n=2, seed=7, reverse=True)
    other = _sample(tmp_path, "other", n=2, seed=8)
    for f in ("key.jsonl", "annotate.html", "mturk/input.csv"):
        assert (one / f).read_bytes() == (two / f).read_bytes()
    assert _key(one) == _key(rev)
    assert [k["item_id"] for k in _key(one)] != [k["item_id"] for k in _key(other)]


def test_what_annotators_see_names_no_corpus(tmp_path):
    kit = _sample(tmp_path, "blind", checks=1)
    seen = [kit / "annotate.html", kit / "mturk" / "input.csv", kit / "mturk" / "template.html"]
    for p in seen:
        text = p.read_text(encoding="utf-8")
        for word in ("ZetaCorpusQ", "OmegaSetR", "corpus", "check:"):
            assert word not in text, (p.name, word)
    with open(kit / "mturk" / "input.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["item_id", "source", "paraphrase"]
    key = {k["item_id"]: k for k in _key(kit)}
    assert {r["item_id"] for r in rows} == set(key)
    # the page's order is the shuffled order, not grouped by corpus
    corpora = [key[r["item_id"]]["corpus"] for r in rows]
    assert corpora != sorted(corpora) and corpora != sorted(corpora, reverse=True)
    # the page and the batch hold no network reference the page would fetch
    page = (kit / "annotate.html").read_text(encoding="utf-8")
    assert "http" not in page.replace("http-equiv", "")


def test_attention_checks_are_copies_and_unrelated_pairs(tmp_path):
    key = _key(_sample(tmp_path, "chk", checks=2))
    copies = [k for k in key if k["corpus"] == "check:copy"]
    unrelated = [k for k in key if k["corpus"] == "check:unrelated"]
    assert len(copies) == len(unrelated) == 2
    assert all(k["source"] == k["paraphrase"] for k in copies)
    assert all(k["source"] != k["paraphrase"] and k["paraphrase"] in COMMON for k in unrelated)
    assert all(k["expected"] == {"similarity": 3, "diversity": 1} for k in copies)
    assert all(k["expected"] == {"similarity": 1} for k in unrelated)


def test_sample_errors(tmp_path, capsys):
    a = _write_pairs(tmp_path / "a.tsv", CORPUS_A)
    b = _write_pairs(tmp_path / "b.tsv", CORPUS_B)
    assert "only 3 sources" in _error(
        capsys,
        [
            "humaneval",
            "sample",
            f"A={a}:pairs",
            f"B={b}:pairs",
            "--n",
            "4",
            "--out",
            str(tmp_path / "x"),
        ],
    )
    with pytest.raises(SystemExit) as e:
        main(["humaneval", "sample", f"A={a}:pairs", "--n", "0", "--out", str(tmp_path / "y")])
    assert e.value.code == 2
    capsys.readouterr()
    assert "no such file" in _error(
        capsys, ["humaneval", "sample", f"A={tmp_path}/nope.tsv", "--out", str(tmp_path / "z")]
    )
    kit = _sample(tmp_path, "taken", n=2)
    capsys.readouterr()
    msg = _error(
        capsys,
        ["humaneval", "sample", f"A={a}:pairs", f"B={b}:pairs", "--n", "3", "--out", str(kit)],
    )
    assert "already holds kit" in msg


MTURK_COLUMNS = [
    "HITId",
    "HITTypeId",
    "Title",
    "Description",
    "Keywords",
    "Reward",
    "CreationTime",
    "MaxAssignments",
    "RequesterAnnotation",
    "AssignmentDurationInSeconds",
    "AutoApprovalDelayInSeconds",
    "Expiration",
    "NumberOfSimilarHITs",
    "LifetimeInSeconds",
    "AssignmentId",
    "WorkerId",
    "AssignmentStatus",
    "AcceptTime",
    "SubmitTime",
    "AutoApprovalTime",
    "ApprovalTime",
    "RejectionTime",
    "RequesterFeedback",
    "WorkTimeInSeconds",
    "LifetimeApprovalRate",
    "Last30DaysApprovalRate",
    "Last7DaysApprovalRate",
    "Input.item_id",
    "Input.source",
    "Input.paraphrase",
    "Answer.diversity",
    "Answer.item_id",
    "Answer.similarity",
    "Approve",
    "Reject",
]


def _mturk_csv(path: Path, key: list[dict], answers: list[tuple]) -> None:
    """``answers``: (item index, worker, status, similarity, diversity); MTurk quotes every
    field."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(MTURK_COLUMNS)
        for n, (i, worker, status, sim, div) in enumerate(answers):
            k = key[i] if isinstance(i, int) else {"item_id": i, "source": "", "paraphrase": ""}
            row = dict.fromkeys(MTURK_COLUMNS, "")
            row.update(
                {
                    "HITId": f"3H{i}",
                    "AssignmentId": f"3A{n}",
                    "WorkerId": worker,
                    "AssignmentStatus": status,
                    "Reward": "$0.10",
                    "WorkTimeInSeconds": "31",
                    "RequesterFeedback": "thanks,\nsee you" if n == 0 else "",
                    "LifetimeApprovalRate": "100% (12/12)",
                    "Input.item_id": k["item_id"],
                    "Input.source": k["source"],
                    "Input.paraphrase": k["paraphrase"],
                    "Answer.similarity": sim,
                    "Answer.diversity": div,
                    "Answer.item_id": k["item_id"],
                }
            )
            w.writerow(row[c] for c in MTURK_COLUMNS)


def test_score_mturk_batch_by_hand(tmp_path):
    kit = _sample(tmp_path, "kit")
    key = _key(kit)
    za = [i for i, k in enumerate(key) if k["corpus"] == "ZetaCorpusQ"]
    om = [i for i, k in enumerate(key) if k["corpus"] == "OmegaSetR"]
    answers = [
        (za[0], "W1", "Approved", "3", "1"),
        (za[0], "W2", "Submitted", "3", "2"),
        (za[1], "W1", "Approved", "2", "2"),
        (za[2], "W1", "Approved", "1", "3"),
        (za[2], "W3", "Rejected", "3", "3"),  # left out, counted
        (om[0], "W1", "Approved", "2", "3"),
        (om[1], "W2", "Approved", "2", "3"),
    ]
    batch = tmp_path / "Batch_1_batch_results.csv"
    _mturk_csv(batch, key, answers)
    out = tmp_path / "t4"
    main(["humaneval", "score", "--dir", str(kit), str(batch), "--out", str(out),
          "--bootstrap", "0"])  # fmt: skip
    data = json.loads((out / "table4.json").read_text())
    rows = {(r["corpus"], r["question"]): r for r in data["rows"]}
    # by hand: Zeta similarity 3,3,2,1 -> shares 50/25/25, average 9/4; diversity 1,2,2,3
    z = rows[("ZetaCorpusQ", "similarity")]
    assert (z["share_3"], z["share_2"], z["share_1"], z["average"]) == (50.0, 25.0, 25.0, 2.25)
    assert (z["n_items"], z["n_judgements"]) == (3, 4)
    zd = rows[("ZetaCorpusQ", "diversity")]
    assert (zd["share_3"], zd["share_2"], zd["share_1"], zd["average"]) == (25.0, 50.0, 25.0, 2.0)
    o = rows[("OmegaSetR", "diversity")]
    assert (o["share_3"], o["average"], o["n_items"]) == (100.0, 3.0, 2)
    assert set(data["rows"][0]) >= {
        "corpus",
        "question",
        "share_3",
        "share_2",
        "share_1",
        "average",
        "n_items",
        "n_judgements",
    }
    assert data["meta"]["counts"]["rejected_assignments"] == 1
    assert data["meta"]["counts"]["judgements_scored"] == 12
    md = (out / "table4.md").read_text()
    assert "paper (Huang et al. 2023, Table 4)" in md and "| ParaAMR |" in md
    assert (out / "table4_shares.png").stat().st_size > 0
    # the W&B run (offline): group table4, the averages in its summary
    from wandb_records import read_offline_run

    (run,) = (out / "wandb").glob("offline-run-*")
    rec = read_offline_run(run)
    assert (rec["project"], rec["group"]) == ("paraamr", "table4")
    assert rec["summary"]["ZetaCorpusQ/similarity/average"] == 2.25


def test_score_bad_answers_raise_with_file_and_line_or_count(tmp_path, capsys):
    kit = _sample(tmp_path, "kit")
    key = _key(kit)
    batch = tmp_path / "b.csv"
    bad = [
        (0, "W1", "Approved", "3", "1"),
        (0, "W1", "Approved", "2", "1"),
        ("nosuchid", "W2", "Approved", "3", "3"),
        (1, "W2", "Approved", "4", "2"),
    ]
    _mturk_csv(batch, key, bad)
    argv = ["humaneval", "score", "--dir", str(kit), "--out", str(tmp_path / "o"), "--no-wandb"]
    # the first row's quoted line break makes every later row start one line further down
    msg = _error(capsys, [*argv, str(batch)])
    assert "b.csv:6: an answer is not one of 1, 2, 3: similarity = '4'" in msg
    _mturk_csv(batch, key, [(0, "W1", "Approved", "3", "1"), (0, "W1", "Approved", "2", "1")])
    msg = _error(capsys, [*argv, str(batch)])
    assert "b.csv:4: an annotator answered the same item and question twice: W1, similarity" in msg
    assert "(first at " in msg and "b.csv:2)" in msg
    _mturk_csv(batch, key, [("nosuchid", "W2", "Approved", "3", "3")])
    assert "b.csv:2: item id not in the key: 'nosuchid'" in _error(capsys, [*argv, str(batch)])
    _mturk_csv(batch, key, bad)
    out = tmp_path / "o2"
    main(["humaneval", "score", "--dir", str(kit), str(batch), "--out", str(out), "--no-wandb",
          "--on-error", "skip", "--bootstrap", "0"])  # fmt: skip
    counts = json.loads((out / "table4.json").read_text())["meta"]["counts"]
    reasons = counts["skipped"]["by_reason"]
    # counted per judgement: both questions of the duplicate row and of the unknown id
    assert reasons == {
        "an annotator answered the same item and question twice": 2,
        "item id not in the key": 2,
        "an answer is not one of 1, 2, 3": 1,
    }
    assert counts["judgements_scored"] == 3  # W1 item 0 (2 answers) + W2 item 1 diversity


def test_score_refuses_another_kits_answers(tmp_path, capsys):
    kit = _sample(tmp_path, "kit", n=2)
    ours = _key(kit)[0]["item_id"]
    # our kit's id on another pair of sentences: a batch made from another kit
    batch = tmp_path / "b.csv"
    _mturk_csv(
        batch,
        [{"item_id": ours, "source": "Other.", "paraphrase": "Else."}],
        [(0, "W1", "Approved", "3", "1")],
    )
    argv = ["humaneval", "score", "--dir", str(kit), "--out", str(tmp_path / "o"), "--no-wandb"]
    assert "b.csv:2: item" in (msg := _error(capsys, [*argv, str(batch)])) and "another kit" in msg
    page = tmp_path / "answers.csv"
    page.write_text(f"kit,annotator,item_id,similarity,diversity\nabc,me,{ours},3,1\n")
    assert "answers of kit abc" in _error(capsys, [*argv, str(page)])
    (kit / "key.jsonl").write_text((kit / "key.jsonl").read_text().replace("Zeta", "Zeda"))
    with pytest.raises(InputError, match="does not match"):
        load_kit(kit)


def _pairs(spec: list[tuple[str, str, int]], question: str = "similarity", corpus: str = "A"):
    from paraamr.humaneval.answers import Judgement

    return [
        (KeyItem(i, "S.", "P.", corpus), Judgement(i, who, question, s, "f", n))
        for n, (i, who, s) in enumerate(spec)
    ]


def test_krippendorff_ordinal_alpha_by_hand():
    # units (1,1), (2,3), (3,3); value counts n1=2, n2=1, n3=3, n=6.
    # ordinal delta_ck = sum_{g=c..k} n_g - (n_c + n_k)/2: d12=1.5, d23=2, d13=3.5.
    # observed: o23 = o32 = 1 -> sum o*d^2 = 8; expected: sum_{c!=k} n_c n_k d^2 = 180;
    # alpha = 1 - (n-1) * 8 / 180 = 7/9.
    pairs = _pairs(
        [
            ("u1", "a", 1),
            ("u1", "b", 1),
            ("u2", "a", 2),
            ("u2", "b", 3),
            ("u3", "a", 3),
            ("u3", "b", 3),
        ]
    )
    a = agreement(pairs, ["A"])
    overall = next(r for r in a if r["question"] == "similarity" and r["corpus"] == "all")
    assert overall["alpha_ordinal"] == pytest.approx(7 / 9)
    assert overall["full_agreement"] == pytest.approx(200 / 3)
    assert overall["n_multi_items"] == 3
    import krippendorff

    data = np.array([[1, 2, 3], [1, 3, 3]], dtype=float)
    assert krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal") == (
        pytest.approx(7 / 9)
    )
    # a unit with one judgement adds nothing to alpha, but a third annotator on u1 does
    more = pairs + _pairs([("u4", "a", 1)])
    assert next(r for r in agreement(more, ["A"]) if r["corpus"] == "all")["alpha_ordinal"] == (
        pytest.approx(7 / 9)
    )


def test_bootstrap_intervals_match_a_plain_loop():
    spec = [
        (f"i{n}", w, s)
        for n, ss in enumerate([(3, 2, 2), (1, 1), (2, 3, 3), (3,), (2, 1)])
        for w, s in zip("abc", ss, strict=False)
    ]
    pairs = _pairs(spec)
    row = table4_rows(pairs, ["A"], bootstrap=200, seed=5)[0]
    by_item: dict[str, list[int]] = {}
    for k, j in pairs:
        by_item.setdefault(k.item_id, []).append(j.score)
    items = list(by_item.values())
    rng = np.random.default_rng(5)
    idx = rng.integers(0, len(items), size=(200, len(items)))
    avgs, share3 = [], []
    for draw in idx:
        scores = [s for i in draw for s in items[i]]
        avgs.append(sum(scores) / len(scores))
        share3.append(100 * scores.count(3) / len(scores))
    assert row["average_lo"] == pytest.approx(np.quantile(avgs, 0.025))
    assert row["average_hi"] == pytest.approx(np.quantile(avgs, 0.975))
    assert row["share_3_hi"] == pytest.approx(np.quantile(share3, 0.975))
    flat = [s for ss in items for s in ss]
    assert row["average"] == pytest.approx(sum(flat) / len(flat))
    assert row["average_lo"] <= row["average"] <= row["average_hi"]


def test_attention_checks_count_failures_and_can_exclude(tmp_path):
    kit = _sample(tmp_path, "kit", checks=1)
    key = _key(kit)
    copy = next(i for i, k in enumerate(key) if k["corpus"] == "check:copy")
    unrel = next(i for i, k in enumerate(key) if k["corpus"] == "check:unrelated")
    real = next(i for i, k in enumerate(key) if not k["corpus"].startswith("check:"))
    batch = tmp_path / "b.csv"
    _mturk_csv(
        batch,
        key,
        [
            (copy, "good", "Approved", "3", "1"),
            (unrel, "good", "Approved", "1", "3"),
            (copy, "bad", "Approved", "2", "1"),
            (unrel, "bad", "Approved", "3", "1"),
            (real, "good", "Approved", "3", "3"),
            (real, "bad", "Approved", "1", "1"),
        ],
    )
    k = load_kit(kit)
    skips = SkipLog("raise")
    s = score_answers(k, read_answers([str(batch)], skips), skips, bootstrap=0)
    assert {c["annotator"]: c["checks_failed"] for c in s.checks} == {"bad": 2, "good": 0}
    assert s.counts["judgements_scored"] == 4 and s.counts["judgements_on_checks"] == 8
    s = score_answers(k, read_answers([str(batch)], skips), skips, bootstrap=0, max_failed_checks=0)
    assert s.counts["excluded_annotators"] == ["bad"] and s.counts["judgements_scored"] == 2
    row = next(r for r in s.rows if r["n_judgements"] and r["question"] == "similarity")
    assert row["average"] == 3.0


def test_page_json_download_is_read(tmp_path):
    kit = _sample(tmp_path, "kit", n=2)
    k = load_kit(kit)
    ids = list(k.items)
    p = tmp_path / "answers-me.json"
    p.write_text(
        json.dumps(
            {
                "format": "paraamr-humaneval-answers/1",
                "kit": k.id,
                "annotator": "me",
                "answers": [
                    {"item_id": ids[0], "similarity": 2, "diversity": None},
                    {"item_id": ids[1], "similarity": 3, "diversity": 5},
                ],
            }
        )
    )
    with pytest.raises(
        CorpusFormatError,
        match=r"answers-me\.json:answers\[1\]: an answer is not one of 1, 2, 3: diversity = '5'",
    ):
        read_answers([str(p)], SkipLog("raise"))
    a = read_answers([str(p)], SkipLog("skip"))
    assert Counter((j.question, j.score) for j in a.judgements) == {
        ("similarity", 2): 1,
        ("similarity", 3): 1,
    }
    assert isinstance(k, Kit)


@pytest.mark.parametrize("n", [50])
def test_kit_from_parabank_eval(tmp_path, n, parabank_eval):
    PBE = parabank_eval
    out = tmp_path / "kit"
    main(
        [
            "humaneval",
            "sample",
            f"ParaNMT={PBE}:parabank-eval-paranmt",
            f"ParaBank1={PBE}:parabank-eval-parabank1",
            "--n",
            str(n),
            "--out",
            str(out),
        ]
    )
    key = _key(out)
    assert Counter(k["corpus"] for k in key) == {"ParaNMT": n, "ParaBank1": n}
    by_corpus = {
        c: sorted(k["source"] for k in key if k["corpus"] == c) for c in ("ParaNMT", "ParaBank1")
    }
    assert by_corpus["ParaNMT"] == by_corpus["ParaBank1"]
    # shuffled: the corpus changes from one item to the next about half the time (grouped by
    # corpus it would change once)
    corpora = [k["corpus"] for k in key]
    assert sum(a != b for a, b in zip(corpora, corpora[1:], strict=False)) > 30
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["n_items"] == 2 * n and "corpora:ParaNMT+ParaBank1" in manifest["signature"]


def test_examples_side_by_side_with_their_metrics(tmp_path, parabank_eval, minilm):
    from paraamr.corpus.specs import CorpusSpec
    from paraamr.metrics.ted import tree_edit_distance
    from paraamr.parsers.base import make_parser
    from paraamr.tables.table3 import write_examples

    specs = [
        CorpusSpec("ParaNMT", str(parabank_eval), "parabank-eval-paranmt"),
        CorpusSpec("ParaBank1", str(parabank_eval), "parabank-eval-parabank1"),
    ]
    parser = make_parser("spacy")
    paths = write_examples(
        specs, tmp_path / "ex.md", k=3, seed=1, max_per_corpus=2, parser=parser, encoder=minilm
    )
    data = json.loads(paths["json"].read_text())
    assert len(data["examples"]) == 3 and "corpora:ParaNMT+ParaBank1" in data["signature"]
    md = paths["md"].read_text()
    for e in data["examples"]:
        assert set(e["paraphrases"]) == {"ParaNMT", "ParaBank1"}
        src = e["source"]
        assert src.replace("|", "\\|") in md
        for ps in e["paraphrases"].values():
            assert 1 <= len(ps) <= 2
            for p in ps:
                a, b = parser.parse([src])[0], parser.parse([p["text"]])[0]
                assert p["ted3"] == tree_edit_distance(a.tree, b.tree, depth=3)
                u, v = minilm.encode([src, p["text"]], normalize_embeddings=True)
                assert p["similarity"] == pytest.approx(float(u @ v), abs=1e-5)
                assert p["text"] != src


def test_examples_match_a_lowercased_corpus_only_with_lowercase_keys(tmp_path, parabank_eval):
    """A corpus the builder lowercased shares no source with ParaNMT's cased ones unless keys
    are lowercased; then the drawn sources are ParaNMT's, with the lowercased corpus's
    paraphrases beside them."""
    from paraamr.corpus.errors import SkipLog
    from paraamr.corpus.readers import read_corpus
    from paraamr.corpus.specs import CorpusSpec
    from paraamr.errors import InputError
    from paraamr.tables.table3 import draw_examples, write_examples

    recs = list(read_corpus(parabank_eval, "parabank-eval-paranmt", SkipLog("raise")))
    cased = [r for r in recs if r.text != r.text.lower()][:20]
    built = tmp_path / "built.tsv"  # each source lowercased, one made-up paraphrase
    built.write_text("".join(f"{r.text.lower()}\tnew {i} {r.text.lower()}\n"
                             for i, r in enumerate(cased)), encoding="utf-8")  # fmt: skip
    specs = [CorpusSpec("ParaNMT", str(parabank_eval), "parabank-eval-paranmt"),
             CorpusSpec("built", str(built), "pairs")]  # fmt: skip
    with pytest.raises(InputError, match="only 0 sources"):
        draw_examples(specs, 3)
    ex = draw_examples(specs, 3, lowercase_keys=True)
    by_lower = {r.text.lower(): i for i, r in enumerate(cased)}
    for e in ex:
        i = by_lower[e["source"].lower()]
        assert e["source"] == cased[i].text  # the first corpus's (cased) source
        assert e["paraphrases"]["built"] == [{"text": f"new {i} {cased[i].text.lower()}"}]
    paths = write_examples(specs, tmp_path / "ex.md", k=2, lowercase_keys=True)
    assert "keys:lowercase" in json.loads(paths["json"].read_text())["signature"]
