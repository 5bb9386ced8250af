"""The one conditional-generation LightningModule: a Hugging Face LM fine-tuned to write an
answer for a prompt (SCPN paraphrases and their parse generator, the TOP generator and parsers).

A task module (:class:`paraamr.scpn.module.SCPNModule`,
:class:`paraamr.training.seq2seq.Seq2SeqModule`) loads its backbone with
:func:`paraamr.lms.loading.load_lm`, lays out its prompts and answers, and reads the answers back;
everything else is here, written once:

- **loss**: the answer's token cross-entropy. A decoder-only batch carries label -100 on the
  prompt and the padding (:func:`paraamr.training.recipe.causal_answer_nll`: the output head runs
  on the answer positions only); an encoder-decoder batch carries the answer as ``labels``.
  Training divides a batch's summed cross-entropy by its own answer tokens, or, with
  :attr:`CondGenModule.loss_tokens` set (``data.loss_norm: corpus``), by that one number for
  every batch (:func:`paraamr.training.recipe.mean_answer_tokens`).
- **validation**: ``val/loss``, the token-weighted mean cross-entropy over the whole dev set
  (every answer token counts once, whatever batch it falls in), and ``val/ppl`` = exp of it; the
  best checkpoint is chosen on ``val/loss``.
- **optimiser and schedule** (:func:`paraamr.training.optim.build_optimizer`, every
  trainer's): Adam or AdamW, linear warm-up, then a constant rate or a linear decay to 0 at the
  trainer's last step.
- **generation** (:meth:`CondGenModule.generate_ids`): eval mode for the call, the previous mode
  restored in ``finally`` (also after an exception); the prompt cut off a decoder-only output.
- **files** (:meth:`CondGenModule.save_files`, :meth:`CondGenModule.read_sidecar`):
  ``save_pretrained`` of model and tokenizer (plain ``AutoModelFor...`` load them) plus a JSON
  sidecar with the task's settings.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, ClassVar

import pytorch_lightning as pl
import torch

from paraamr.errors import DataNotFoundError
from paraamr.training.layout import IGNORE
from paraamr.training.optim import build_optimizer
from paraamr.training.recipe import causal_answer_nll, merged_embeddings

__all__ = ["CondGenModule"]


def _first(ids: Any) -> int:
    return int(ids) if isinstance(ids, int) else int(list(ids)[0])


class CondGenModule(pl.LightningModule):
    """Training, validation, optimiser, generation and files of a conditional LM (see the
    module docstring). A subclass sets ``self.model``, ``self.tokenizer`` and ``self.arch``
    (``causal``, ``seq2seq`` or ``bert2bert``) and implements :meth:`optimizer_settings` and
    :meth:`sidecar_settings`; it names its sidecar file in :attr:`sidecar` and itself in
    :attr:`task_name` (for error messages)."""

    sidecar: ClassVar[str] = "condgen.json"
    task_name: ClassVar[str] = "conditional-generation"
    nonfinite_hint = "lower model.lr or raise model.warmup_steps, or use precision 32"

    def __init__(self) -> None:
        super().__init__()
        self._val_sum, self._val_tokens = 0.0, 0
        #: the training loss's denominator: ``None``, each batch's own answer tokens (the
        #: model's own ``loss``); a number, the same for every batch (``data.loss_norm: corpus``)
        self.loss_tokens: float | None = None
        #: the forward passes of greedy decoding on another engine
        #: (:class:`paraamr.lms.engines.OpenVINOSteps`); ``None``: this module's own model
        self.engine_steps: Any = None
        #: a pipeline that decodes whole answers itself (``engine=genai``), or ``None``
        self.engine_pipeline: Any = None

    # ------------------------------------------------------------------ task hooks
    def optimizer_settings(self) -> dict[str, Any]:
        """``lr``, ``optimizer``, ``weight_decay``, ``warmup_steps``, ``schedule``."""
        raise NotImplementedError

    def sidecar_settings(self) -> dict[str, Any]:
        """What :meth:`save` writes into the sidecar (enough for the subclass to rebuild)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ loss
    def forward(self, **batch: torch.Tensor) -> Any:
        return self.model(**batch)

    def answer_nll(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]:
        """``(summed cross-entropy, tokens)`` of the answers in ``batch``."""
        if self.arch == "causal":
            return causal_answer_nll(self.model, batch)
        logits = self.model(**batch).logits
        labels = batch["labels"]
        nll = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]).float(),
            labels.reshape(-1),
            ignore_index=IGNORE,
            reduction="sum",
        )
        return nll, int((labels != IGNORE).sum())

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean token cross-entropy of the answers (the model's own ``loss``)."""
        if self.arch == "causal":
            nll, n = causal_answer_nll(self.model, batch)
            return nll / n
        return self.model(**batch).loss

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        size = batch["input_ids"].shape[0]
        if not self.loss_tokens:
            loss = self.loss(batch)
            self.log("train/loss", loss, prog_bar=True, batch_size=size)
            return loss
        nll, n = self.answer_nll(batch)
        # the curve shows the batch's mean; the gradient weighs every answer token the same
        self.log("train/loss", nll.detach() / max(n, 1), prog_bar=True, batch_size=size)
        return nll / self.loss_tokens

    def on_validation_epoch_start(self) -> None:
        self._val_sum, self._val_tokens = 0.0, 0

    def validation_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> None:
        nll, n = self.answer_nll(batch)
        self._val_sum += float(nll)
        self._val_tokens += n

    def on_validation_epoch_end(self) -> None:
        total, tokens = self._val_sum, self._val_tokens
        trainer = self._trainer
        if trainer is not None and trainer.world_size > 1:  # every rank's tokens count once
            t = torch.tensor([total, float(tokens)], dtype=torch.float64, device=self.device)
            t = trainer.strategy.reduce(t, reduce_op="sum")
            total, tokens = float(t[0]), int(t[1])
        if tokens == 0:
            return
        loss = total / tokens
        self.log("val/loss", loss, prog_bar=True)
        self.log("val/ppl", math.exp(min(loss, 50.0)))

    def configure_optimizers(self) -> Any:
        s = dict(self.optimizer_settings())
        total = None
        if s.get("schedule", "constant") == "linear":
            total = int(self.trainer.estimated_stepping_batches)
        params = [p for p in self.parameters() if p.requires_grad]
        return build_optimizer(params, total_steps=total, **s)

    # ------------------------------------------------------------------ generation
    @torch.no_grad()
    def generate_ids(self, batch: dict[str, torch.Tensor], **kwargs: Any) -> torch.Tensor:
        """``model.generate`` on ``batch`` (moved to the module's device) in eval mode, the
        previous mode restored afterwards, also when generation raises; returns the generated
        ids only (a decoder-only model's prompt columns cut off).

        Greedy search on a decoder-only model runs :func:`paraamr.lms.greedy.greedy_compact`
        (the same tokens; finished rows leave the batch), on :attr:`engine_steps` where set;
        everything else ``model.generate``."""
        from paraamr.errors import ConfigError

        compact = "attention_mask" in batch and self._compact_greedy(kwargs)
        if self.engine_steps is not None and not compact:
            raise ConfigError(f"engine {type(self.engine_steps).__name__} decodes greedily only "
                              f"(asked: {sorted(kwargs)}); use the hf engine")  # fmt: skip
        was = self.training
        self.eval()
        try:
            batch = {k: v.to(self.device) for k, v in batch.items()}
            if compact:
                from paraamr.lms.greedy import greedy_compact

                cfg = self.model.generation_config
                eos = cfg.eos_token_id
                pad = cfg.pad_token_id if cfg.pad_token_id is not None else _first(eos)
                model = self.engine_steps if self.engine_steps is not None else self.model
                out = greedy_compact(model, batch["input_ids"], batch["attention_mask"],
                                     int(kwargs["max_new_tokens"]), eos, pad,
                                     kwargs.get("logits_processor") or ())  # fmt: skip
            else:
                out = self.model.generate(**batch, **kwargs)
        finally:
            self.train(was)
        start = batch["input_ids"].shape[1] if self.arch == "causal" else 0
        return out[:, start:]

    def _compact_greedy(self, kwargs: dict[str, Any]) -> bool:
        """Whether ``kwargs`` ask for plain greedy search that :func:`greedy_compact` gives."""
        from paraamr.lms.greedy import plain_generation_config

        if self.arch != "causal" or not kwargs.get("max_new_tokens"):
            return False
        cfg = self.model.generation_config
        if (
            kwargs.get("do_sample", cfg.do_sample)
            or int(kwargs.get("num_beams", cfg.num_beams) or 1) != 1
        ):
            return False
        if set(kwargs) - {"max_new_tokens", "num_beams", "do_sample", "logits_processor"}:
            return False
        if cfg.eos_token_id is None and cfg.pad_token_id is None:
            return False
        return plain_generation_config(cfg)

    # ------------------------------------------------------------------ files
    def save_files(self, out_dir: str | Path, settings: dict[str, Any]) -> Path:
        """``save_pretrained`` of model (added embedding rows merged back) and tokenizer, plus
        ``settings`` as the JSON sidecar."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with merged_embeddings(self.model):
            self.model.save_pretrained(out)
        self.tokenizer.save_pretrained(out)
        text = json.dumps(settings, indent=2, default=str) + "\n"
        (out / self.sidecar).write_text(text, encoding="utf-8")
        return out

    @classmethod
    def read_sidecar(cls, model_dir: str | Path) -> dict[str, Any]:
        """The settings :meth:`save_files` wrote into ``model_dir``.

        Raises:
            DataNotFoundError: ``model_dir`` holds no sidecar (not a saved model of this kind).
        """
        path = Path(model_dir) / cls.sidecar
        if not path.is_file():
            raise DataNotFoundError(
                f"{model_dir}: not a saved {cls.task_name} model dir (no {cls.sidecar})"
            )
        return json.loads(path.read_text(encoding="utf-8"))
