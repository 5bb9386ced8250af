"""Tiny, randomly initialised models in the exact on-disk formats the real loaders read.

The machines that build and test this project have no internet access, so no pretrained
checkpoint (amrlib's parse_xfm / generate_xfm models, T5, BART, GPT-2) can be downloaded. These
builders write small stand-ins to a directory so that tests and demos run the *real* loading and
inference code offline:

* :func:`build_tiny_stog` -- an amrlib sentence-to-graph model dir (a BART with a byte-level BPE
  tokenizer plus ``amrlib_meta.json`` for ``.parse_xfm.inference``), loadable with
  ``amrlib.load_stog_model(model_dir=..., device="cpu", batch_size=..., num_beams=...)``.
* :func:`build_tiny_gtos` -- an amrlib graph-to-sentence model dir (a T5 with a Unigram
  tokenizer plus ``amrlib_meta.json`` for ``.generate_xfm.inference``), loadable with
  ``amrlib.load_gtos_model(model_dir=..., device="cpu", batch_size=...)``.
* :func:`build_tiny_causal_lm` -- a plain Hugging Face ``GPT2LMHeadModel`` dir (byte-level BPE),
  loadable with ``AutoTokenizer`` / ``AutoModelForCausalLM``.
* :func:`build_tiny_seq2seq` -- a plain Hugging Face ``T5ForConditionalGeneration`` dir (Unigram),
  loadable with ``AutoTokenizer`` / ``AutoModelForSeq2SeqLM``.

Nothing is trained: the tokenizers are built in milliseconds with the ``tokenizers`` library from a
small built-in text (English sentences and AMR graphs) -- byte-level BPE by ``BpeTrainer``, the
Unigram vocabulary by frequency counting (see :func:`_unigram_vocab`) --, and the weights are
random, drawn after ``torch.manual_seed(seed)``. A build is deterministic given its seed: the
weights and tokenizer files are byte-identical (``config.json`` of the amrlib dirs records the
dir's own path).
**The text these models produce is garbage by construction**: use them to check plumbing, shapes,
batching, file formats and error handling, never quality. Each build takes well under a second
once ``transformers`` is imported, and each saved model is well under 1 MB.

With the libraries' default initialisation the seq2seq models emit (nearly) only padding or one
repeated piece (parser ``'()'``, generator ``''`` or ``'iiii…'``). ``init_std`` (default 0.5)
draws every ``Linear`` and ``Embedding`` weight from ``N(0, init_std)`` instead, so that
generation yields non-empty, input-dependent random text; ``init_std=None`` keeps the library's
default initialisation.

amrlib reads its settings from ``config.json`` -> ``task_specific_params`` and loads the tokenizer
with ``AutoTokenizer.from_pretrained(<name in that config>)``. The builders store the model dir's
own absolute path there (the tokenizer files are saved in the same dir), so nothing touches the
hub. If a dir is moved after building, pass ``tok_name_or_path=<new dir>`` to the amrlib loader
(or rebuild it).

Build the models with the same ``transformers`` version that loads them: v5 writes tokenizer
classes that v4 cannot read.
"""

from __future__ import annotations

import json
import math
import os
import string
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

__all__ = [
    "TINY_CORPUS",
    "build_tiny_causal_lm",
    "build_tiny_gtos",
    "build_tiny_seq2seq",
    "build_tiny_stog",
]

#: Built-in text the tiny tokenizers are fitted on: English sentences, AMR graphs in PENMAN
#: notation, and the variable-free serialisation amrlib's parse_xfm models emit.
TINY_CORPUS: tuple[str, ...] = (
    "The boy wants to go.",
    "The boy wants the girl to believe him.",
    "The girl said that the boy would not go to school.",
    "A cat sat on the mat and looked at the dog.",
    "She did not know what he meant.",
    "They will visit their grandmother in New York next week.",
    "He was reading a book when the phone rang.",
    "We had already eaten dinner before they arrived.",
    "The committee approved the new budget on Tuesday.",
    "Can you tell me where the station is?",
    "It is raining, so the game has been cancelled.",
    "The teacher asked the students to write an essay about their summer.",
    "Prices rose by 5 percent in 2019, the government said.",
    "I think the old man has lost his keys again.",
    "The company hired three engineers and one designer.",
    "Why did the children run away from the house?",
    "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))",
    "(w / want-01\n      :ARG0 (b / boy)\n      :ARG1 (b2 / believe-01\n"
    "            :ARG0 (g / girl)\n            :ARG1 b))",
    "(s / say-01 :ARG0 (g / girl) :ARG1 (g2 / go-02 :polarity - :ARG0 (b / boy)"
    " :ARG4 (s2 / school)))",
    "(s / sit-01 :ARG1 (c / cat) :location (m / mat) :ARG0-of (l / look-01 :ARG1 (d / dog)))",
    "(k / know-01 :polarity - :ARG0 (s / she) :ARG1 (t / thing :ARG2-of (m / mean-01"
    " :ARG0 (h / he))))",
    "(v / visit-01 :ARG0 (t / they) :ARG1 (p / person :ARG0-of (h / have-rel-role-91"
    ' :ARG1 t :ARG2 (g / grandmother))) :location (c / city :name (n / name :op1 "New"'
    ' :op2 "York")) :time (w / week :mod (n2 / next)))',
    "(r / read-01 :ARG0 (h / he) :ARG1 (b / book) :time (r2 / ring-01 :ARG1 (p / phone)))",
    "(a / approve-01 :ARG0 (c / committee) :ARG1 (b / budget :ARG1-of (n / new-01))"
    " :time (d / date-entity :weekday (t / tuesday)))",
    "(r / rise-01 :ARG1 (t / thing :ARG2-of (p / price-01)) :ARG2 (p2 / percentage-entity"
    " :value 5) :time (d / date-entity :year 2019))",
    "(h / hire-01 :ARG0 (c / company) :ARG1 (a / and :op1 (e / engineer :quant 3)"
    " :op2 (d / designer :quant 1)))",
    "(r / run-02 :ARG0 (c / child) :direction (a / away) :source (h / house)"
    " :ARG1-of (c2 / cause-01 :ARG0 (a2 / amr-unknown)))",
    "( want-01 :ARG0 ( boy ) :ARG1 ( go-02 :ARG0 boy ) )",
    "( say-01 :ARG0 ( girl ) :ARG1 ( go-02 :polarity - :ARG0 ( boy ) ) )",
    "( think-01 :ARG0 ( i ) :ARG1 ( lose-02 :ARG0 ( man :mod ( old ) ) :ARG1 ( key ) ) )",
    "w~VBZ b~NN g~VB s~NN :ARG0~NN :ARG1~VB :mod :quant :name :op1 :op2 :location :time",
)

_BART_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
_T5_SPECIALS = ["<pad>", "</s>", "<unk>"]  # T5Tokenizer hard-codes unk_id=2
_GPT2_SPECIALS = ["<|endoftext|>"]

_PathLike = str | os.PathLike[str]


# --------------------------------------------------------------------------------------------
# Tokenizers
# --------------------------------------------------------------------------------------------


def _train_byte_level_bpe(
    vocab_size: int, special_tokens: Sequence[str]
) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Fit a byte-level BPE (GPT-2 / RoBERTa / BART style) on :data:`TINY_CORPUS`.

    Args:
        vocab_size: Upper bound on the vocabulary size (the 256 byte symbols and the special
            tokens included); the small corpus may yield fewer merges.
        special_tokens: Special tokens, given the first ids in this order.

    Returns:
        The vocabulary (token -> id) and the ordered merge list.
    """
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(TINY_CORPUS, trainer=trainer)
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return dict(model["vocab"]), merges  # type: ignore[return-value]


def _t5_pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    """The pre-tokenizer ``T5Tokenizer`` installs (whitespace split, ``▁`` word marker)."""
    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.WhitespaceSplit(),
            pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True),
        ]
    )


def _unigram_vocab(vocab_size: int, max_piece_len: int = 8) -> list[tuple[str, float]]:
    """Build a Unigram (SentencePiece-style) vocabulary from :data:`TINY_CORPUS`, deterministically.

    ``tokenizers``' ``UnigramTrainer`` is not reproducible (tied pieces and the characters it
    appends at the end are ordered by hash-map iteration, so ids change from run to run). This
    builds the equivalent of the trainer's seed vocabulary instead, without EM: every printable
    ASCII character and every corpus character, plus the most frequent substrings (length
    2..``max_piece_len``, seen at least twice) of the words the T5 pre-tokenizer produces, each
    scored by its log relative frequency. Longer frequent pieces therefore win in Viterbi
    segmentation, as in a trained model. ``<pad>``, ``</s>`` and ``<unk>`` get ids 0, 1 and 2,
    as ``T5Tokenizer`` expects.

    Args:
        vocab_size: Upper bound on the vocabulary size (special tokens included).
        max_piece_len: Longest multi-character piece considered.

    Returns:
        The ``(piece, log-probability)`` list, in id order.
    """
    pre = _t5_pre_tokenizer()
    counts: Counter[str] = Counter()
    for line in TINY_CORPUS:
        for word, _ in pre.pre_tokenize_str(line):
            for i in range(len(word)):
                for j in range(i + 1, min(len(word), i + max_piece_len) + 1):
                    counts[word[i:j]] += 1
    chars = set(string.printable.strip()) | {"▁"} | {p for p in counts if len(p) == 1}
    for c in chars:
        counts[c] += 1  # every character is reachable, even if unseen in the corpus
    multi = sorted(
        (p for p in counts if len(p) > 1 and counts[p] >= 2), key=lambda p: (-counts[p], p)
    )
    pieces = sorted(chars) + multi[: max(0, vocab_size - len(_T5_SPECIALS) - len(chars))]
    total = sum(counts[p] for p in pieces)
    scored = sorted(
        ((p, round(math.log(counts[p] / total), 6)) for p in pieces), key=lambda x: (-x[1], x[0])
    )
    return [(tok, 0.0) for tok in _T5_SPECIALS] + scored


def _bart_tokenizer(vocab_size: int = 640) -> Any:
    """A ``BartTokenizer`` (v5: a ``RobertaTokenizer`` backed by ``tokenizers``)."""
    from transformers import BartTokenizer

    vocab, merges = _train_byte_level_bpe(vocab_size, _BART_SPECIALS)
    return BartTokenizer(vocab=vocab, merges=merges)


def _gpt2_tokenizer(vocab_size: int = 640) -> Any:
    """A ``GPT2Tokenizer``; like the real GPT-2 it has no padding token."""
    from transformers import GPT2Tokenizer

    vocab, merges = _train_byte_level_bpe(vocab_size, _GPT2_SPECIALS)
    return GPT2Tokenizer(vocab=vocab, merges=merges)


def _t5_tokenizer(model_max_length: int, vocab_size: int = 400) -> Any:
    """A ``T5Tokenizer`` (Unigram) without the 100 ``<extra_id_*>`` sentinels."""
    from transformers import T5Tokenizer

    return T5Tokenizer(
        vocab=_unigram_vocab(vocab_size), extra_ids=0, model_max_length=model_max_length
    )


# --------------------------------------------------------------------------------------------
# Weights and files
# --------------------------------------------------------------------------------------------


def _prepare_dir(model_dir: _PathLike) -> Path:
    path = Path(model_dir).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


@torch.no_grad()
def _redraw_weights(model: torch.nn.Module, init_std: float | None) -> None:
    """Redraw every Linear / Embedding weight from ``N(0, init_std)`` and zero the biases.

    Norm layers keep their default (ones / zeros). Draws come from the global torch RNG, which
    the caller has seeded. ``None`` leaves the library's own initialisation untouched.
    """
    if init_std is None:
        return
    for module in model.modules():
        if isinstance(module, torch.nn.Linear | torch.nn.Embedding):
            module.weight.normal_(mean=0.0, std=init_std)
            if getattr(module, "bias", None) is not None:
                module.bias.zero_()


def _save(model: Any, tokenizer: Any, path: Path) -> None:
    model.eval()
    model.save_pretrained(path)  # config.json, generation_config.json, model.safetensors
    tokenizer.save_pretrained(path)  # tokenizer.json, tokenizer_config.json


def _write_amrlib_meta(path: Path, model_type: str, inference_module: str) -> None:
    meta = {
        "model_type": model_type,
        "version": "0.0.0-tiny",
        "description": "Tiny random test model (paraamr.testing.tiny_models); output is garbage.",
        "inference_module": inference_module,
        "inference_class": "Inference",
        "model_fn": "model.safetensors",
        "kwargs": {},
    }
    (path / "amrlib_meta.json").write_text(json.dumps(meta, indent=2) + "\n")


def _tiny_t5(
    tokenizer: Any,
    seed: int,
    init_std: float | None,
    task_specific_params: dict | None,
    arch: dict | None = None,
) -> Any:
    from transformers import T5Config, T5ForConditionalGeneration

    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        relative_attention_num_buckets=16,
        relative_attention_max_distance=32,
        dropout_rate=0.0,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
        task_specific_params=task_specific_params,
    )
    for k, v in (arch or {}).items():
        setattr(config, k, v)
    torch.manual_seed(seed)
    model = T5ForConditionalGeneration(config)
    _redraw_weights(model, init_std)
    return model


# --------------------------------------------------------------------------------------------
# Public builders
# --------------------------------------------------------------------------------------------


def build_tiny_stog(
    model_dir: _PathLike,
    seed: int = 0,
    init_std: float | None = 0.5,
    *,
    max_in_len: int = 64,
    max_out_len: int = 64,
    arch: dict | None = None,
) -> Path:
    """Build a tiny amrlib sentence-to-graph (parse_xfm) model dir.

    The dir holds a 1+1-layer BART (``d_model`` 32, 640-token byte-level BPE vocabulary),
    ``tokenizer.json`` / ``tokenizer_config.json`` and ``amrlib_meta.json`` pointing at
    ``.parse_xfm.inference``; ``config.json`` carries
    ``task_specific_params["parse_amr"] = {"model_name_or_path", "tok_name_or_path",
    "max_in_len", "max_out_len"}`` with both names set to the dir itself.

    Load it with ``amrlib.load_stog_model(model_dir=str(path), device="cpu", batch_size=4,
    num_beams=2)`` and call ``parse_sents(sentences)``: one PENMAN string (with a
    ``# ::snt`` line) or ``None`` per sentence. The graphs are random garbage: typically a
    one-node graph such as ``(x / ,mo…)`` (byte-level decoding of random ids can give ``�``),
    sometimes the empty graph ``()``, and ``None`` when no beam deserialises.

    Args:
        model_dir: Directory to write (created if missing; existing files are overwritten).
        seed: Seed for ``torch.manual_seed`` before the weights are drawn.
        init_std: Std of the Linear/Embedding weights (BART's own ``init_std`` setting). The
            default 0.5 gives non-empty garbage; ``None`` keeps BART's default 0.02, whose
            output is only padding (the parser then returns ``'()'``).
        max_in_len: amrlib's ``max_in_len`` (sentence tokens; longer input is clipped).
        max_out_len: amrlib's ``max_out_len`` (``max_length`` for graph generation).
        arch: config fields that replace the tiny sizes, e.g. the real model's ``d_model`` and
            layer counts with random weights (``benchmarks/bench_build.py``); a ``vocab_size``
            above the tokenizer's makes ids the tokenizer cannot decode (random text anyway).

    Returns:
        The absolute path of the model dir.
    """
    from transformers import BartConfig, BartForConditionalGeneration

    path = _prepare_dir(model_dir)
    tokenizer = _bart_tokenizer()
    tokenizer.model_max_length = max_in_len
    config = BartConfig(
        vocab_size=len(tokenizer),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=max(max_in_len, max_out_len) + 2,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        init_std=0.02 if init_std is None else init_std,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.eos_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
        task_specific_params={
            "parse_amr": {
                "model_name_or_path": str(path),
                "tok_name_or_path": str(path),
                "max_in_len": max_in_len,
                "max_out_len": max_out_len,
            }
        },
    )
    for k, v in (arch or {}).items():
        setattr(config, k, v)
    torch.manual_seed(seed)
    model = BartForConditionalGeneration(config)  # draws weights from N(0, config.init_std)
    _save(model, tokenizer, path)
    _write_amrlib_meta(path, "stog", ".parse_xfm.inference")
    return path


def build_tiny_gtos(
    model_dir: _PathLike,
    seed: int = 0,
    init_std: float | None = 0.5,
    *,
    max_in_len: int = 128,
    max_out_len: int = 32,
    arch: dict | None = None,
) -> Path:
    """Build a tiny amrlib graph-to-sentence (generate_xfm) model dir.

    The dir holds a 2+2-layer T5 (``d_model`` 32, 400-piece Unigram vocabulary, no
    ``<extra_id_*>`` sentinels), its tokenizer files and ``amrlib_meta.json`` pointing at
    ``.generate_xfm.inference``; ``config.json`` carries
    ``task_specific_params["translation_amr_to_text"] = {"model_name_or_path", "max_in_len",
    "max_out_len"}`` with the name set to the dir itself.

    Load it with ``amrlib.load_gtos_model(model_dir=str(path), device="cpu", batch_size=4)`` and
    call ``generate(graphs, use_tense=False)``: ``(sentences, clipped)``, one random string and
    one bool per graph.

    Args:
        model_dir: Directory to write (created if missing; existing files are overwritten).
        seed: Seed for ``torch.manual_seed`` before the weights are drawn.
        init_std: Std every Linear/Embedding weight is redrawn from. The default 0.5 gives
            non-empty garbage; ``None`` keeps T5's default initialisation, whose output is
            near-constant (empty strings or one piece repeated).
        max_in_len: amrlib's ``max_in_len`` (graph tokens; a graph reaching it is reported
            as clipped).
        max_out_len: amrlib's ``max_out_len`` (``max_length`` for sentence generation).
        arch: config fields that replace the tiny sizes, e.g. the real model's ``d_model`` and
            layer counts with random weights (``benchmarks/bench_build.py``); a ``vocab_size``
            above the tokenizer's makes ids the tokenizer cannot decode (random text anyway).

    Returns:
        The absolute path of the model dir.
    """
    path = _prepare_dir(model_dir)
    tokenizer = _t5_tokenizer(model_max_length=max_in_len)
    tsp = {
        "translation_amr_to_text": {
            "model_name_or_path": str(path),
            "max_in_len": max_in_len,
            "max_out_len": max_out_len,
        }
    }
    model = _tiny_t5(tokenizer, seed, init_std, tsp, arch)
    _save(model, tokenizer, path)
    _write_amrlib_meta(path, "gtos", ".generate_xfm.inference")
    return path


def build_tiny_causal_lm(
    model_dir: _PathLike, seed: int = 0, init_std: float | None = None
) -> Path:
    """Build a tiny GPT-2 causal language model dir (``GPT2LMHeadModel`` + byte-level BPE).

    Two layers, ``n_embd`` 32, 128 positions, 640-token vocabulary. Like the real ``gpt2`` the
    tokenizer has ``<|endoftext|>`` as bos/eos/unk and **no padding token**; set
    ``tokenizer.pad_token = tokenizer.eos_token`` before batching with padding. Load it with
    ``AutoTokenizer.from_pretrained(path)`` and ``AutoModelForCausalLM.from_pretrained(path)``.

    Args:
        model_dir: Directory to write (created if missing; existing files are overwritten).
        seed: Seed for ``torch.manual_seed`` before the weights are drawn.
        init_std: ``None`` (default) keeps GPT-2's own initialisation (std 0.02: near-uniform
            next-token distribution, loss ~ln(vocab size) ~ 6.4); a float redraws every
            Linear/Embedding weight from ``N(0, init_std)`` (much larger losses).

    Returns:
        The absolute path of the model dir.
    """
    from transformers import GPT2Config, GPT2LMHeadModel

    path = _prepare_dir(model_dir)
    tokenizer = _gpt2_tokenizer()
    tokenizer.model_max_length = 128
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=128,
        n_embd=32,
        n_layer=2,
        n_head=2,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    _redraw_weights(model, init_std)
    _save(model, tokenizer, path)
    return path


def build_tiny_seq2seq(
    model_dir: _PathLike,
    seed: int = 0,
    init_std: float | None = 0.5,
    *,
    max_length: int = 128,
) -> Path:
    """Build a tiny plain Hugging Face text-to-text model dir (``T5ForConditionalGeneration``).

    Same architecture and Unigram tokenizer as :func:`build_tiny_gtos` but without any amrlib
    files or ``task_specific_params``: a stand-in for a generic hub seq2seq generator
    (``t5-base``, ``flan-t5``). Load it with ``AutoTokenizer.from_pretrained(path)`` and
    ``AutoModelForSeq2SeqLM.from_pretrained(path)``.

    Args:
        model_dir: Directory to write (created if missing; existing files are overwritten).
        seed: Seed for ``torch.manual_seed`` before the weights are drawn.
        init_std: Std every Linear/Embedding weight is redrawn from (default 0.5: non-empty
            garbage from ``generate``); ``None`` keeps T5's default initialisation, whose
            output is near-constant (empty strings or one piece repeated).
        max_length: The tokenizer's ``model_max_length``.

    Returns:
        The absolute path of the model dir.
    """
    path = _prepare_dir(model_dir)
    tokenizer = _t5_tokenizer(model_max_length=max_length)
    model = _tiny_t5(tokenizer, seed, init_std, None)
    _save(model, tokenizer, path)
    return path


def main(argv: list[str] | None = None) -> None:
    """``python -m paraamr.testing.tiny_models --out DIR``: build stog/, gtos/, lm/, seq2seq/."""
    import argparse

    ap = argparse.ArgumentParser(description="build the tiny random test models")
    ap.add_argument("--out", default=".cache/tiny-models")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    out = Path(a.out)
    for name, fn in (
        ("stog", build_tiny_stog),
        ("gtos", build_tiny_gtos),
        ("lm", build_tiny_causal_lm),
        ("seq2seq", build_tiny_seq2seq),
    ):
        print(f"{name}: {fn(out / name, seed=a.seed)}")


if __name__ == "__main__":
    main()
