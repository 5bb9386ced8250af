"""The builder's two seq2seq models, each loaded once per process and run in length-sorted batches
under ``torch.inference_mode``: text → AMR (amrlib stog) and AMR → text (amrlib gtos or any
Hugging Face seq2seq model). The third, the perplexity LM, is the project's one scorer,
:class:`paraamr.lms.CausalLMScorer` (``conf/lm/*.yaml``).

Real models (online users, ``make models``): amrlib ``parse_xfm_bart_large`` (default parser) or
``parse_spring`` (the paper's; needs transformers < 5), ``generate_t5wtense`` and ``gpt2``.
Tests use tiny random models in the same on-disk formats (:mod:`paraamr.testing.tiny_models`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from paraamr.precision import Precision, apply
from paraamr.utils import map_length_batches

__all__ = ["AmrlibStog", "AmrlibGenerator", "HFGenerator", "check_model_dir", "MODELS_REMEDY",
           "TINY_REMEDY"]  # fmt: skip


def _device(device: str | None) -> str:
    import torch

    return device or ("cuda" if torch.cuda.is_available() else "cpu")


def _label(p: Precision) -> str:
    """A model's precision in its signature: nothing for fp32 (earlier signatures stay),
    ``,bf16-autocast`` / ``,bf16`` / ``,fp16`` otherwise."""
    return "" if p.label == "fp32" else f",{p.label}"


def _load_hf(auto_cls, name: str, device: str, dtype: str | None):
    """Tokenizer, model in eval mode on ``device`` and its precision
    (:func:`paraamr.precision.apply`: half precision on a GPU; on a CPU bf16 runs as autocast)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(name)
    model = auto_cls.from_pretrained(name).to(device)
    return tok, model.eval(), apply(model, dtype, device, "generator.dtype")


MODELS_REMEDY = (
    "download the amrlib models with `make models` (needs network), or point the config at a "
    "local model dir; offline, build with the AMR models trained here: +experiment=build_offline "
    "amr_model=DIR (make build-offline trains them when missing)"
)
TINY_REMEDY = "build the tiny test models with `make tiny-models` (or set tiny_dir= to them)"


def check_model_dir(model_dir: str, what: str, remedy: str = MODELS_REMEDY) -> None:
    """A one-line error naming the missing model dir and ``remedy`` (what makes it)."""
    if not Path(model_dir).is_dir():
        raise FileNotFoundError(f"{what} model dir {model_dir} not found: {remedy}")


class AmrlibStog:
    """Text → AMR with an amrlib stog model directory (``amrlib.load_stog_model``).

    ``parse`` returns PENMAN strings with ``# ::snt`` metadata, or ``None`` where amrlib could not
    deserialise any beam.
    """

    def __init__(
        self,
        model_dir: str,
        batch_size: int = 16,
        num_beams: int = 1,
        device: str | None = None,
        dtype: str | None = None,
        tok_name_or_path: str | None = None,
    ):
        import amrlib

        check_model_dir(model_dir, "AMR parser")
        self.model_dir, self.device = model_dir, _device(device)
        kw = {"device": self.device, "batch_size": batch_size, "num_beams": num_beams}
        if tok_name_or_path:
            kw["tok_name_or_path"] = tok_name_or_path
        self.inference = amrlib.load_stog_model(model_dir=model_dir, **kw)
        self.precision = apply(self.inference.model, dtype, self.device, "stog.dtype")
        self.batch_size = batch_size

    def signature(self) -> str:
        return f"amrlib-stog({Path(self.model_dir).name}{_label(self.precision)})"

    def parse(self, sentences: Sequence[str]) -> list[str | None]:
        import torch

        with torch.inference_mode(), self.precision.context():
            # amrlib sorts by length inside parse_sents; one call per chunk keeps batches full
            return self.inference.parse_sents(list(sentences), add_metadata=True)


class AmrlibGenerator:
    """AMR → text with an amrlib gtos model dir (``generate_t5wtense`` and friends)."""

    def __init__(
        self,
        model_dir: str,
        batch_size: int = 32,
        num_beams: int = 1,
        use_tense: bool = False,
        device: str | None = None,
        dtype: str | None = None,
    ):
        import amrlib

        check_model_dir(model_dir, "AMR generator")
        self.model_dir, self.use_tense, self.device = model_dir, use_tense, _device(device)
        self.inference = amrlib.load_gtos_model(
            model_dir=model_dir, device=self.device, batch_size=batch_size, num_beams=num_beams
        )
        self.precision = apply(self.inference.model, dtype, self.device, "generator.dtype")
        self.batch_size = batch_size

    def signature(self) -> str:
        name = Path(self.model_dir).name
        return f"amrlib-gtos({name},tense={self.use_tense}{_label(self.precision)})"

    def generate(self, graphs: Sequence[str]) -> list[tuple[str, bool]]:
        """(sentence, clipped) per graph; graphs are length-sorted into batches here (amrlib's
        generator does not sort)."""
        import torch

        def run(batch: list[str]) -> list[tuple[str, bool]]:
            sents, clips = self.inference.generate(batch, use_tense=self.use_tense)
            return list(zip(sents, clips, strict=True))

        with torch.inference_mode(), self.precision.context():
            return map_length_batches(list(graphs), run, self.batch_size, longest_first=True)


class HFGenerator:
    """AMR → text with any Hugging Face seq2seq model fed the one-line PENMAN graph."""

    def __init__(
        self,
        model_name_or_path: str,
        batch_size: int = 32,
        num_beams: int = 1,
        max_in_len: int = 512,
        max_new_tokens: int = 96,
        device: str | None = None,
        dtype: str | None = None,
    ):
        from transformers import AutoModelForSeq2SeqLM

        self.name, self.device = model_name_or_path, _device(device)
        self.tok, self.model, self.precision = _load_hf(
            AutoModelForSeq2SeqLM, model_name_or_path, self.device, dtype
        )
        self.batch_size, self.num_beams = batch_size, num_beams
        self.max_in_len, self.max_new_tokens = max_in_len, max_new_tokens

    def signature(self) -> str:
        return f"hf-seq2seq({self.name}{_label(self.precision)})"

    def generate(self, graphs: Sequence[str]) -> list[tuple[str, bool]]:
        import torch

        def run(batch: list[str]) -> list[tuple[str, bool]]:
            enc = self.tok(
                batch,
                return_tensors="pt",
                padding=True,
                truncation=True,
                max_length=self.max_in_len,
            ).to(self.device)
            clipped = [int(m.sum()) >= self.max_in_len for m in enc["attention_mask"]]
            out = self.model.generate(
                **enc, num_beams=self.num_beams, do_sample=False, max_new_tokens=self.max_new_tokens
            )
            texts = self.tok.batch_decode(out, skip_special_tokens=True)
            return list(zip(texts, clipped, strict=True))

        with torch.inference_mode(), self.precision.context():
            return map_length_batches(list(graphs), run, self.batch_size, longest_first=True)


#: what makes the AMR models trained here (paraamr.amrlm)
TRAINED_REMEDY = (
    "train them with `python experiments/train_amr.py out_dir=DIR` and set amr_model=DIR"
)


def _trained(model_dir: str, direction: str, device: str | None) -> Any:
    from paraamr.amrlm import model_dir as find_model
    from paraamr.amrlm.module import AMRModule

    what = "AMR parser" if direction == "parse" else "AMR generator"
    check_model_dir(model_dir, what, TRAINED_REMEDY)
    module = AMRModule.from_saved(find_model(model_dir, direction))
    return module.to(_device(device)).eval()


def _decoding_extra(num_beams: int, loops: int | None = None) -> str:
    """What a trained model's signature adds for decoding other than the defaults (greedy, no
    loop stop), so the defaults keep their old names.

    >>> _decoding_extra(1), _decoding_extra(4, loops=3)
    ('', ',loops=3,beams=4')
    """
    return (f",loops={loops}" if loops else "") + (f",beams={num_beams}" if num_beams > 1 else "")


def _engine_label(engine: Mapping[str, Any]) -> str:
    from paraamr.lms.engines import engine_label

    return engine_label(engine)


class TrainedStog:
    """Text → AMR with the parser trained here (:mod:`paraamr.amrlm`, ``DIR/parser/model``):
    length-sorted batches, decoding that writes only balanced graphs; ``parse`` returns PENMAN
    strings with ``# ::snt``, or ``None`` for an answer that does not deserialize (a reject at
    stage ``parse``). ``answer_cap``, ``stop_loops``, ``num_beams``: the decoding
    (:class:`paraamr.amrlm.module.AMRModule`); ``dtype``: its precision
    (:meth:`~paraamr.amrlm.module.AMRModule.set_precision`; the signature names it unless fp32);
    ``engine``: what it decodes on (:mod:`paraamr.lms.engines`; the signature names it unless
    ``hf``); ``read_tokens``: the most sentence tokens it reads (``None``: its training length;
    the signature names it when it differs), :meth:`cut` counts the sentences longer;
    ``constraint``: ``brackets`` or ``grammar`` (:mod:`paraamr.amrlm.grammar`, which the
    ``genai`` engine always runs; the signature names it)."""

    def __init__(
        self,
        model_dir: str,
        batch_size: int = 64,
        device: str | None = None,
        answer_cap: Sequence[float] | None = (7.0, 10.0),
        stop_loops: int | None = None,
        num_beams: int = 1,
        dtype: str | None = None,
        engine: Mapping[str, Any] | None = None,
        read_tokens: int | None = None,
        constraint: str = "brackets",
    ):
        self.model_dir, self.batch_size = model_dir, batch_size
        self.module = _trained(model_dir, "parse", device)
        self.trained_tokens = self.module.set_read_limit(None)
        self.read_tokens = self.module.set_read_limit(read_tokens, "stog.read_tokens")
        self.module.set_decoding(answer_cap, None, stop_loops=stop_loops, num_beams=num_beams,
                                 constraint=constraint)  # fmt: skip
        self.precision = self.module.set_precision(dtype, "stog.dtype")
        self.engine = self.module.set_engine(engine, "stog.engine")

    def signature(self) -> str:
        from paraamr.amrlm.module import cap_label

        s = self.module.settings
        extra = _decoding_extra(s["num_beams"], loops=s["stop_loops"]) + _label(self.precision)
        if self.module.grammar() is not None:
            extra += ",grammar"
        extra += _engine_label(self.engine)
        if self.read_tokens != self.trained_tokens:
            extra += f",reads={self.read_tokens}"
        return f"amrlm-parser({Path(self.model_dir).name},cap={cap_label(s['answer_cap'])}{extra})"

    def cut(self, sentences: Sequence[str]) -> int:
        """How many of ``sentences`` are longer than the parser reads (their ends are lost)."""
        return sum(len(self.module.units(s)) > self.read_tokens for s in sentences)

    def parse(self, sentences: Sequence[str]) -> list[str | None]:
        import penman

        from paraamr.amr.serialize import deserialize
        from paraamr.lms.answers import answers

        outs = answers(self.module, list(sentences), self.batch_size, progress=False)
        graphs = [deserialize(o) for o in outs]
        return [
            None if g is None else penman.encode(penman.Graph(g.triples, top=g.top,
                                                              metadata={"snt": s}))
            for s, g in zip(sentences, graphs, strict=True)
        ]  # fmt: skip


class TrainedGenerator:
    """AMR → text with the generator trained here (:mod:`paraamr.amrlm`,
    ``DIR/generator/model``): each one-line graph serialized from its top as in training,
    length-sorted batches; ``clipped`` when the graph was longer than the model reads.
    ``dtype``, ``engine``: the precision and the engine, as :class:`TrainedStog`'s."""

    def __init__(
        self,
        model_dir: str,
        batch_size: int = 16,
        device: str | None = None,
        no_repeat_words: int | None = 4,
        num_beams: int = 1,
        dtype: str | None = None,
        engine: Mapping[str, Any] | None = None,
    ):
        self.model_dir, self.batch_size = model_dir, batch_size
        self.module = _trained(model_dir, "generate", device)
        self.module.set_decoding(None, no_repeat_words, num_beams=num_beams)
        self.precision = self.module.set_precision(dtype, "generator.dtype")
        self.engine = self.module.set_engine(engine, "generator.engine")

    def signature(self) -> str:
        n = self.module.settings["no_repeat_words"]
        form = self.module.settings.get("graph_form", "serialized")
        graph = "" if form == "serialized" else f",graph={form}"  # the default keeps old names
        extra = _decoding_extra(self.module.settings["num_beams"]) + _label(self.precision)
        extra += _engine_label(self.engine)
        return f"amrlm-generator({Path(self.model_dir).name},no-repeat={n}{graph}{extra})"

    def generate(self, graphs: Sequence[str]) -> list[tuple[str, bool]]:
        from paraamr.lms.answers import answers

        prompts = [self.module.graph_prompt(g) for g in graphs]
        limit = self.module.settings["max_source_length"]
        clipped = [len(self.module.units(p)) > limit for p in prompts]
        outs = answers(self.module, prompts, self.batch_size, progress=False)
        return list(zip(outs, clipped, strict=True))
