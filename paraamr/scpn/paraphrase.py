"""Template-controlled paraphrasing of one's own sentences (what users call).

Usage (a trained model dir, so not a doctest)::

    from paraamr.scpn.paraphrase import paraphrase
    paraphrase(["The cat sat on the mat."], "(ROOT (S (NP) (VP) (.)))", model="DIR/best_model")

Steps for every (sentence, template): the template goes to a full target parse (the retrieval
generator of the model's training pairs, or a trained seq2seq parse generator,
:mod:`paraamr.scpn.parse_generator`); the sentence is parsed when the model's input format or
the parse generator needs its parse; inputs are sorted by length, generated in batches with
beam search, and put back in input order. Many sentences x templates go through the crash-safe
shard runner (:func:`paraphrase_to_dir`, :mod:`paraamr.shards`).

Bad input: a malformed template raises :class:`~paraamr.scpn.parse_generator.TemplateError`
before anything runs; an empty or unparsable sentence, or a template no training parse fits
(unless ``no_fit="nearest"`` gives it the nearest template's parse, flagged in the row's
``fit``), is a counted skip (``on_error="skip"``, the row's ``output`` is ``None`` with a
``skipped`` reason) or an error naming the line (``on_error="raise"``); inputs cut to the
length budgets are counted (``truncated``) and flagged per row.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from paraamr.corpus.errors import SkipLog
from paraamr.errors import ParaAMRError
from paraamr.utils import map_length_batches

__all__ = ["Paraphraser", "paraphrase", "paraphrase_to_dir"]

log = logging.getLogger(__name__)


class Paraphraser:
    """A trained SCPN model with its parse generator and (when needed) a parser.

    Args:
        module: a trained :class:`~paraamr.scpn.module.SCPNModule`.
        generator: template -> full parse (retrieval or seq2seq).
        parser: a parser backend; needed when the input format or the generator uses the
            source parse (``None``: spaCy's projection, built on first use).
        batch_size: sentences per generation batch.
        num_beams: beam size (``None``: the model's, paper 4).
    """

    def __init__(
        self,
        module: Any,
        generator: Any,
        parser: Any = None,
        batch_size: int = 16,
        num_beams: int | None = None,
    ) -> None:
        self.module = module
        self.generator = generator
        self._parser = parser
        self.batch_size = batch_size
        self.num_beams = num_beams
        self.counts: Counter = Counter()

    @classmethod
    def load(
        cls,
        model_dir: str | os.PathLike,
        parse_generator: str = "retrieval",
        parser: Any = None,
        batch_size: int = 16,
        num_beams: int | None = None,
        device: str | None = None,
        no_fit: str = "skip",
        no_repeat_words: int | None = None,
        word_cap: list[float] | None = None,
        force_template: bool | None = None,
    ) -> Paraphraser:
        """Load ``model_dir`` (training's ``best_model``) and its parse generator
        (``retrieval``: the dir's ``parse_index.json``; or a parse-generator model dir).
        ``no_fit``: what retrieval gives a template no training parse fits (``skip`` or
        ``nearest``: a parse of the nearest template, :mod:`paraamr.scpn.parse_generator`).
        ``no_repeat_words``: decode without repeating a word n-gram of this size
        (:mod:`paraamr.lms.repeats`; ``None``: the model's own setting). ``word_cap``:
        ``[ratio, extra]``, no output longer than ``ceil(ratio * source words + extra)`` words
        (:mod:`paraamr.scpn.wordcap`; ``None``: the model's own setting). ``force_template``:
        a template-infilling model decodes inside each template, its brackets and labels
        forced (:mod:`paraamr.scpn.forced`; ``None``: the model's own setting)."""
        from paraamr.scpn.decoding import Decoding
        from paraamr.scpn.module import SCPNModule
        from paraamr.scpn.parse_generator import (
            PARSE_INDEX,
            RetrievalParseGenerator,
            Seq2seqParseGenerator,
        )

        decoding = Decoding.given(no_repeat_words=no_repeat_words, word_cap=word_cap,
                                  force_template=force_template)  # fmt: skip
        module = SCPNModule.load(model_dir, **decoding)
        if device:
            module.to(device)
        retrieval = RetrievalParseGenerator.load(Path(model_dir) / PARSE_INDEX, no_fit)
        if parse_generator == "retrieval":
            gen: Any = retrieval
        else:
            gen = Seq2seqParseGenerator(SCPNModule.load(parse_generator), fallback=retrieval)
            if device:
                gen.module.to(device)
        return cls(module, gen, parser, batch_size, num_beams)

    @property
    def parser(self) -> Any:
        if self._parser is None:
            from paraamr.parsers.spacy_backend import SpacyParser

            self._parser = SpacyParser()
        return self._parser

    @property
    def needs_source_parse(self) -> bool:
        return self.module.fmt.needs_source_parse or self.generator.name == "seq2seq"

    def _source_parses(self, sentences: Sequence[str]) -> dict[str, str | Exception]:
        from paraamr.parsers.base import parse_unique
        from paraamr.scpn.formats import linearize

        out: dict[str, str | Exception] = {}
        for s, res in parse_unique(sentences, self.parser).items():
            out[s] = res if isinstance(res, Exception) else linearize(res.tree)
        return out

    def paraphrase(
        self,
        sentences: Sequence[str],
        templates: Sequence[str],
        *,
        skips: SkipLog | None = None,
        where: str = "<input>",
        lines: Sequence[int] | None = None,
        per_sentence: bool = False,
    ) -> list[dict[str, Any]]:
        """One row per (sentence, template), sentence-major: ``{"index", "source",
        "template", "target_parse", "fit", "output", "truncated", "skipped"}``; ``fit`` says
        where the target parse came from (``template``: a template-infilling model takes the
        template as it is; ``fit``: a training parse that fits the template; ``nearest(ted=N)``:
        one of the nearest template; ``generated``: the seq2seq parse generator;
        ``fallback:<fit or nearest>``: retrieval after an unusable generated parse).

        Args:
            sentences: the inputs.
            templates: one or more templates (validated first), all used for every sentence;
                with ``per_sentence`` one template per sentence (``sentence<TAB>template``
                input), one row each.
            skips: the bad-input policy (default: skip and count).
            where: a name for error messages (the input file).
            lines: line numbers of the sentences in ``where`` (default 1, 2, ...).

        Raises:
            TemplateError: a malformed template (naming its line with ``per_sentence``).
        """
        from paraamr.scpn.parse_generator import TemplateError, parse_template

        skips = skips if skips is not None else SkipLog("skip")
        templates = list(templates)
        lines = list(lines) if lines is not None else list(range(1, len(sentences) + 1))
        if per_sentence and len(templates) != len(sentences):
            raise ParaAMRError(
                f"per_sentence: {len(templates)} templates for {len(sentences)} sentences"
            )
        if not templates and sentences:
            raise ParaAMRError("at least one template is needed, e.g. (ROOT (S (NP) (VP) (.)))")
        for k, t in enumerate(templates):
            try:
                parse_template(t)
            except TemplateError as e:
                at = f"{where}:{lines[k]}: " if per_sentence else ""
                raise TemplateError(f"{at}{e}") from None
        if per_sentence:
            pairs = [(s, [t]) for s, t in zip(sentences, templates, strict=True)]
            nt = 1
        else:
            pairs = [(s, templates) for s in sentences]
            nt = len(templates)
        rows = [
            {"index": k * nt + j, "source": s, "template": t, "target_parse": None,
             "fit": None, "output": None, "truncated": False, "skipped": None}
            for k, (s, ts) in enumerate(pairs) for j, t in enumerate(ts)
        ]  # fmt: skip

        def skip(row: dict, reason: str) -> None:
            row["skipped"] = reason
            self.counts[f"skipped:{reason}"] += 1
            skips.skip(reason, where, lines[row["index"] // nt])

        live = []
        for row in rows:
            row["source"] = " ".join(str(row["source"]).split())
            if not row["source"]:
                skip(row, "empty sentence")
            else:
                live.append(row)
        sparse: dict[str, str | Exception] = {}
        if self.needs_source_parse and live:
            sparse = self._source_parses([r["source"] for r in live])
            keep = []
            for r in live:
                if isinstance(sparse[r["source"]], Exception):
                    skip(r, f"sentence not parsed ({sparse[r['source']]})")
                else:
                    keep.append(r)
            live = keep
        self._target_parses(live, sparse)
        keep = []
        for r in live:
            if r["target_parse"] is None:
                skip(r, "no training parse fits the template")
            else:
                keep.append(r)
        self._generate(keep, sparse)
        return rows

    def _target_parses(self, rows: list[dict], sparse: dict[str, Any]) -> None:
        if self.module.output_format == "tree":  # template infilling: the template itself
            for r in rows:
                r["target_parse"], r["fit"] = r["template"], "template"
            return
        if self.generator.name == "seq2seq":
            found = self.generator.generate_many_with_fit(
                [r["template"] for r in rows], [sparse[r["source"]] for r in rows]
            )
        else:
            found = [self.generator.generate_with_fit(r["template"]) for r in rows]
        for r, (parse, how) in zip(rows, found, strict=True):
            r["target_parse"], r["fit"] = parse, how
            if how and "nearest" in how:
                self.counts["nearest_template"] += 1

    def _generate(self, rows: list[dict], sparse: dict[str, Any]) -> None:
        enc = self.module.encoder
        segs, lengths = [], []
        for r in rows:
            before = sum(enc.truncated.values())
            s = self.module.fmt.segments(r["source"], sparse.get(r["source"]), r["target_parse"])
            lengths.append(len(enc.input_ids(s)))
            if sum(enc.truncated.values()) > before:
                r["truncated"] = True
                self.counts["truncated"] += 1
            segs.append(s)
        outs = map_length_batches(
            segs,
            lambda b: self.module.generate_texts(b, num_beams=self.num_beams),
            self.batch_size,
            lengths=lengths,
        )
        for r, o in zip(rows, outs, strict=True):
            r["output"] = o
        self.counts["generated"] += len(rows)
        if self.module.output_format == "tree":
            for k in ("follows_template", "repaired", "failed"):
                self.counts[f"answers_{k}"] = self.module.answer_counts[k]


def paraphrase(
    sentences: Sequence[str] | str,
    templates: Sequence[str] | str,
    *,
    model: str | os.PathLike,
    parse_generator: str = "retrieval",
    batch_size: int = 16,
    num_beams: int | None = None,
    no_fit: str = "skip",
) -> list[str | None]:
    """Paraphrase ``sentences`` with the syntax of each template (``None`` where skipped).

    One output per sentence for one template; sentence-major (all templates of the first
    sentence, then the second's) for several. ``no_fit``: see :meth:`Paraphraser.load`.
    """
    sentences = [sentences] if isinstance(sentences, str) else list(sentences)
    templates = [templates] if isinstance(templates, str) else list(templates)
    p = Paraphraser.load(
        model, parse_generator, batch_size=batch_size, num_beams=num_beams, no_fit=no_fit
    )
    return [r["output"] for r in p.paraphrase(sentences, templates)]


def paraphrase_to_dir(
    paraphraser: Paraphraser,
    sentences: Iterable[tuple[int, str]],
    templates: Sequence[str],
    out_dir: str | os.PathLike,
    *,
    shard: Any = None,
    chunk_size: int = 64,
    skips: SkipLog | None = None,
    where: str = "<input>",
    progress: bool = False,
    per_sentence: bool = False,
) -> list[dict]:
    """Many ``(line number, sentence)`` x templates through :func:`paraamr.shards.run_shard`
    (crash-safe, resumable; ``shard`` = this job's :class:`~paraamr.shards.Shard`); returns the
    rows of every finished shard in input order (all shards when run as one). With
    ``per_sentence``, ``templates[k]`` is the template of the k-th sentence only."""
    from paraamr.shards import ChunkOutput, Shard, merged_rows, run_shard

    shard = shard or Shard(0, 1)
    skips = skips if skips is not None else SkipLog("skip")
    items = list(shard.select(enumerate(sentences)))

    def process(chunk: list[tuple[int, tuple[int, str]]]) -> ChunkOutput:
        before = Counter(paraphraser.counts)
        ts = [templates[k] for k, _ in chunk] if per_sentence else templates
        rows = paraphraser.paraphrase(
            [s for _, (_, s) in chunk], ts, skips=skips, where=where,
            lines=[n for _, (n, _) in chunk], per_sentence=per_sentence,
        )  # fmt: skip
        nt = 1 if per_sentence else len(templates)
        for r in rows:
            local, j = divmod(r["index"], nt)
            k, (n, _) = chunk[local]
            r["index"], r["line"] = k * nt + j, n
        diff = Counter(paraphraser.counts)
        diff.subtract(before)
        return ChunkOutput({"outputs": rows}, Counter({k: v for k, v in diff.items() if v}))

    m = paraphraser.module
    settings = {
        "model": str(m.hparams.get("model_name_or_path")),
        "format": m.fmt.signature(),
        "templates": "per sentence" if per_sentence else list(templates),
        "generator": paraphraser.generator.name,
        "beams": paraphraser.num_beams or m.num_beams,
    }
    run_shard(items, process, out_dir, shard=shard, streams=("outputs",), settings=settings,
              chunk_size=chunk_size, total=len(items), desc="paraphrase", unit="sentence",
              progress=progress, skips=skips)  # fmt: skip
    if shard.count > 1:
        return []
    return list(merged_rows(out_dir, "outputs", order_key="index", num_shards=1))
