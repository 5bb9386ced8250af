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

__all__ = ["AMRModule", "DIRECTIONS", "CONSTRAINTS", "AMR_MODULE_FILE", "cap_label", "decode_label"]

DIRECTIONS = ("parse", "generate")
#: a constrained parser's rule: BalancedGraph's bracket counting, or the graph grammar
CONSTRAINTS = ("brackets", "grammar")


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
        constraint: with ``constrained``: ``brackets`` (:class:`BalancedGraph`: balanced
            brackets, closed within the answer limit) or ``grammar`` (the graph grammar of
            :mod:`paraamr.amrlm.grammar`: AMR roles, one space between items; greedy only; an
            answer the limit cuts is closed after it). The ``genai`` engine runs the grammar.
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
        constraint: str = "brackets",
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
        self.set_decoding(answer_cap, no_repeat_words, stop_loops=stop_loops, num_beams=num_beams,
                          constraint=constraint)  # fmt: skip
        self._brackets: BracketTable | None = None
        #: answers the ``genai`` engine decoded again under the no-repeat rule (since
        #: :meth:`set_engine`)
        self.redone = 0
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
        """Greedy (or beam) answers for ``sources``; a parser's under its ``constraint``
        (:class:`BalancedGraph`, or the graph grammar of :mod:`paraamr.amrlm.grammar`, which
        the ``genai`` engine always runs). ``num_beams``: this call's beams instead of the
        module's ``num_beams`` setting."""
        limit = max_new_tokens or self.settings["max_target_length"]
        if self.engine_pipeline is not None:
            return self._pipeline_answers(sources, limit)
        batch = self.encode_batch(sources)
        beams = num_beams or self.settings.get("num_beams", 1)
        gen: dict[str, Any] = {"max_new_tokens": limit, "num_beams": beams, "do_sample": False}
        start = batch["input_ids"].shape[1]
        grammar = self.grammar()
        if grammar is not None:
            from transformers import LogitsProcessorList

            from paraamr.amrlm.grammar import GrammarLogits

            if beams > 1:
                raise ConfigError("model.constraint=grammar decodes greedily; "
                                  f"num_beams={beams} needs constraint brackets")  # fmt: skip
            limits = [self.answer_limit(x, limit) for x in sources]
            rule = GrammarLogits(self.tokenizer, grammar, len(sources) * beams, start,
                                 self.model.config.vocab_size, limits=limits,
                                 eos=self.tokenizer.eos_token_id)  # fmt: skip
            gen["logits_processor"] = LogitsProcessorList([rule])
        elif self.settings["constrained"]:
            from transformers import LogitsProcessorList

            depth = self.settings["max_depth"] or 40
            loops = self.settings.get("stop_loops")
            rules = [BalancedGraph(self.brackets(), self.answer_limit(x, limit), depth, loops)
                     for x in sources]  # fmt: skip
            gen["logits_processor"] = LogitsProcessorList([ConstrainedLogits(rules, start)])
        n = self.settings.get("no_repeat_words")
        if n and self.settings["direction"] == "generate":
            from transformers import LogitsProcessorList

            from paraamr.lms.repeats import RepeatedWordBlocker

            gen["logits_processor"] = LogitsProcessorList(
                [RepeatedWordBlocker(self.tokenizer, start, n)]
            )
        out = self.generate_ids(batch, **gen)
        texts = [decode_ids(self.tokenizer, ids) for ids in out]
        return self._closed(texts) if grammar is not None else texts

    def grammar(self) -> str | None:
        """The EBNF grammar the parser decodes under (:func:`paraamr.amrlm.grammar.
        graph_grammar`), or ``None`` where its constraint is none or ``brackets``."""
        from paraamr.amrlm.grammar import graph_grammar

        if not self.settings["constrained"]:
            return None
        if self.settings.get("constraint") != "grammar" and self.engine_pipeline is None:
            return None
        return graph_grammar(self.settings["max_depth"])

    @staticmethod
    def _closed(texts: list[str]) -> list[str]:
        from paraamr.amrlm.grammar import close_graph

        return [close_graph(t) for t in texts]

    def _pipeline_answers(self, sources: Sequence[str], limit: int) -> list[str]:
        """The answers of the ``genai`` engine: per-row limits, the grammar for a parser; for
        a generator with ``no_repeat_words``, each answer the rule would have changed (its
        first banned token, :meth:`RepeatedWordBlocker.first_ban`) decoded again under the
        rule by the project's loop on the same IR (:attr:`engine_steps`), so the answers are
        the rule's. :attr:`redone` counts those."""
        s, tok = self.settings, self.tokenizer
        prompts = self.prompt_ids(sources)
        limits = [self.answer_limit(x, limit) for x in sources]
        grammar = self.grammar()
        ids = self.engine_pipeline.answers(prompts, limits, int(tok.eos_token_id), grammar)
        texts = [decode_ids(tok, torch.tensor(row, dtype=torch.long)) for row in ids]
        n = s.get("no_repeat_words") if s["direction"] == "generate" else None
        if n:
            from paraamr.lms.repeats import RepeatedWordBlocker

            rule = RepeatedWordBlocker(tok, 0, n)
            redo = [i for i, row in enumerate(ids) if rule.first_ban(row) is not None]
            if redo:
                pipeline, self.engine_pipeline = self.engine_pipeline, None
                try:
                    again = self.generate([sources[i] for i in redo], max_new_tokens=limit)
                finally:
                    self.engine_pipeline = pipeline
                for i, text in zip(redo, again, strict=True):
                    texts[i] = text
            self.redone += len(redo)
        return self._closed(texts) if grammar is not None else texts

    def set_engine(self, engine: dict[str, Any] | None, what: str = "engine") -> dict[str, Any]:
        """:meth:`Seq2SeqModule.set_engine`, after refusing what OpenVINO GenAI's pipeline
        cannot run (the parser's ``stop_loops``). A generator with ``no_repeat_words`` on
        ``genai`` also gets the project's loop on the same IR (:attr:`engine_steps`), which
        decodes again the answers the rule would have changed (:meth:`_pipeline_answers`);
        the pipeline's own ``no_repeat_ngram_size`` applies to beam search only."""
        from paraamr.lms.engines import OpenVINOSteps, check_engine

        e = check_engine(engine, what)
        if e["name"] == "genai" and self.settings.get("stop_loops"):
            raise ConfigError(f"{what}.name=genai cannot stop loops inside its pipeline: "
                              "set stop_loops null or use the openvino engine")  # fmt: skip
        out = super().set_engine(engine, what)
        self.redone = 0
        s = self.settings
        if e["name"] == "genai" and s["direction"] == "generate" and s.get("no_repeat_words"):
            self.engine_steps = OpenVINOSteps(self.engine_pipeline.folder, e["precision"],
                                              e["threads"])  # fmt: skip
        return out

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
        constraint: str | None = None,
    ) -> None:
        """Set the decoding settings (checked): a saved model decodes with other ones when
        re-scored or used by the builder. ``constraint``: a constrained parser's rule,
        ``brackets`` or ``grammar`` (``None``: keep the module's)."""
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
        if constraint is not None:
            if constraint not in CONSTRAINTS:
                raise ConfigError(f"model.constraint must be one of {CONSTRAINTS}, got "
                                  f"{constraint!r}")  # fmt: skip
            self.settings["constraint"] = constraint

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
