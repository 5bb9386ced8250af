"""Supervised SimCSE as a Lightning module, an STS-B dev evaluator, and the export to
sentence-transformers format.

Pooling (``POOLINGS``):

- ``cls``: the last-layer hidden state of the first token (``[CLS]``), with no MLP on top. SimCSE
  itself trains supervised models with a freshly initialised dense+tanh MLP over ``[CLS]``
  (``--pooler_type cls``) and ships it as the BERT pooler; we leave it out so the exported
  ``Transformer + Pooling(cls)`` model is exactly the trained network (SimCSE's
  ``cls_before_pooler``).
- ``mean``: mean of the last-layer hidden states over the attention mask (sentence-transformers'
  ``mean`` pooling; what MiniLM was trained with).

Under DDP the embeddings of every process are gathered (``all_gather(sync_grads=True)``) before
the loss, so each anchor sees the whole global batch as negatives and the gradient equals that of
one device holding the global batch.

>>> pairs = [("a", "b", 2.0), ("c", "d", 3.0), ("e", "f", 1.0)]
>>> import numpy as np
>>> table = {"a": [1, 0], "b": [1, 0.1], "c": [1, 0], "d": [1, 0], "e": [1, 0], "f": [1, 0.5]}
>>> encode = lambda xs, batch_size=64: np.array([table[x] for x in xs], dtype=float)
>>> round(stsb_dev_spearman(encode, pairs), 3)
1.0
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytorch_lightning as pl
import torch
from torch import Tensor

from paraamr.errors import ConfigError, InputError, ParaAMRError
from paraamr.simcse.loss import simcse_loss
from paraamr.sts.readers import STSB_FILE
from paraamr.training.callbacks import PeriodicEval
from paraamr.utils import length_batches

__all__ = [
    "POOLINGS",
    "STSB_DEV",
    "SimCSEModule",
    "pool",
    "read_stsb_dev",
    "stsb_dev_spearman",
    "StsbDevEvaluator",
    "sts_dev_callback",
    "save_sentence_transformer",
]

log = logging.getLogger(__name__)

POOLINGS = ("cls", "mean")
# Full GLUE STS-B dev (1,500 pairs), relative to the data directory.
STSB_DEV = STSB_FILE  # the full GLUE STS-B dev set, relative to the data dir
METRIC = "val/stsb_spearman"
SentencePair = tuple[str, str, float]


def pool(hidden: Tensor, attention_mask: Tensor, mode: str) -> Tensor:
    """Sentence embeddings ``(N, D)`` from token states ``(N, L, D)``; see :data:`POOLINGS`.

    >>> h = torch.tensor([[[1.0], [3.0], [100.0]]]); m = torch.tensor([[1, 1, 0]])
    >>> pool(h, m, "cls").tolist(), pool(h, m, "mean").tolist()
    ([[1.0]], [[2.0]])
    """
    if mode == "cls":
        return hidden[:, 0]
    if mode == "mean":
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    raise ConfigError(f"unknown pooling {mode!r}; known: {POOLINGS}")


class SimCSEModule(pl.LightningModule):
    """Supervised SimCSE: a Hugging Face encoder trained on (anchor, positive, negative) batches.

    Args:
        model_name_or_path: a local model directory, hub name or preset
            (:func:`paraamr.lms.loading.resolve_backbone`: ``minilm``, ``smollm2``).
        pooling: ``cls`` or ``mean`` (module docstring).
        temperature: SimCSE temperature (0.05).
        hard_negative_weight: log-space bonus on each anchor's own negative (SimCSE: 0).
        lr: peak learning rate of AdamW.
        weight_decay: AdamW weight decay (not applied to biases and LayerNorm weights).
        warmup_steps: linear warm-up steps, then linear decay to 0 at the last step.
        max_seq_length: truncation length of :meth:`encode` (training truncates in the collator).
        tokenizer_name_or_path: defaults to ``model_name_or_path``.
        gather_across_devices: gather embeddings over DDP processes (global in-batch negatives).
        freeze_layers: freeze the embeddings and the lowest N blocks
            (:func:`paraamr.training.recipe.freeze_lower_layers`; ``None``: train everything),
            the CPU recipe for a decoder such as SmolLM2-135M used as a mean-pooled encoder.

    A tokenizer without a padding token (a causal LM's) pads with its end-of-text token; padding
    is masked out of the pooling, so which token pads does not change an embedding.
    """

    def __init__(
        self,
        model_name_or_path: str,
        pooling: str = "cls",
        temperature: float = 0.05,
        hard_negative_weight: float = 0.0,
        lr: float = 3e-5,
        weight_decay: float = 0.0,
        warmup_steps: int = 0,
        max_seq_length: int | None = None,
        tokenizer_name_or_path: str | None = None,
        gather_across_devices: bool = True,
        freeze_layers: int | None = None,
    ) -> None:
        super().__init__()
        if pooling not in POOLINGS:
            raise ConfigError(f"model.pooling: unknown pooling {pooling!r}; known: {POOLINGS}")
        if not temperature > 0:
            raise ConfigError(f"model.temperature must be > 0, got {temperature}")
        self.save_hyperparameters()
        from transformers import AutoModel

        from paraamr.lms.loading import resolve_backbone

        self.encoder = AutoModel.from_pretrained(resolve_backbone(str(model_name_or_path)))
        self.encoder.train()  # from_pretrained returns eval mode; SimCSE trains with dropout on
        pooler = getattr(self.encoder, "pooler", None)
        if isinstance(pooler, torch.nn.Module):
            # unused by both poolings: frozen, so DDP does not wait for its gradients; kept in
            # the saved model so it loads without "newly initialised weights" warnings
            pooler.requires_grad_(False)
        from paraamr.training.recipe import freeze_lower_layers

        self.frozen = freeze_lower_layers(self.encoder, freeze_layers)
        self._tokenizer = None

    @property
    def tokenizer(self) -> Any:
        """The Hugging Face tokenizer (loaded on first use)."""
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            from paraamr.lms.loading import resolve_backbone

            hp = self.hparams
            name = str(hp.tokenizer_name_or_path or hp.model_name_or_path)
            tok = AutoTokenizer.from_pretrained(resolve_backbone(name))
            if tok.pad_token is None and tok.eos_token is not None:
                tok.pad_token = tok.eos_token  # a causal LM's tokenizer: masked out anyway
            self._tokenizer = tok
        return self._tokenizer

    @tokenizer.setter
    def tokenizer(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    @property
    def embedding_dim(self) -> int:
        return int(self.encoder.config.hidden_size)

    def forward(self, features: dict[str, Tensor]) -> Tensor:
        """Pooled embeddings ``(N, D)`` of a tokenized batch."""
        accepted = ("input_ids", "attention_mask", "token_type_ids")
        out = self.encoder(**{k: v for k, v in features.items() if k in accepted})
        return pool(out.last_hidden_state, features["attention_mask"], self.hparams.pooling)

    @property
    def nonfinite_hint(self) -> str:
        """What :class:`~paraamr.training.callbacks.FiniteLossGuard` suggests on a NaN loss."""
        return (
            f"temperature {self.hparams.temperature}: lower the learning rate (or raise "
            "warmup_steps), check the training data for empty or garbage sentences, or use "
            "precision 32"
        )

    def _world_size(self) -> int:
        return self._trainer.world_size if self._trainer is not None else 1

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> Tensor:
        z = self(batch)
        if z.shape[0] % 3:
            raise ParaAMRError(
                f"a SimCSE batch has 3B rows (anchors, positives, negatives), got {z.shape[0]}"
            )
        local_b = z.shape[0] // 3
        z = z.view(3, local_b, -1).transpose(0, 1)  # (B, 3, D)
        if self.hparams.gather_across_devices and self._world_size() > 1:
            z = self.all_gather(z, sync_grads=True).reshape(-1, 3, z.shape[-1])
        z1, z2, z3 = z.unbind(1)
        loss = simcse_loss(z1, z2, z3, self.hparams.temperature, self.hparams.hard_negative_weight)
        lr = self._current_lr()
        self.log("train/loss", loss, prog_bar=True, batch_size=local_b)
        self.log("train/lr", lr, batch_size=local_b)
        # candidates per anchor = 2 x global batch: shows the negatives span all processes
        self.log("train/num_candidates", float(2 * z1.shape[0]), batch_size=local_b)
        return loss

    def _current_lr(self) -> float:
        try:
            return float(self.optimizers().param_groups[0]["lr"])
        except (RuntimeError, AttributeError, IndexError, TypeError):
            return float(self.hparams.lr)

    def configure_optimizers(self) -> Any:
        from paraamr.training.optim import build_optimizer

        decay, no_decay = [], []
        for name, p in self.named_parameters():
            if not p.requires_grad:
                continue
            plain = name.endswith("bias") or "LayerNorm" in name or "layer_norm" in name
            (no_decay if plain else decay).append(p)
        groups = [
            {"params": decay, "weight_decay": self.hparams.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        total = self.trainer.estimated_stepping_batches
        linear = math.isfinite(total) and total > 0  # else nothing to decay towards
        # Hugging Face's warm-up (the first step at rate 0), as SimCSE's own code trains
        return build_optimizer(groups, lr=self.hparams.lr, optimizer="adamw",
                               warmup_steps=self.hparams.warmup_steps, warmup_start=0,
                               schedule="linear" if linear else "constant",
                               total_steps=int(total) if linear else None, fused=True)  # fmt: skip

    @torch.no_grad()
    def encode(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        normalize: bool = False,
        max_seq_length: int | None = None,
    ) -> np.ndarray:
        """Embed sentences (eval mode, no gradient); returns a float32 ``(N, D)`` array.

        Sentences are length-sorted into batches and returned in input order. Truncation:
        ``max_seq_length``, else the module's, else the tokenizer's model maximum.
        """
        sentences = list(sentences)
        out = np.zeros((len(sentences), self.embedding_dim), dtype=np.float32)
        if not sentences:
            return out
        max_len = max_seq_length or self.hparams.max_seq_length
        was_training = self.training
        self.eval()
        try:
            for idx in length_batches([len(s) for s in sentences], batch_size):
                feats = self.tokenizer(
                    [sentences[i] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=max_len,
                    return_tensors="pt",
                ).to(self.device)
                z = self(dict(feats)).float()
                if normalize:
                    z = torch.nn.functional.normalize(z, dim=-1)
                out[idx] = z.cpu().numpy()
        finally:
            self.train(was_training)
        return out


def read_stsb_dev(path: str | os.PathLike, limit: int | None = None) -> list[SentencePair]:
    """``(sentence1, sentence2, score)`` of a GLUE STS-B TSV, read by
    :func:`paraamr.sts.readers.read_stsb` (first ``limit`` scored pairs).

    Raises:
        DataNotFoundError: the file is missing.
        CorpusFormatError: a row lacks a column or its score is not a number (file and line).
    """
    from paraamr.sts.readers import read_stsb

    s1, s2, gold = read_stsb(path).subsets["STS-B"]
    return list(zip(s1, s2, gold.tolist(), strict=True))[:limit]


def stsb_dev_spearman(
    encode: Callable[..., np.ndarray], pairs: Sequence[SentencePair], batch_size: int = 64
) -> float:
    """Spearman correlation (in [-1, 1]) of cosine similarities with gold scores.

    Args:
        encode: ``encode(sentences, batch_size=...) -> (N, D) array`` (e.g.
            :meth:`SimCSEModule.encode` or ``SentenceTransformer.encode``).
        pairs: ``(sentence1, sentence2, gold score)`` triples.
        batch_size: passed to ``encode``.
    """
    from types import SimpleNamespace

    from scipy.stats import spearmanr

    from paraamr.metrics.semantic import cosine_pairs

    if len(pairs) < 2:
        raise InputError("Spearman needs at least 2 pairs")
    model = SimpleNamespace(encode=encode)
    cos = cosine_pairs([(a, b) for a, b, _ in pairs], model, batch_size, dtype=np.float64)
    gold = np.array([s for _, _, s in pairs], dtype=np.float64)
    return float(spearmanr(cos, gold).statistic)


class StsbDevEvaluator:
    """Picklable ``evaluate_fn(encoder) -> float`` for :class:`StsDevCallback` (STS-B dev).

    Args:
        pairs: ``(sentence1, sentence2, score)`` triples, e.g. from :func:`read_stsb_dev`.
        batch_size: encoding batch size.
    """

    def __init__(self, pairs: Sequence[SentencePair], batch_size: int = 64) -> None:
        self.pairs = list(pairs)
        self.batch_size = batch_size

    def __call__(self, encoder: Any) -> float:
        return stsb_dev_spearman(encoder.encode, self.pairs, self.batch_size)


def sts_dev_callback(
    path: str | os.PathLike,
    every_n_steps: int | None = None,
    limit_pairs: int | None = None,
    batch_size: int = 64,
) -> PeriodicEval:
    """STS-B dev Spearman every ``every_n_steps`` steps as ``val/stsb_spearman`` (the
    ``callbacks/simcse.yaml`` config; the checkpoint callback monitors it)."""
    pairs = read_stsb_dev(path, limit=limit_pairs)
    return PeriodicEval(StsbDevEvaluator(pairs, batch_size), every_n_steps, METRIC)


def save_sentence_transformer(
    module: SimCSEModule, out_dir: str | os.PathLike, max_seq_length: int | None = None
) -> Path:
    """Save the module's encoder as a ``SentenceTransformer(modules=[Transformer, Pooling])``
    with the module's pooling, loadable with ``SentenceTransformer(out_dir)``.

    Args:
        module: a trained :class:`SimCSEModule` (any device).
        out_dir: target directory (replaced if it exists).
        max_seq_length: the saved model's truncation length; ``None``: the tokenizer's model
            maximum (SimCSE trains at 32 tokens but evaluates untruncated).
    """
    try:
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import Pooling, Transformer
    from sentence_transformers import SentenceTransformer

    out_dir = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="simcse-export-") as tmp:
        module.encoder.save_pretrained(tmp)
        module.tokenizer.save_pretrained(tmp)
        kwargs = {} if max_seq_length is None else {"max_seq_length": max_seq_length}
        word = Transformer(tmp, **kwargs)
        dim = (
            word.get_embedding_dimension()
            if hasattr(word, "get_embedding_dimension")
            else word.get_word_embedding_dimension()
        )
        st = SentenceTransformer(
            modules=[word, Pooling(dim, pooling_mode=module.hparams.pooling)], device="cpu"
        )
        if out_dir.exists():
            shutil.rmtree(out_dir)
        st.save(str(out_dir))
    log.info("saved sentence-transformers model to %s", out_dir)
    return out_dir
