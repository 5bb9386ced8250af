"""A Lightning sequence(-pair) classifier over any Hugging Face encoder, and its data module.

The paper's preset (``conf/model/fewshot_bert.yaml``): ``bert-base-uncased``, batch 8, lr 1e-4,
20 epochs, Adam with weight decay 1e-5, the best epoch on the internal dev set. Offline the
packaged MiniLM encoder (``conf/model/fewshot_minilm.yaml``). The head is
``AutoModelForSequenceClassification``'s (a fresh linear layer on the pooled [CLS] state for
BERT-style encoders).

>>> accuracy_f1([1, 0, 1, 1], [1, 0, 0, 1], f1_label=1)
{'acc': 75.0, 'f1': 80.0}
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader

from paraamr.errors import InputError
from paraamr.fewshot.data import Example
from paraamr.training.data import ListDataset, ResumableDataModule
from paraamr.training.optim import OPTIMIZERS, build_optimizer, check_choice

__all__ = ["accuracy_f1", "FewShotClassifier", "FewShotDataModule", "Collate"]

log = logging.getLogger(__name__)


def accuracy_f1(preds: Sequence[int], labels: Sequence[int], f1_label: int | None) -> dict:
    """Accuracy and (when ``f1_label`` is set) the F1 of that class, both ×100."""
    if len(preds) != len(labels) or not labels:
        raise InputError(f"{len(preds)} predictions for {len(labels)} labels")
    out = {"acc": 100.0 * sum(p == y for p, y in zip(preds, labels, strict=True)) / len(labels)}
    if f1_label is not None:
        tp = sum(p == y == f1_label for p, y in zip(preds, labels, strict=True))
        n_pred = sum(p == f1_label for p in preds)
        n_gold = sum(y == f1_label for y in labels)
        out["f1"] = 200.0 * tp / (n_pred + n_gold) if n_pred + n_gold else 0.0
    return out


class Collate:
    """Tokenize a list of :class:`~paraamr.fewshot.data.Example` (single sentences or pairs,
    truncated to ``max_seq_length``) into a batch with ``labels``."""

    def __init__(self, tokenizer: Any, max_seq_length: int = 128) -> None:
        self.tokenizer, self.max_seq_length = tokenizer, max_seq_length

    def __call__(self, batch: list[Example]) -> dict[str, torch.Tensor]:
        pairs = [e.text_b is not None for e in batch]
        if any(pairs) and not all(pairs):
            raise InputError("a batch mixes single sentences and sentence pairs")
        enc = self.tokenizer(
            [e.text_a for e in batch],
            [e.text_b for e in batch] if all(pairs) else None,
            padding=True,
            truncation=True,
            max_length=self.max_seq_length,
            return_tensors="pt",
        )
        enc = dict(enc)
        enc["labels"] = torch.tensor([e.label for e in batch], dtype=torch.long)
        return enc


class FewShotClassifier(pl.LightningModule):
    """Fine-tune ``AutoModelForSequenceClassification`` of any encoder; logs ``train/loss``,
    ``val/acc`` (and ``val/f1`` when ``f1_label`` is set) on the internal dev set each epoch.

    Args:
        model_name_or_path: a preset of :func:`paraamr.metrics.semantic.resolve_model`
            (``minilm``: the packaged MiniLM), a local directory or a hub name.
        num_labels: classes.
        f1_label: the class whose F1 is reported (None: accuracy only).
        lr: learning rate (the paper 1e-4).
        weight_decay: the optimizer's weight decay (the paper 1e-5).
        optimizer: ``adam`` (``torch.optim.Adam``, weight decay as L2, the paper's "Adam with
            weight decay") or ``adamw`` (decoupled).
        tokenizer_name_or_path: ``None``: the model's own.
        dropout: the classifier dropout (``None``: the model config's).
    """

    def __init__(
        self,
        model_name_or_path: str = "minilm",
        num_labels: int = 2,
        f1_label: int | None = None,
        lr: float = 1e-4,
        weight_decay: float = 1e-5,
        optimizer: str = "adam",
        tokenizer_name_or_path: str | None = None,
        dropout: float | None = None,
    ) -> None:
        super().__init__()
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from paraamr.metrics.semantic import resolve_model

        check_choice(optimizer, OPTIMIZERS, "model.optimizer")
        self.save_hyperparameters()
        path = resolve_model(str(model_name_or_path))
        extra = {"classifier_dropout": dropout} if dropout is not None else {}
        self.model = AutoModelForSequenceClassification.from_pretrained(
            path, num_labels=num_labels, **extra
        )
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer_name_or_path or path)
        self.model_path = path
        self._val: list[tuple[torch.Tensor, torch.Tensor]] = []

    def forward(self, **batch: torch.Tensor) -> Any:
        return self.model(**batch)

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        loss = self.model(**batch).loss
        self.log("train/loss", loss, prog_bar=True, batch_size=len(batch["labels"]))
        return loss

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        labels = batch.pop("labels")
        logits = self.model(**batch).logits
        self._val.append((logits.argmax(-1).cpu(), labels.cpu()))

    def on_validation_epoch_end(self) -> None:
        if not self._val:
            return
        preds = torch.cat([p for p, _ in self._val]).tolist()
        labels = torch.cat([y for _, y in self._val]).tolist()
        self._val.clear()
        for k, v in accuracy_f1(preds, labels, self.hparams.f1_label).items():
            self.log(f"val/{k}", v, prog_bar=k == "acc")

    def configure_optimizers(self) -> dict:
        return build_optimizer(self.parameters(), lr=self.hparams.lr,
                               optimizer=self.hparams.optimizer,
                               weight_decay=self.hparams.weight_decay)  # fmt: skip

    @torch.no_grad()
    def predict_labels(
        self,
        examples: Sequence[Example],
        batch_size: int = 64,
        max_seq_length: int = 128,
        progress: bool = False,
    ) -> list[int]:
        """Predicted label ids of ``examples`` (eval mode, in order); ``progress``: a tqdm bar
        over the batches (total and ETA: a hub dev set such as QQP's has 40k pairs)."""
        from tqdm.auto import tqdm

        was = self.model.training
        self.model.eval()
        collate = Collate(self.tokenizer, max_seq_length)
        out: list[int] = []
        starts = range(0, len(examples), batch_size)
        for b in tqdm(starts, desc="predict", unit="batch", disable=not progress):
            batch = collate(list(examples[b : b + batch_size]))
            batch.pop("labels")
            batch = {k: v.to(self.device) for k, v in batch.items()}
            out += self.model(**batch).logits.argmax(-1).cpu().tolist()
        self.model.train(was)
        return out


class FewShotDataModule(ResumableDataModule):
    """Shuffled, seeded, resumable training batches of the (augmented) few-shot set and the
    internal dev set for model selection.

    Args:
        train: training examples.
        dev: internal dev examples (validated each epoch).
        tokenizer: the classifier's tokenizer.
        batch_size: training examples per batch (the paper 8).
        eval_batch_size: dev examples per batch.
        max_seq_length: truncation of a sentence (pair).
        seed: the shuffling seed.
        num_workers: data-loader workers.
    """

    def __init__(
        self,
        train: Sequence[Example],
        dev: Sequence[Example],
        tokenizer: Any,
        batch_size: int = 8,
        eval_batch_size: int = 64,
        max_seq_length: int = 128,
        seed: int = 0,
        num_workers: int = 0,
    ) -> None:
        if not train or not dev:
            raise InputError(f"{len(train)} training and {len(dev)} dev examples: need both")
        self.collate = Collate(tokenizer, max_seq_length)
        super().__init__(train, self.collate, batch_size, seed, num_workers)
        self.dev = list(dev)
        self.eval_batch_size = eval_batch_size

    def val_dataloader(self) -> DataLoader:
        return DataLoader(
            ListDataset(self.dev),
            batch_size=self.eval_batch_size,
            shuffle=False,
            collate_fn=self.collate,
            num_workers=self.num_workers,
        )
