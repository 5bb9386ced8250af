"""The TOP tasks on the one prompt -> answer module
(:class:`paraamr.training.seq2seq.Seq2SeqModule`): the generator (template -> encoded tree) and
the parsers (utterance -> tree), over a Hugging Face encoder-decoder or decoder-only LM (the
backbones and the optimisation are the shared module's). What is TOP's own: label tokens and
decoding that cannot leave its input.

TOP labels must survive tokenization. ``add_label_tokens`` adds every encoded label token
(``[in:get_event``, ``in:get_event]``, ``[sl:date_time`` ...) and ``[mask]`` to the
vocabulary as whole tokens, their new embeddings initialised to the mean of the pieces the
old tokenizer split them into; ``"auto"`` does it when the tokenizer would split a label
(WordPiece: ``[``, ``in``, ``:``, ``get``, ``_``, ``event``) or change it on decoding. BART's
byte-level BPE decodes exactly, and the paper adds no tokens (lowercasing is its fix).

``constrained: true`` (a decoder-only model with the labels as tokens) decodes inside the
input (:mod:`paraamr.top.constraints`): a parser writes exactly the utterance's words in order
with training labels around them; the generator copies its template's labels and brackets and
writes only the ``[mask]`` spans.

Validation logs ``val/loss`` (mean token cross-entropy) and ``val/ppl`` = exp of it: the best
checkpoint is chosen by it. :meth:`TopModule.save` writes ``save_pretrained`` of model and
tokenizer plus ``top_module.json`` (settings and labels), and :meth:`TopModule.from_saved`
reads it back.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from paraamr.errors import ConfigError
from paraamr.top.constraints import (
    MAX_DEPTH,
    ConstrainedLogits,
    LabelIds,
    ParserConstraint,
    TemplateConstraint,
)
from paraamr.top.encoding import encode
from paraamr.top.trees import MASK, Node
from paraamr.training.seq2seq import Seq2SeqModule

__all__ = ["TopModule", "label_tokens", "MODULE_FILE"]

MODULE_FILE = "top_module.json"


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


class TopModule(Seq2SeqModule):
    """A TOP generator or parser (see the module docstring).

    Args:
        model_name_or_path: the backbone (see the module docstring of
            :mod:`paraamr.training.seq2seq`).
        labels: TOP labels of the training data (for ``add_label_tokens``).
        add_label_tokens: ``"auto"``, ``True`` or ``False``.
        constrained: decode inside the input (decoder-only models with label tokens; see
            the module docstring).
        max_depth: with ``constrained``, the most nodes the parser may open at once
            (``None``: :data:`paraamr.top.constraints.MAX_DEPTH`); the pipeline sets it to
            the deepest training tree (:func:`paraamr.top.trees.depth`), so an untrained or
            confused parser cannot nest labels deeper than anything it was shown.
        **kwargs: the settings of :class:`~paraamr.training.seq2seq.Seq2SeqModule` (backbone,
            optimiser, lengths, ``freeze_layers``, ``train_added_embeddings``).
    """

    task_name = "TOP"
    sidecar = MODULE_FILE

    def __init__(
        self,
        model_name_or_path: str = "minilm",
        *,
        labels: Sequence[str] = (),
        add_label_tokens: bool | str = "auto",
        constrained: bool = False,
        max_depth: int | None = None,
        **kwargs: Any,
    ) -> None:
        if max_depth is not None and int(max_depth) < 1:
            raise ConfigError(f"model.max_depth must be >= 1 or null, got {max_depth!r}")
        if add_label_tokens not in (True, False, "auto"):
            raise ConfigError(
                f"model.add_label_tokens must be true, false or auto, got {add_label_tokens!r}"
            )
        super().__init__(
            model_name_or_path,
            new_tokens=label_tokens(labels),
            add_new_tokens=add_label_tokens,
            **kwargs,
        )
        self.settings.update(
            labels=sorted(set(labels)),
            add_label_tokens=add_label_tokens,
            constrained=bool(constrained),
            max_depth=None if max_depth is None else int(max_depth),
        )
        if constrained:
            self.require_causal("model.constrained")
        self._label_ids: LabelIds | None = None

    # ---------------------------------------------------------------- generation
    def logits_processors(
        self, sources: Sequence[str], batch: dict[str, torch.Tensor], limit: int
    ) -> list[Any]:
        """With ``constrained``: decoding inside each source (a template if it holds
        ``[mask]``, else an utterance)."""
        if not self.settings["constrained"]:
            return []
        start = batch["input_ids"].shape[1]  # constrained: decoder-only
        rules = [self.constraint(x) for x in sources]
        return [ConstrainedLogits(rules, start, self.label_ids().free)]

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
    @classmethod
    def from_saved(cls, path: str | Path) -> TopModule:
        """A module from :meth:`save` (its labels are already tokens of its vocabulary)."""
        return cls(**{**cls.saved_settings(path), "add_label_tokens": False})
