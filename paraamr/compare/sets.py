"""Training sets of compared corpora under one :class:`~paraamr.compare.policy.Policy`.

Steps, every corpus alike:

1. the sources common to all corpora, matched as Table 2 matches them
   (:func:`paraamr.corpus.subset.common_subset`, case-insensitively when the policy lowercases);
2. the same ``dev_sources`` of them held out of every training set (a seeded draw);
3. per source: lowercased, paraphrases equal to the source or to an earlier paraphrase dropped;
4. per task: perplexity under the policy's one LM (every corpus scored, whatever it carried)
   against the task's threshold, then the cap of paraphrases per source (a seeded draw), then,
   with ``equal_pairs``, the same number of pairs drawn from every corpus.

Controls are rows made from a real corpus: ``shuffled`` pairs each common source with the
paraphrases of another source (a seeded derangement: no source keeps its own), so a task that
cannot rank real corpora above it cannot compare corpora in that setting.

Every count is kept (:class:`SetCounts`), so the report says what each step kept.

>>> derangement(5, random.Random(0))  # every position moved
[4, 2, 0, 1, 3]
>>> clean_paraphrases("A cat.", ["a cat.", "One cat.", "one  cat.", "The cat."], lowercase=True)
('a cat.', ['one cat.', 'the cat.'], 1, 1)
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from paraamr.compare.policy import Policy
from paraamr.corpus.errors import SkipLog
from paraamr.corpus.readers import check_corpus_path
from paraamr.corpus.records import normalize_key, same_sentence
from paraamr.corpus.specs import CorpusSpec
from paraamr.corpus.subset import common_subset, key_of
from paraamr.errors import ConfigError, DataNotFoundError, InputError

__all__ = [
    "CONTROLS",
    "SetCounts",
    "Common",
    "check_rows",
    "read_common",
    "dev_keys",
    "derangement",
    "shuffled_control",
    "clean_paraphrases",
    "build_sets",
    "write_set",
    "keys_digest",
]

log = logging.getLogger(__name__)

#: control rows a comparison can add (``controls=[shuffled]``)
CONTROLS = ("shuffled",)


@dataclass
class SetCounts:
    """What each step of one corpus's training set kept (one task)."""

    sources_common: int = 0
    sources_dev: int = 0
    paraphrases_read: int = 0
    dropped_identical: int = 0
    dropped_duplicate: int = 0
    scored: int = 0
    dropped_perplexity: int = 0
    dropped_cap: int = 0
    dropped_equal_pairs: int = 0
    sources_without_paraphrase: int = 0
    train_sources: int = 0
    train_pairs: int = 0
    dev_pairs: int = 0


@dataclass
class Common:
    """The common sources (sorted 64-bit keys) and each corpus's record per key:
    ``rows[name][key] = (source text, [paraphrase texts])``."""

    keys: np.ndarray
    rows: dict[str, dict[int, tuple[str, list[str]]]] = field(default_factory=dict)


def check_rows(specs: Sequence[CorpusSpec], controls: Sequence[str]) -> None:
    """Refuse a comparison that cannot run, before any model loads: fewer than two rows
    (corpora and controls together), an unknown control, a name used twice, a missing file."""
    unknown = sorted(set(controls) - set(CONTROLS))
    if unknown:
        raise ConfigError(f"controls: unknown {unknown}; known: {', '.join(CONTROLS)}")
    names = [s.name for s in specs] + list(controls)
    if len(names) < 2:
        raise ConfigError(
            f"a comparison needs at least two rows (corpora and controls together), got "
            f'{len(names)}: give corpora="A=FILE B=FILE" and/or controls=[shuffled]'
        )
    if len(set(names)) != len(names):
        raise ConfigError(f"row names must be unique (corpora and controls): {names}")
    if not specs:
        raise ConfigError("a comparison needs at least one corpus (the controls are made from one)")
    for s in specs:
        try:
            check_corpus_path(s.path, s.fmt)
        except OSError as e:
            raise DataNotFoundError(f"corpus {s.name}: {e.strerror}: {e.filename}") from None


def read_common(
    specs: Sequence[CorpusSpec], lowercase: bool, on_error: str = "raise", progress: bool = True
) -> Common:
    """The common sources of ``specs`` and every corpus's record of each (first occurrence).

    Raises:
        DataNotFoundError: the corpora share no source (the message says where ParaNMT's
            paraphrases exist only for ParaNMT's own sources).
    """
    from paraamr.tables.table2 import subset_stream

    keys = common_subset(list(specs), on_error, progress, lowercase_keys=lowercase)
    if len(keys) == 0:
        raise DataNotFoundError(
            "the corpora share no source sentence: a comparison trains on the sources they "
            "have in common (build your corpus from the other corpora's sources: "
            "`paraamr sources FILE --format FMT` lists them)"
        )
    common = Common(keys)
    for spec in specs:
        rows: dict[int, tuple[str, list[str]]] = {}
        for r in subset_stream(spec, keys, SkipLog(on_error), None, lowercase):
            rows[key_of(r.text, lowercase)] = (r.text, [p.text for p in r.paraphrases])
        common.rows[spec.name] = rows
        log.info("%s: %d common sources read", spec.name, len(rows))
    return common


def keys_digest(keys: Sequence[int] | np.ndarray) -> str:
    """12 hex digits naming a set of source keys (order-free).

    >>> keys_digest([3, 1, 2]) == keys_digest([1, 2, 3]) != keys_digest([1, 2])
    True
    """
    arr = np.sort(np.asarray(keys, dtype=np.uint64))
    return hashlib.sha256(arr.tobytes()).hexdigest()[:12]


def dev_keys(keys: np.ndarray, n: int, seed: int) -> set[int]:
    """``n`` of ``keys`` drawn with ``seed`` (the same for every corpus of a comparison).

    >>> sorted(dev_keys(np.arange(10, dtype=np.uint64), 3, 0)) == sorted(
    ...     dev_keys(np.arange(10, dtype=np.uint64), 3, 0))
    True
    """
    if n and n >= len(keys):
        raise ConfigError(
            f"policy.dev_sources={n} holds out every source the corpora share ({len(keys)}), "
            f"leaving none to train on: set it below {len(keys)} (make compare "
            f"COMPARE_ARGS=policy.dev_sources=N) or build from more sentences"
        )
    rng = np.random.default_rng(seed)
    return {int(k) for k in rng.choice(keys, size=n, replace=False)} if n else set()


def derangement(n: int, rng: random.Random) -> list[int]:
    """A permutation of ``range(n)`` with no fixed point (Sattolo's algorithm: one cycle)."""
    if n < 2:
        raise InputError(f"a shuffled control needs at least 2 sources, got {n}")
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.randrange(i)  # j < i: the element at i never stays
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def shuffled_control(
    rows: Mapping[int, tuple[str, list[str]]], order: Sequence[int], seed: int
) -> dict[int, tuple[str, list[str]]]:
    """Each source of ``order`` with the paraphrases of another source of ``rows``
    (:func:`derangement`, seeded): pairs of the real corpus's style and length, not its meaning.

    >>> rows = {1: ("a", ["a1"]), 2: ("b", ["b1"]), 3: ("c", ["c1"])}
    >>> sorted((src, p[0][0]) for src, p in shuffled_control(rows, [1, 2, 3], 0).values())
    [('a', 'b'), ('b', 'c'), ('c', 'a')]
    """
    perm = derangement(len(order), random.Random(f"shuffled:{seed}"))
    return {k: (rows[k][0], list(rows[order[perm[i]]][1])) for i, k in enumerate(order)}


def clean_paraphrases(
    source: str, paraphrases: Sequence[str], lowercase: bool
) -> tuple[str, list[str], int, int]:
    """``(source, kept paraphrases, dropped identical, dropped duplicate)``: whitespace
    collapsed, lowercased when asked; a paraphrase equal to its source (as Table 2 drops them)
    or to an earlier paraphrase is dropped."""
    src = normalize_key(source, lowercase)
    kept: list[str] = []
    seen: set[str] = set()
    identical = duplicate = 0
    for p in paraphrases:
        text = normalize_key(p, lowercase)
        if same_sentence(text, src):
            identical += 1
        elif normalize_key(text, True) in seen:
            duplicate += 1
        else:
            seen.add(normalize_key(text, True))
            kept.append(text)
    return src, kept, identical, duplicate


Scorer = Callable[[list[str]], list[float]]


def _passes(ppl: float | None, threshold: float | None) -> bool:
    if threshold is None:
        return True
    return ppl is not None and math.isfinite(ppl) and ppl <= threshold


def build_sets(
    common: Common,
    policy: Policy,
    tasks: Sequence[str],
    controls: Sequence[str] = (),
    control_from: str | None = None,
    perplexity: Scorer | None = None,
) -> dict[str, Any]:
    """Every row's training set per task under ``policy``.

    Returns ``{"order": [train keys], "dev": [dev keys], "perplexities": {text: ppl},
    "sets": {task: {row: {"train": [(source, [paraphrases])], "dev": [...],
    "counts": SetCounts}}}}``. ``perplexity`` scores a list of texts (one LM for every row);
    it is called once, with every distinct paraphrase, when a task has a threshold.
    """
    order_all = [int(k) for k in common.keys]
    dev = dev_keys(common.keys, int(policy.dev_sources), policy.seed)
    order = [k for k in order_all if k not in dev]
    dev_order = [k for k in order_all if k in dev]
    base = control_from or next(iter(common.rows))
    if base not in common.rows:
        raise ConfigError(f"control_from={base!r} is not a corpus: {', '.join(common.rows)}")
    cleaned: dict[str, dict[int, tuple[str, list[str]]]] = {}
    counts0: dict[str, SetCounts] = {}
    for name, by_key in common.rows.items():
        c = SetCounts(sources_common=len(order_all), sources_dev=len(dev_order))
        out = {}
        for k in order_all:
            src, paras = by_key[k]
            c.paraphrases_read += len(paras) if k not in dev else 0
            src, kept, ident, dup = clean_paraphrases(src, paras, policy.lowercase)
            if k not in dev:
                c.dropped_identical += ident
                c.dropped_duplicate += dup
            out[k] = (src, kept)
        cleaned[name], counts0[name] = out, c
    if "shuffled" in controls:  # the base's cleaned pairs, moved: its paraphrases, none its own
        moved = shuffled_control(cleaned[base], order, policy.seed)
        cleaned["shuffled"] = {**moved, **{k: cleaned[base][k] for k in dev_order}}
        counts0["shuffled"] = SetCounts(**asdict(counts0[base]))
    ppl: dict[str, float] = {}
    if policy.scores_perplexity(list(tasks)):
        if perplexity is None:
            raise ConfigError("a task filters on perplexity but no LM scorer was given")
        texts = sorted({p for out in cleaned.values() for k in order for p in out[k][1]})
        ppl = dict(zip(texts, perplexity(texts), strict=True))
    sets: dict[str, dict[str, Any]] = {}
    for task in tasks:
        t = policy.threshold(task)
        per_row: dict[str, Any] = {}
        for name, out in cleaned.items():
            c = SetCounts(**asdict(counts0[name]))
            rng = random.Random(f"cap:{policy.seed}:{task}:{name}")
            train = []
            for k in order:
                src, kept = out[k]
                if t is not None:
                    c.scored += len(kept)
                    passed = [p for p in kept if _passes(ppl.get(p), t)]
                    c.dropped_perplexity += len(kept) - len(passed)
                    kept = passed
                cap = policy.max_paraphrases_per_source
                if cap is not None and len(kept) > cap:
                    chosen = sorted(rng.sample(range(len(kept)), cap))
                    c.dropped_cap += len(kept) - cap
                    kept = [kept[i] for i in chosen]
                if kept:
                    train.append((src, kept))
                else:
                    c.sources_without_paraphrase += 1
            dev_rows = []
            for k in dev_order:
                src, kept = out[k]
                cap = policy.max_paraphrases_per_source
                dev_rows.append((src, kept[:cap] if cap else kept))
            per_row[name] = {"train": train, "dev": dev_rows, "counts": c}
        if policy.equal_pairs:
            _equalise(per_row, random.Random(f"equal:{policy.seed}:{task}"))
        for r in per_row.values():
            c = r["counts"]
            c.train_sources = len(r["train"])
            c.train_pairs = sum(len(p) for _, p in r["train"])
            c.dev_pairs = sum(len(p) for _, p in r["dev"])
        sets[task] = per_row
    return {"order": order, "dev": dev_order, "perplexities": ppl, "sets": sets}


def _equalise(per_row: dict[str, Any], rng: random.Random) -> None:
    """Draw the smallest row's number of pairs from every row (source and paraphrase order
    kept); sources left with no pair leave the set."""
    n = min(sum(len(p) for _, p in r["train"]) for r in per_row.values())
    for name in sorted(per_row):
        r = per_row[name]
        flat = [(i, j) for i, (_, ps) in enumerate(r["train"]) for j in range(len(ps))]
        train: list[tuple[str, list[str]]] = [(src, []) for src, _ in r["train"]]
        for x in sorted(rng.sample(range(len(flat)), n)):
            i, j = flat[x]
            train[i][1].append(r["train"][i][1][j])
        r["counts"].dropped_equal_pairs += len(flat) - n
        r["counts"].sources_without_paraphrase += sum(1 for _, ps in train if not ps)
        r["train"] = [(s, ps) for s, ps in train if ps]


def write_set(
    path: Path,
    train: Sequence[tuple[str, list[str]]],
    dev: Sequence[tuple[str, list[str]]],
    perplexities: Mapping[str, float],
    with_dev: bool,
) -> str:
    """Write one training set as ParaAMR JSON lines (each paraphrase with its perplexity under
    the policy's LM when scored): the training sources, then (``with_dev``) the dev sources
    last, as Table 6's reader takes its ``dev_sources``; returns the file's sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="utf-8") as fh:
        for src, paras in [*train, *(dev if with_dev else [])]:
            ps = []
            for p in paras:
                item: dict[str, Any] = {"para_text": p}
                v = perplexities.get(p)
                if v is not None and math.isfinite(v):
                    item["perplexity"] = round(float(v), 4)
                ps.append(item)
            line = json.dumps({"text": src, "paraphrases": ps}, ensure_ascii=False) + "\n"
            h.update(line.encode("utf-8"))
            fh.write(line)
    tmp.replace(path)
    return h.hexdigest()
