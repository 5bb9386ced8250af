"""Tokenization of SCPN examples and the resumable Lightning data module.

An example is a :class:`~paraamr.scpn.pairs.TrainPair` laid out by an
:class:`~paraamr.scpn.formats.InputFormat` into segments; each segment is tokenized on its own and
cut to its budget (``source``: ``max_source_length`` tokens, ``syntax``: ``max_syntax_length``),
then the segments are joined with the separator's tokens, so a long sentence never pushes the
parse out. Targets are cut to ``max_target_length``. Every cut is counted in
:attr:`Encoder.truncated`.

- encoder-decoder: ``input_ids`` = the model's special tokens around the joined segments,
  ``labels`` = the tokenized target (padding -> -100);
- decoder-only: ``prompt = segments + " <para>"``, ``input_ids = prompt + target + eos``,
  ``labels`` = -100 on the prompt and the padding, so the loss is on the target only.
  Prompts for generation are left-padded.

The target is the paraphrase (``output_format="plain"``) or, for template infilling
(``"tree"``, :mod:`paraamr.scpn.infill`), the target's parse cut at the template's depth with
the words in its leaves; each training pair then gets one depth of ``train_depths``, chosen
from a hash of the pair (the same in every run), for its template and its answer alike.
"""

from __future__ import annotations

import os
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader

from paraamr.errors import ConfigError, ParaAMRError
from paraamr.scpn.formats import InputFormat
from paraamr.scpn.pairs import TrainPair
from paraamr.training.data import ListDataset, ResumableDataModule
from paraamr.training.layout import IGNORE, pad_rows, prompt_answer_batch

__all__ = ["Encoder", "SCPNCollator", "SCPNDataModule", "ANSWER_PREFIX"]

ANSWER_PREFIX = " <para>"


class Encoder:
    """Token ids of inputs and targets for one model.

    Args:
        tokenizer: a Hugging Face tokenizer (with a padding token).
        fmt: the input format.
        arch: ``seq2seq`` or ``causal``.
        max_source_length, max_target_length, max_syntax_length: token budgets (paper 60/60/200).
        max_total_length: the model's input limit (position embeddings); a longer input is cut
            at the end of its segments (counted as ``total``), the special tokens and the
            answer prefix kept. For decoder-only models it leaves room for the target.
        output_format: ``plain`` (the paraphrase) or ``tree`` (template infilling; with
            ``noparse`` the model writes a tree of its own choosing: the no-template twin).
        train_depths: template depths of training pairs in ``tree`` mode (``None``: the
            format's target depth).
    """

    def __init__(
        self,
        tokenizer: Any,
        fmt: InputFormat,
        arch: str,
        max_source_length: int = 60,
        max_target_length: int = 60,
        max_syntax_length: int = 200,
        max_total_length: int | None = None,
        output_format: str = "plain",
        train_depths: Sequence[int] | None = None,
    ) -> None:
        from paraamr.scpn.infill import OUTPUT_FORMATS

        if output_format not in OUTPUT_FORMATS:
            raise ConfigError(
                f"model.output_format must be one of {OUTPUT_FORMATS}, got {output_format!r}"
            )
        self.output_format = output_format
        depths = list(train_depths) if train_depths else [fmt.target_depth]
        if any(d is not None and int(d) < 1 for d in depths):
            raise ConfigError(f"model.train_template_depths must be >= 1, got {depths}")
        self.train_depths = depths
        self.tokenizer = tokenizer
        self.max_total_length = max_total_length
        self.fmt = fmt
        self.arch = arch
        self.limits = {"source": max_source_length, "syntax": max_syntax_length}
        self.max_target_length = max_target_length
        self.truncated: Counter = Counter()
        self._sep = self._ids(f" {fmt.sep}")
        self._answer = self._ids(ANSWER_PREFIX)
        self._prefix, self._suffix = _special_wrapping(tokenizer)

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def input_ids(self, segments: Sequence[tuple[str, str]]) -> list[int]:
        """Joined, cut segments (+ special tokens for seq2seq, + answer prefix for causal)."""
        ids: list[int] = []
        for k, (text, kind) in enumerate(segments):
            seg = self._ids(text if k == 0 else " " + text)
            if len(seg) > self.limits[kind]:
                self.truncated[kind] += 1
                seg = seg[: self.limits[kind]]
            if k:
                ids.extend(self._sep)
            ids.extend(seg)
        if self.arch == "seq2seq":
            head, tail = self._prefix, self._suffix
        else:
            bos = self.tokenizer.bos_token_id
            head = [bos] if bos is not None and bos != self.tokenizer.eos_token_id else []
            tail = self._answer
        room = self._room(len(head) + len(tail))
        if room is not None and len(ids) > room:
            self.truncated["total"] += 1
            ids = ids[:room]
        return head + ids + tail

    def _room(self, fixed: int) -> int | None:
        if self.max_total_length is None:
            return None
        budget = self.max_total_length - fixed
        if self.arch == "causal":
            budget -= self.max_target_length + 1
        return max(1, budget)

    def target_ids(self, target: str) -> list[int]:
        """The target's ids: special tokens for seq2seq, ``" " + target + eos`` for causal."""
        if self.arch == "seq2seq":
            ids = self.tokenizer(text_target=target)["input_ids"]
            if len(ids) > self.max_target_length:
                self.truncated["target"] += 1
                ids = ids[: self.max_target_length - 1] + ids[-1:]  # keep the closing token
            return ids
        ids = self._ids(" " + target)
        if len(ids) > self.max_target_length:
            self.truncated["target"] += 1
            ids = ids[: self.max_target_length]
        return ids + [self.tokenizer.eos_token_id]

    def depth(self, p: TrainPair) -> int | None:
        """The template depth of a training pair (``tree`` mode; else the format's)."""
        if self.output_format != "tree" or len(self.train_depths) == 1:
            return self.train_depths[0] if self.output_format == "tree" else self.fmt.target_depth
        key = zlib.crc32(f"{p.source}\t{p.target}".encode())
        return self.train_depths[key % len(self.train_depths)]

    def segments(self, p: TrainPair) -> tuple[tuple[str, str], ...]:
        fmt = self.fmt
        if self.output_format == "tree":
            fmt = replace(fmt, target_depth=self.depth(p))
        return fmt.segments(p.source, p.source_parse, p.target_parse)

    def answer(self, p: TrainPair) -> str:
        """The training answer: the target, or its tree with words cut at the pair's depth.

        Raises:
            ParaAMRError: ``tree`` mode and the pair has no target tree with words.
        """
        if self.output_format == "plain":
            return p.target
        if not p.target_tree:
            raise ParaAMRError(
                f"template infilling needs the target's parse with words (target_tree) for "
                f"{p.target[:60]!r}: pairs from an old parse cache or read_pairs files without it "
                f"must be parsed again"
            )
        from paraamr.scpn.infill import infill

        return infill(p.target_tree, self.depth(p))

    def prompts(
        self, segment_lists: Sequence[Sequence[tuple[str, str]]]
    ) -> dict[str, torch.Tensor]:
        """A generation batch (left-padded for decoder-only models)."""
        rows = [self.input_ids(s) for s in segment_lists]
        ids, mask = pad_rows(rows, self.tokenizer.pad_token_id, left=self.arch == "causal")
        return {"input_ids": ids, "attention_mask": mask}

    def batch(self, pairs: Sequence[TrainPair]) -> dict[str, torch.Tensor]:
        """A training batch with ``labels``."""
        inputs = [self.input_ids(self.segments(p)) for p in pairs]
        targets = [self.target_ids(self.answer(p)) for p in pairs]
        pad = self.tokenizer.pad_token_id
        if self.arch == "seq2seq":
            ids, mask = pad_rows(inputs, pad)
            lab, lab_mask = pad_rows(targets, pad)
            lab[lab_mask == 0] = IGNORE
            return {"input_ids": ids, "attention_mask": mask, "labels": lab}
        return prompt_answer_batch(inputs, targets, pad)


def _special_wrapping(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after a text (BART ``<s>``/``</s>``,
    T5 ``</s>``, BERT ``[CLS]``/``[SEP]``)."""
    probe = "a b"
    bare = tokenizer(probe, add_special_tokens=False)["input_ids"]
    full = tokenizer(probe)["input_ids"]
    for i in range(len(full) - len(bare) + 1):
        if full[i : i + len(bare)] == bare:
            return list(full[:i]), list(full[i + len(bare) :])
    return [], []


class SCPNCollator:
    """List of pairs -> training batch (picklable for data-loader workers)."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder

    def __call__(self, pairs: Sequence[TrainPair]) -> dict[str, torch.Tensor]:
        return self.encoder.batch(pairs)


class SCPNDataModule(ResumableDataModule):
    """Shuffled, seeded, resumable training batches of SCPN pairs, plus a dev loader.

    Args:
        train: training pairs (parsed).
        dev: dev pairs (the dev loss selects the best checkpoint).
        encoder: the model's :class:`Encoder`.
        batch_size: pairs per batch and device (paper: 32).
        eval_batch_size: dev pairs per batch (``None``: ``batch_size``).
        limit_dev: evaluate on the first N dev pairs only.
        seed, num_workers: see :class:`~paraamr.training.data.ResumableDataModule`.
    """

    def __init__(
        self,
        train: Iterable[TrainPair],
        dev: Iterable[TrainPair],
        encoder: Encoder,
        batch_size: int = 32,
        eval_batch_size: int | None = None,
        limit_dev: int | None = None,
        seed: int = 0,
        num_workers: int = 0,
    ) -> None:
        train = [TrainPair(*p) for p in train]
        dev = [TrainPair(*p) for p in dev][:limit_dev]
        if not train or not dev:
            raise ParaAMRError("SCPNDataModule needs at least one training and one dev pair")
        super().__init__(
            train, SCPNCollator(encoder), batch_size=batch_size, seed=seed, num_workers=num_workers
        )
        self.dev = dev
        self.encoder = encoder
        self.eval_batch_size = eval_batch_size or batch_size

    def val_dataloader(self) -> DataLoader:
        return DataLoader(
            ListDataset(self.dev),
            batch_size=self.eval_batch_size,
            shuffle=False,
            collate_fn=SCPNCollator(self.encoder),
            num_workers=0,
        )


def resolve_corpus_path(path: str | None, data_dir: str | None) -> str:
    """A corpus path as given, or relative to the data directory (``train_corpus`` presets)."""
    from paraamr.datadir import data_path

    if not path:
        raise ParaAMRError("data.path is not set (a corpus file; see conf/train_corpus/)")
    p = Path(str(path))
    if p.exists() or p.is_absolute():
        return str(p)
    return str(data_path(data_dir, p))


def build_datamodule(
    path: str | Sequence[str],
    format: str | Sequence[str | None] | None = None,  # noqa: A002 - the config key
    *,
    encoder: Encoder,
    parser: Any,
    task: str = "paraphrase",
    data_dir: str | None = None,
    max_perplexity: float | None = None,
    max_paraphrases: int | None = 5,
    identity: bool = True,
    dev_sources: int = 5000,
    both_directions: bool = False,
    limit_sources: int | None = None,
    parse_cache: str | None = None,
    on_error: str = "raise",
    batch_size: int = 32,
    eval_batch_size: int | None = None,
    limit_dev: int | None = None,
    seed: int = 0,
    num_workers: int = 0,
) -> SCPNDataModule:
    """Pairs from a corpus (:func:`paraamr.scpn.pairs.build_pairs`) -> :class:`SCPNDataModule`
    (the ``data/scpn.yaml`` config); ``task=parse_generator`` turns them into parse-generator
    pairs. The :class:`~paraamr.scpn.pairs.PairSet` is kept as ``.pairs``.

    ``path`` may be a list of corpora (``format`` then a list of the same length, or one format
    for all): each is read and split on its own (``limit_sources`` and ``dev_sources`` apply
    per corpus) and the sets are pooled (:func:`~paraamr.scpn.pairs.pool_pairs`).

    Raises:
        ConfigError: ``format`` is a list whose length differs from ``path``'s.
    """
    from paraamr.scpn.pairs import build_pairs, pool_pairs

    if task not in ("paraphrase", "parse_generator"):
        raise ParaAMRError(f"task must be paraphrase or parse_generator, got {task!r}")
    paths = [path] if isinstance(path, (str, os.PathLike)) or path is None else list(path)
    if format is None or isinstance(format, str):
        formats: list[str | None] = [format] * len(paths)
    else:
        formats = list(format)
        if len(formats) != len(paths):
            raise ConfigError(
                f"data.format lists {len(formats)} formats for {len(paths)} data.path corpora"
            )
    names = [Path(str(p)).name for p in paths]
    if len(set(names)) < len(names):
        names = [f"{i}.{n}" for i, n in enumerate(names)]
    settings = {
        "parser": parser, "max_perplexity": max_perplexity, "max_paraphrases": max_paraphrases,
        "identity": identity, "dev_sources": dev_sources, "both_directions": both_directions,
        "limit_sources": limit_sources, "parse_cache": parse_cache, "on_error": on_error,
        "seed": seed,
    }  # fmt: skip
    parts = [
        (name, build_pairs(resolve_corpus_path(p, data_dir), f, **settings))
        for name, p, f in zip(names, paths, formats, strict=True)
    ]
    pairs = parts[0][1] if len(parts) == 1 else pool_pairs(parts)
    train, dev = pairs.train, pairs.dev
    if task == "parse_generator":
        from paraamr.scpn.parse_generator import parse_generator_pairs

        train, dev = parse_generator_pairs(train), parse_generator_pairs(dev)
    dm = SCPNDataModule(
        train, dev, encoder, batch_size, eval_batch_size, limit_dev, seed, num_workers
    )
    dm.pairs = pairs
    return dm
