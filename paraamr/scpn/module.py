"""The SCPN task on the one conditional-generation module
(:class:`paraamr.training.condgen.CondGenModule`): any Hugging Face encoder-decoder or
decoder-only LM fine-tuned to write a paraphrase of a source with a given syntax.

What is SCPN's own: the prompt and answer layout (:class:`paraamr.scpn.data.Encoder`: input
formats, template infilling) and the reading of answers (a tree answer stops at the bracket that
closes its root; its words are the paraphrase). Loss, ``val/loss`` (the best checkpoint is chosen
on it), optimiser, generation mode and files are the shared module's: :meth:`SCPNModule.save`
writes a plain ``save_pretrained`` dir (loadable with ``AutoModelForSeq2SeqLM`` /
``AutoModelForCausalLM``) plus ``scpn.json`` (input format, lengths, architecture) so
:meth:`SCPNModule.load` rebuilds the paraphraser.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from paraamr.errors import ConfigError
from paraamr.lms.loading import load_lm
from paraamr.scpn.data import ANSWER_PREFIX, Encoder
from paraamr.scpn.formats import get_format
from paraamr.scpn.wordcap import WordCap, cap_for, check_word_cap, cut_after_words
from paraamr.training.condgen import CondGenModule
from paraamr.training.optim import OPTIMIZERS, SCHEDULES, check_choice
from paraamr.training.recipe import freeze_lower_layers
from paraamr.utils import map_length_batches

__all__ = ["SCPNModule", "SCPN_CONFIG", "DevBleu"]

log = logging.getLogger(__name__)

SCPN_CONFIG = "scpn.json"


class SCPNModule(CondGenModule):
    """Fine-tune ``model_name_or_path`` as a syntactically controlled paraphraser.

    Args:
        model_name_or_path: hub name, local dir, or preset (:data:`paraamr.lms.loading.PRESETS`).
        arch: ``auto`` | ``seq2seq`` | ``causal``.
        tokenizer_name_or_path: ``None``: the model's own.
        input_format: a :data:`paraamr.scpn.formats.FORMATS` preset.
        parse_depth: pruning depth of the parses (``"default"``: the preset's).
        lr: learning rate (paper 3e-5).
        optimizer: ``adam`` (paper: Adam, no weight decay) or ``adamw``.
        weight_decay: 0 in the paper.
        warmup_steps: linear warm-up steps (0: none).
        schedule: after warm-up, ``constant`` or ``linear`` decay to 0 at the last step.
        max_source_length, max_target_length, max_syntax_length: paper 60 / 60 / 200 tokens.
        num_beams: beam size at generation (paper 4).
        max_new_tokens: generation limit (``None``: ``max_target_length``).
        output_format: ``plain`` (the model writes the paraphrase; the paper) or ``tree``
            (template infilling, :mod:`paraamr.scpn.infill`: the model writes the target tree cut
            at the template's depth with the words in its leaves; the paraphrase is its words).
        template_depth: ``tree`` mode: the depth full target parses are cut to at generation
            (a shallower user template is used as it is).
        train_template_depths: ``tree`` mode: template depths drawn per training pair
            (``None``: ``[template_depth]``), so that depth-3 and deeper templates both work.
        freeze_layers: freeze the embeddings and the lowest N blocks
            (:func:`paraamr.training.recipe.freeze_lower_layers`; ``None``: train everything).
        no_repeat_words: at generation, no word n-gram of this size twice in one answer
            (:class:`paraamr.lms.repeats.RepeatedWordBlocker`; ``None``: no block).
        word_cap: ``[ratio, extra]``: no answer holds more than ``ceil(ratio * source words +
            extra)`` words (:mod:`paraamr.scpn.wordcap`; ``None``: no cap); a forced answer
            keeps it by ending its slots early (at least one word each), never by a cut.
        force_template: ``tree`` mode: decode inside the prompt's template, its brackets and
            labels forced and only the words of its leaves free (:mod:`paraamr.scpn.forced`;
            a format without a target parse, the no-template twin, decodes freely).

    After each :meth:`generate_texts` call in ``tree`` mode, :attr:`answer_counts` holds the
    running counts ``answers``, ``ok``, ``repaired``, ``failed`` and ``follows_template``
    (answers whose bracket structure is exactly the prompt's template); with
    ``force_template``, ``unforced`` counts the rows whose template could not be read (they
    decode freely).
    """

    task_name = "SCPN"
    sidecar = SCPN_CONFIG
    nonfinite_hint = (
        "lower model.lr or raise model.warmup_steps, check the pairs for empty targets, "
        "or use precision 32"
    )

    def __init__(
        self,
        model_name_or_path: str = "smollm2",
        arch: str = "auto",
        tokenizer_name_or_path: str | None = None,
        input_format: str = "skeleton",
        parse_depth: int | None | str = "default",
        lr: float = 3e-5,
        optimizer: str = "adam",
        weight_decay: float = 0.0,
        warmup_steps: int = 0,
        max_source_length: int = 60,
        max_target_length: int = 60,
        max_syntax_length: int = 200,
        num_beams: int = 4,
        max_new_tokens: int | None = None,
        output_format: str = "plain",
        template_depth: int | None = 4,
        train_template_depths: list[int] | None = None,
        freeze_layers: int | None = None,
        schedule: str = "constant",
        no_repeat_words: int | None = None,
        word_cap: list[float] | None = None,
        force_template: bool = False,
    ) -> None:
        super().__init__()
        check_choice(optimizer, OPTIMIZERS, "model.optimizer")
        check_choice(schedule, SCHEDULES, "model.schedule")
        if train_template_depths is not None:  # a plain list: checkpoints load weights-only
            train_template_depths = [int(d) for d in train_template_depths]
        if force_template and output_format != "tree":
            raise ConfigError(
                "model.force_template=true needs model.output_format=tree (the template's "
                f"brackets are forced in a tree answer), got {output_format!r}"
            )
        cap = check_word_cap(word_cap)
        word_cap = list(cap) if cap is not None else None
        self.save_hyperparameters()
        self.model, self.tokenizer, kind = load_lm(model_name_or_path, arch, tokenizer_name_or_path)
        self.arch = "seq2seq" if kind == "bert2bert" else kind  # a warm-started pair is seq2seq
        self.model.train()  # from_pretrained leaves it in eval mode (dropout off)
        self.freeze_stats = freeze_lower_layers(self.model, freeze_layers)
        self.fmt = get_format(input_format, parse_depth)
        if output_format == "tree":
            self.fmt = replace(self.fmt, target_depth=template_depth)
        self.output_format = output_format
        self.encoder = Encoder(
            self.tokenizer,
            self.fmt,
            self.arch,
            max_source_length,
            max_target_length,
            max_syntax_length,
            _max_positions(self.model.config),
            output_format=output_format,
            train_depths=train_template_depths,
        )
        self.answer_counts: Counter = Counter()
        self._bracket_deltas: torch.Tensor | None = None
        self.num_beams = num_beams
        self.max_new_tokens = max_new_tokens or max_target_length
        self.no_repeat_words = no_repeat_words
        self.repeat_bans = 0  # row-steps the repeated-word block acted on (all calls)
        self.word_cap = word_cap
        self.word_cap_hits = 0  # answers cut at their cap, or forced ones it shortened (all calls)
        # a format without a target parse (the no-template twin) has nothing to force
        self.force_template = bool(force_template) and self.fmt.needs_target_parse
        if force_template and not self.force_template:
            log.info("model.force_template: input format %r has no template; decoding freely",
                     input_format)  # fmt: skip
        self._token_table: Any = None

    def optimizer_settings(self) -> dict[str, Any]:
        hp = self.hparams
        keys = ("lr", "optimizer", "weight_decay", "warmup_steps", "schedule")
        return {k: hp.get(k, "constant" if k == "schedule" else None) for k in keys}

    def sidecar_settings(self) -> dict[str, Any]:
        hp = dict(self.hparams)
        hp.update(
            model_name_or_path=None, tokenizer_name_or_path=None, arch=self.arch,
            format_signature=self.fmt.signature(), answer_prefix=ANSWER_PREFIX,
            trained_from=self.hparams["model_name_or_path"],
            val_loss="token-mean",  # the dev loss best_val is measured in (CondGenModule)
        )  # fmt: skip
        return hp

    # generation -----------------------------------------------------------------------------
    @torch.no_grad()
    def generate_texts(
        self,
        segment_lists: list[tuple[tuple[str, str], ...]],
        num_beams: int | None = None,
        max_new_tokens: int | None = None,
    ) -> list[str]:
        """One output per input (a batch; the caller sorts by length).

        ``tree`` mode: generation of a row stops at the bracket that closes its root, and the
        paraphrase is the answer's words (:func:`paraamr.scpn.infill.read_answer`; a failed
        answer is an empty string, counted in :attr:`answer_counts`).
        """
        batch = self.encoder.prompts(segment_lists)
        kw: dict[str, Any] = {
            "num_beams": num_beams or self.num_beams,
            "max_new_tokens": max_new_tokens or self.max_new_tokens,
            "do_sample": False,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if self.arch == "causal":
            kw["eos_token_id"] = self.tokenizer.eos_token_id
        start = batch["input_ids"].shape[1] if self.arch == "causal" else 1
        stops: list[Any] = []
        if self.output_format == "tree":
            stops.append(RootClosed(self.bracket_deltas(), start))
        caps = None
        if self.word_cap is not None:
            sources = [next(t for t, kind in segs if kind == "source") for segs in segment_lists]
            caps = [cap_for(s, self.word_cap) for s in sources]
        forced = self._forcings(segment_lists, caps) if self.force_template else None
        if caps is not None:
            if forced is not None:  # a forced row keeps its cap by closing slots, never cut
                pairs = zip(caps, forced, strict=True)
                caps = [c if r is None else max(c, r.pattern.slots) for c, r in pairs]
            stops.append(WordCap(self.tokenizer, start, caps))
        if stops:
            from transformers import StoppingCriteriaList

            kw["stopping_criteria"] = StoppingCriteriaList(stops)
        blocker, processors = None, []
        if self.no_repeat_words:
            from paraamr.lms.repeats import RepeatedWordBlocker

            blocker = RepeatedWordBlocker(self.tokenizer, start, self.no_repeat_words)
            processors.append(blocker)
        if forced is not None:  # after the blocker: the template wins where both act
            from paraamr.lms.constrained import ConstrainedLogits

            processors.append(ConstrainedLogits(forced, start))
        if processors:
            from transformers import LogitsProcessorList

            kw["logits_processor"] = LogitsProcessorList(processors)
        out = self.generate_ids(batch, **kw)
        if blocker is not None:
            self.repeat_bans += blocker.bans
        texts = self.tokenizer.batch_decode(out, skip_special_tokens=True)
        if caps is not None:
            cut = [cut_after_words(t, c) for t, c in zip(texts, caps, strict=True)]
            self.word_cap_hits += sum(a != b for a, b in zip(texts, cut, strict=True))
            if forced is not None:
                self.word_cap_hits += sum(r is not None and r.budget_used for r in forced)
            texts = cut
        if self.output_format == "plain":
            return [_clean_output(t) for t in texts]
        return [self._read_tree_answer(t, segs) for t, segs in zip(texts, segment_lists,
                                                                     strict=True)]  # fmt: skip

    def template_of(self, segments: tuple[tuple[str, str], ...]) -> str | None:
        """The target template among an input's segments (``None``: the format has none; the
        ``aesop`` format's first parse is the source's)."""
        order = self.fmt.order
        return segments[order.index("target_parse")][0] if "target_parse" in order else None

    def _forcings(
        self, segment_lists: list[tuple[tuple[str, str], ...]], caps: list[int] | None
    ) -> list[Any]:
        """One template constraint per row (``None``: decoded freely, counted as unforced), each
        with its row's word cap as budget."""
        from paraamr.scpn.forced import TokenTable, forcings

        if self._token_table is None:
            self._token_table = TokenTable(self.tokenizer)
        templates = [self.template_of(segs) for segs in segment_lists]
        rows, unforced = forcings(templates, self._token_table, max_words=caps)
        self.answer_counts["unforced"] += unforced
        return rows

    def _read_tree_answer(self, text: str, segments: tuple[tuple[str, str], ...]) -> str:
        from paraamr.scpn.infill import read_answer

        ans = read_answer(text)
        self.answer_counts["answers"] += 1
        self.answer_counts[ans.status] += 1
        template = self.template_of(segments)
        if template is not None and ans.follows(template):
            self.answer_counts["follows_template"] += 1
        return ans.text

    def bracket_deltas(self) -> torch.Tensor:
        """Per vocabulary id: ``(`` minus ``)`` characters in the token's text."""
        if self._bracket_deltas is None:
            vocab = len(self.tokenizer)
            toks = self.tokenizer.convert_ids_to_tokens(list(range(vocab)))
            self._bracket_deltas = torch.tensor(
                [(t or "").count("(") - (t or "").count(")") for t in toks], dtype=torch.long
            )
        return self._bracket_deltas

    # saving ---------------------------------------------------------------------------------
    def save(self, out_dir: str | os.PathLike, extra: dict[str, Any] | None = None) -> Path:
        """``save_pretrained`` the model and tokenizer, plus ``scpn.json``."""
        settings = self.sidecar_settings()
        settings["model_name_or_path"] = str(Path(out_dir))
        settings.update(extra or {})
        return self.save_files(out_dir, settings)

    @classmethod
    def load(cls, model_dir: str | os.PathLike, **overrides: Any) -> SCPNModule:
        """Rebuild a trained paraphraser from :meth:`save` output."""
        hp = cls.read_sidecar(model_dir)
        keys = set(cls.__init__.__code__.co_varnames[1 : cls.__init__.__code__.co_argcount])
        kwargs = {k: v for k, v in hp.items() if k in keys}
        kwargs.update(model_name_or_path=str(model_dir), **overrides)
        return cls(**kwargs)


def _max_positions(config: Any) -> int | None:
    """The model's input length limit (``None`` when unbounded or unknown, e.g. T5)."""
    enc = getattr(config, "encoder", None)
    for c in (enc, config):
        for key in ("max_position_embeddings", "n_positions"):
            v = getattr(c, key, None) if c is not None else None
            if isinstance(v, int) and v > 0:
                return v
    return None


class RootClosed:
    """A ``StoppingCriteria``: a row is done once its generated brackets (from column
    ``start`` on) have opened and closed back to zero, i.e. its root is closed.

    Args:
        deltas: per token id, ``(`` minus ``)`` in its text (:meth:`SCPNModule.bracket_deltas`).
        start: the first generated column (decoder-only: the prompt length).
    """

    def __init__(self, deltas: torch.Tensor, start: int) -> None:
        self.deltas, self.start = deltas, start

    def __call__(self, input_ids: torch.Tensor, scores: Any = None, **kw: Any) -> torch.Tensor:
        new = input_ids[:, self.start :]
        if new.shape[1] == 0:
            return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        ids = new.clamp(0, self.deltas.numel() - 1).cpu()
        run = self.deltas[ids].cumsum(dim=1)
        opened = (run > 0).cummax(dim=1).values
        done = (opened & (run <= 0)).any(dim=1)
        return done.to(input_ids.device)


def _clean_output(text: str) -> str:
    """First line of a generation, whitespace collapsed (a decoder-only model may run on)."""
    text = text.strip().split("\n", 1)[0]
    return " ".join(text.split())


class DevBleu:
    """``evaluate_fn`` for :class:`~paraamr.training.callbacks.PeriodicEval`: corpus BLEU
    (sacrebleu) of generations on the first ``limit`` dev pairs of the trainer's data module,
    for choosing the best checkpoint by dev BLEU instead of dev loss
    (``callbacks=scpn_bleu``).

    Args:
        limit: dev pairs generated at each evaluation.
        batch_size: generation batch size (inputs sorted by length).
        num_beams: beam size (``None``: the module's).
    """

    def __init__(self, limit: int = 64, batch_size: int = 16, num_beams: int | None = 1) -> None:
        self.limit, self.batch_size, self.num_beams = limit, batch_size, num_beams

    def __call__(self, module: Any) -> float:
        import sacrebleu

        pairs = list(module.trainer.datamodule.dev[: self.limit])
        segs = [module.encoder.segments(p) for p in pairs]
        outs = map_length_batches(
            segs,
            lambda b: module.generate_texts(b, num_beams=self.num_beams),
            self.batch_size,
            lengths=[len(s[0][0]) for s in segs],
        )
        return float(sacrebleu.corpus_bleu(outs, [[p.target for p in pairs]]).score)
