"""The AMR models: a parser (sentence -> serialized graph) and a generator (serialized graph ->
sentence), each a decoder-only LM fine-tuned on prompt -> answer pairs.

:class:`AMRModule` is the one prompt -> answer module
(:class:`paraamr.training.seq2seq.Seq2SeqModule`: backbone, prompt / answer layout, optimiser,
files) with what is AMR's own: the direction, decoding that can only write balanced graphs
(:class:`paraamr.amrlm.constraint.BalancedGraph`, ``constrained: true``, the parser's default),
and its sidecar ``amr_module.json``. Saved and loaded like every such module
(:meth:`~paraamr.training.seq2seq.Seq2SeqModule.save`, :meth:`from_saved`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from paraamr.amrlm import AMR_MODULE_FILE  # re-exported: the module owns the file
from paraamr.amrlm.constraint import BalancedGraph, BracketTable
from paraamr.errors import ConfigError
from paraamr.lms.constrained import ConstrainedLogits
from paraamr.precision import Precision, apply, resolve
from paraamr.training.seq2seq import Seq2SeqModule, decode_ids
from paraamr.utils import is_whole

__all__ = ["AMRModule", "DIRECTIONS", "AMR_MODULE_FILE", "cap_label", "decode_label"]

DIRECTIONS = ("parse", "generate")


def cap_label(cap: Sequence[float] | None) -> str:
    """``answer_cap`` as signatures write it.

    >>> cap_label([7.0, 10]), cap_label(None)
    ('7x10', 'none')
    """
    return "none" if cap is None else "x".join(f"{float(c):g}" for c in cap)


def decode_label(num_beams: int | None) -> str:
    """The decoding as signatures write it.

    >>> decode_label(1), decode_label(4)
    ('greedy', 'beam4')
    """
    return "greedy" if (num_beams or 1) == 1 else f"beam{int(num_beams)}"


class AMRModule(Seq2SeqModule):
    """One direction of the AMR models (see the module docstring).

    Args:
        direction: ``parse`` (sentence -> serialized graph) or ``generate`` (serialized graph
            -> sentence).
        constrained: ``parse`` only: every answer a balanced graph (brackets closed, one
            graph, closed before ``max_new_tokens``).
        max_depth: with ``constrained``, the most brackets open at once.
        answer_cap: with ``constrained``, ``[ratio, extra]``: at most ``ceil(ratio x prompt
            tokens + extra)`` answer tokens per row (the graph closed in time), so a looping
            answer ends near the length a sentence of that size has; ``null``: only
            ``max_target_length``. Training graphs have 4.2 tokens per sentence token
            (median; 95th percentile 6.8): ``[7, 10]`` leaves 99% of them whole.
        no_repeat_words: ``generate`` only: no word n-gram twice in one sentence
            (:class:`paraamr.lms.repeats.RepeatedWordBlocker`; ``null``: off), against the
            generator's loops ("and he hid her so he hid her so ...").
        stop_loops: with ``constrained``: close the graph once the answer ends in this many
            copies of one block of tokens (:func:`paraamr.amrlm.constraint.repeated_tail`;
            ``null``: off), so a looping answer ends where the loop shows.
        num_beams: beams of the decoding (1: greedy).
        graph_form: ``generate`` only: how the prompt writes the graph
            (:func:`paraamr.amrlm.data.graph_prompt`: ``serialized``, without variables, or
            ``penman``, with them).
        **kwargs: the settings of :class:`~paraamr.training.seq2seq.Seq2SeqModule` (backbone,
            optimiser, lengths, ``freeze_layers``).
    """

    task_name = "AMR"
    sidecar = AMR_MODULE_FILE

    def __init__(
        self,
        direction: str = "parse",
        constrained: bool = True,
        max_depth: int | None = 40,
        answer_cap: Sequence[float] | None = None,
        no_repeat_words: int | None = None,
        graph_form: str = "serialized",
        stop_loops: int | None = None,
        num_beams: int = 1,
        **kwargs: Any,
    ) -> None:
        from paraamr.amrlm.data import GRAPH_FORMS

        if direction not in DIRECTIONS:
            raise ConfigError(f"model.direction must be one of {DIRECTIONS}, got {direction!r}")
        # sidecars written when AMRModule was a TOP module name TOP's label settings
        for old in ("labels", "add_label_tokens"):
            kwargs.pop(old, None)
        super().__init__(**kwargs)
        if constrained:
            self.require_causal("model.constrained")
        if graph_form not in GRAPH_FORMS:
            raise ConfigError(f"model.graph_form must be one of {GRAPH_FORMS}, got {graph_form!r}")
        if max_depth is not None and not is_whole(max_depth, 1):
            raise ConfigError(f"model.max_depth must be a whole number >= 1 or null, got "
                              f"{max_depth!r}")  # fmt: skip
        self.settings.update(direction=direction, constrained=bool(constrained and direction ==
                                                                    "parse"),
                             max_depth=None if max_depth is None else int(max_depth),
                             graph_form=graph_form)  # fmt: skip
        self.set_decoding(answer_cap, no_repeat_words, stop_loops=stop_loops, num_beams=num_beams)
        self._brackets: BracketTable | None = None
        #: the precision of :meth:`generate`'s weights (:meth:`set_precision`); training has its own
        self.inference_precision: Precision = resolve(None)

    def graph_prompt(self, graph: Any) -> str:
        """The prompt of a graph laid out from its top, as this generator was trained on."""
        from paraamr.amrlm.data import graph_prompt

        return graph_prompt(graph, self.settings.get("graph_form", "serialized"))

    def brackets(self) -> BracketTable:
        """The bracket table of this module's tokenizer (read once)."""
        if self._brackets is None:
            self._brackets = BracketTable.from_tokenizer(self.tokenizer)
        return self._brackets

    @torch.no_grad()
    def generate(
        self,
        sources: Sequence[str],
        *,
        num_beams: int | None = None,
        max_new_tokens: int | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Greedy (or beam) answers for ``sources``; a parser's inside :class:`BalancedGraph`.
        ``num_beams``: this call's beams instead of the module's ``num_beams`` setting."""
        limit = max_new_tokens or self.settings["max_target_length"]
        batch = self.encode_batch(sources)
        beams = num_beams or self.settings.get("num_beams", 1)
        gen: dict[str, Any] = {"max_new_tokens": limit, "num_beams": beams, "do_sample": False}
        if self.settings["constrained"]:
            from transformers import LogitsProcessorList

            depth = self.settings["max_depth"] or 40
            loops = self.settings.get("stop_loops")
            rules = [BalancedGraph(self.brackets(), self.answer_limit(x, limit), depth, loops)
                     for x in sources]  # fmt: skip
            start = batch["input_ids"].shape[1]
            gen["logits_processor"] = LogitsProcessorList([ConstrainedLogits(rules, start)])
        n = self.settings.get("no_repeat_words")
        if n and self.settings["direction"] == "generate":
            from transformers import LogitsProcessorList

            from paraamr.lms.repeats import RepeatedWordBlocker

            start = batch["input_ids"].shape[1]
            gen["logits_processor"] = LogitsProcessorList(
                [RepeatedWordBlocker(self.tokenizer, start, n)]
            )
        out = self.generate_ids(batch, **gen)
        return [decode_ids(self.tokenizer, ids) for ids in out]

    def set_precision(self, dtype: str | None, what: str = "dtype") -> Precision:
        """Run :meth:`generate` in ``dtype`` on this module's device
        (:func:`paraamr.precision.resolve` for inference: ``None`` or ``fp32``; ``bf16``;
        ``auto``, bf16 where the device runs it natively). bf16 and fp16 cast the weights, on a
        CPU too (a decoding step is small, and autocast would cast every weight again at each
        one); ``fp32`` casts them back, keeping any rounding bf16 made. ``what`` names the setting
        in errors and notes."""
        self.inference_precision = apply(self.model, dtype, self.device, what, inference=True)
        return self.inference_precision

    def set_decoding(
        self,
        answer_cap: Sequence[float] | None,
        no_repeat_words: int | None,
        *,
        stop_loops: int | None = None,
        num_beams: int = 1,
    ) -> None:
        """Set the decoding settings (checked): a saved model decodes with other ones when
        re-scored or used by the builder."""
        if answer_cap is not None and (len(answer_cap) != 2 or min(answer_cap) < 0):
            raise ConfigError(f"model.answer_cap must be [ratio, extra] >= 0 or null, got "
                              f"{answer_cap!r}")  # fmt: skip
        if stop_loops is not None and not is_whole(stop_loops, 2):
            raise ConfigError(f"model.stop_loops must be a whole number >= 2 or null, got "
                              f"{stop_loops!r}")  # fmt: skip
        if not is_whole(num_beams, 1):
            raise ConfigError(f"model.num_beams must be a whole number >= 1, got {num_beams!r}")
        self.settings["answer_cap"] = None if answer_cap is None else [float(x) for x in answer_cap]
        self.settings["no_repeat_words"] = None if no_repeat_words is None else int(no_repeat_words)
        self.settings["stop_loops"] = None if stop_loops is None else int(stop_loops)
        self.settings["num_beams"] = int(num_beams)

    def set_read_limit(self, tokens: int | None, what: str = "read_tokens") -> int:
        """Read at most ``tokens`` source tokens when decoding (``None``: the length the model
        was trained with), and never more than the model's positions leave beside the longest
        answer; returns the limit in force. A decoder-only model reads past its training
        length (SmolLM2's positions go to 8,192), so a parser trained on sentences cut at 96
        tokens can read the whole of a longer one."""
        if tokens is not None:
            if not is_whole(tokens, 1):
                raise ConfigError(f"{what} must be a whole number >= 1 or null, got {tokens!r}")
            cfg = self.model.config
            positions = getattr(cfg, "max_position_embeddings", None) or getattr(
                cfg, "n_positions", None
            )
            room = (
                tokens if positions is None else positions - self.settings["max_target_length"] - 1
            )
            self.settings["max_source_length"] = max(1, min(int(tokens), room))
        return int(self.settings["max_source_length"])

    def answer_limit(self, source: str, limit: int) -> int:
        """The most answer tokens for ``source``: ``limit``, or less under ``answer_cap``."""
        cap = self.settings.get("answer_cap")
        if not cap:
            return limit
        n = min(len(self.units(source)), self.settings["max_source_length"])
        return max(2, min(limit, math.ceil(cap[0] * n + cap[1])))
