"""Score collected judgements against a kit's key: the paper's Table 4 numbers, agreement and
attention checks.

Per corpus and question: the share of judgements scoring 3, 2 and 1 (percent) and their average,
as the paper reports them, with 95% percentile-bootstrap intervals that resample *items* (all
judgements of a drawn item come along). Agreement per question: Krippendorff's alpha, ordinal,
from the ``krippendorff`` package (annotators as coders, the items as units, scale 1-3), and the
share of items judged by two or more annotators on which all agree. Attention checks count, per
annotator, the check items whose answer differs from the expected one.

What never counts, and how it is reported: answers to ids not in the key, an annotator's second
answer to the same item and question (both raise with file and line under ``on_error="raise"``;
skipped and counted otherwise), rejected MTurk assignments (counted), annotators over
``max_failed_checks`` (counted, with their ids). Answers naming another kit, or a batch row
whose sentences differ from the key's, always raise: the key does not match.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from paraamr.corpus.errors import SkipLog
from paraamr.errors import CorpusFormatError, DataNotFoundError, InputError
from paraamr.humaneval.answers import Answers, Judgement
from paraamr.humaneval.questions import QUESTIONS, SCORES
from paraamr.humaneval.sample import KeyItem, kit_id
from paraamr.utils import json_lines

__all__ = [
    "Kit",
    "load_kit",
    "join_key",
    "table4_rows",
    "agreement",
    "check_report",
    "Scored",
    "score_answers",
]

FIELDS = tuple(q.field for q in QUESTIONS)


@dataclass(frozen=True)
class Kit:
    """A kit folder's key and manifest."""

    root: Path
    items: dict[str, KeyItem]
    manifest: dict

    @property
    def id(self) -> str:
        return self.manifest["kit"]

    @property
    def corpora(self) -> tuple[str, ...]:
        return tuple(self.manifest["corpora"])


def load_kit(root: str | Path) -> Kit:
    """Read ``key.jsonl`` and ``manifest.json``; the key must be the one the manifest names."""
    root = Path(root)
    key_path, man_path = root / "key.jsonl", root / "manifest.json"
    for p in (key_path, man_path):
        if not p.is_file():
            raise DataNotFoundError(f"{p} not found: --dir must be a folder from humaneval sample")
    manifest = json.loads(man_path.read_text(encoding="utf-8"))
    items: dict[str, KeyItem] = {}
    for n, row in json_lines(key_path):
        try:
            k = KeyItem(row["item_id"], row["source"], row["paraphrase"], row["corpus"],
                        dict(row.get("expected") or {}))  # fmt: skip
        except (KeyError, TypeError, AttributeError) as e:
            raise CorpusFormatError(f"not a key line: {e}", str(key_path), n) from None
        if k.item_id in items:
            raise CorpusFormatError(f"item id {k.item_id} twice in the key", str(key_path), n)
        items[k.item_id] = k
    if kit_id(items.values()) != manifest.get("kit"):
        raise InputError(
            f"{key_path} does not match {man_path} (kit {manifest.get('kit')}): "
            "the key was edited or comes from another kit"
        )
    return Kit(root, items, manifest)


def join_key(answers: Answers, kit: Kit, skips: SkipLog) -> list[tuple[KeyItem, Judgement]]:
    """The judgements that count, each with its key item (see the module docstring)."""
    for path, kid in answers.kits.items():
        if kid != kit.id:
            raise InputError(f"{path}: answers of kit {kid}, but {kit.root} holds kit {kit.id}")
    out: list[tuple[KeyItem, Judgement]] = []
    first: dict[tuple[str, str, str], Judgement] = {}
    for j in answers.judgements:
        k = kit.items.get(j.item_id)
        if k is None:
            skips.skip("item id not in the key", j.path, j.line, repr(j.item_id))
            continue
        if j.shown is not None and (j.shown[0].strip(), j.shown[1].strip()) != (
            k.source.strip(),
            k.paraphrase.strip(),
        ):
            raise CorpusFormatError(
                f"item {j.item_id} showed other sentences than the key of {kit.root} holds: "
                "the batch was made from another kit",
                j.path,
                j.line,
            )
        seen = first.get((j.item_id, j.annotator, j.question))
        if seen is not None:
            skips.skip(
                "an annotator answered the same item and question twice",
                j.path,
                j.line,
                f"{j.annotator}, {j.question} of item {j.item_id} "
                f"(first at {seen.path}:{seen.line})",
            )
            continue
        first[(j.item_id, j.annotator, j.question)] = j
        out.append((k, j))
    return out


def _counts(pairs: Sequence[tuple[KeyItem, Judgement]]) -> np.ndarray:
    """Per item, how many judgements gave 3, 2 and 1: an ``(items, 3)`` array."""
    per: dict[str, Counter] = defaultdict(Counter)
    for k, j in pairs:
        per[k.item_id][j.score] += 1
    return np.array([[c[s] for s in SCORES] for c in per.values()], dtype=np.int64).reshape(-1, 3)


def _stats(counts: np.ndarray) -> np.ndarray:
    """``(..., 3)`` counts -> ``(..., 4)``: share of 3, 2, 1 (percent) and the average."""
    total = counts.sum(axis=-1, keepdims=True)
    shares = 100.0 * counts / total
    average = (counts * np.array(SCORES)).sum(axis=-1, keepdims=True) / total
    return np.concatenate([shares, average], axis=-1)


STAT_KEYS = ("share_3", "share_2", "share_1", "average")


def table4_rows(
    pairs: Sequence[tuple[KeyItem, Judgement]],
    corpora: Sequence[str],
    bootstrap: int = 1000,
    seed: int = 0,
) -> list[dict]:
    """Table 4 rows (corpus, question, share_3, share_2, share_1, average, n_items,
    n_judgements, and ``<stat>_lo`` / ``<stat>_hi`` when ``bootstrap`` > 0).

    >>> k = [KeyItem(f"i{n}", "S.", "P.", "A") for n in range(2)]
    >>> j = lambda i, who, s: Judgement(f"i{i}", who, "similarity", s, "f", 1)
    >>> pairs = [(k[0], j(0, "a", 3)), (k[0], j(0, "b", 2)), (k[1], j(1, "a", 3))]
    >>> r = table4_rows(pairs, ["A"], bootstrap=0)[0]
    >>> round(r["share_3"], 2), r["average"], r["n_items"], r["n_judgements"]
    (66.67, 2.6666666666666665, 2, 3)
    """
    rows = []
    rng = np.random.default_rng(seed)
    for c in corpora:
        for q in FIELDS:
            sel = [(k, j) for k, j in pairs if k.corpus == c and j.question == q]
            if not sel:
                rows.append({"corpus": c, "question": q, "n_items": 0, "n_judgements": 0,
                             **dict.fromkeys(STAT_KEYS)})  # fmt: skip
                continue
            counts = _counts(sel)
            row = {"corpus": c, "question": q}
            row.update(zip(STAT_KEYS, _stats(counts.sum(axis=0)).tolist(), strict=True))
            row["n_items"], row["n_judgements"] = len(counts), int(counts.sum())
            if bootstrap > 0:
                idx = rng.integers(0, len(counts), size=(bootstrap, len(counts)))
                boot = _stats(counts[idx].sum(axis=1))
                lo, hi = np.quantile(boot, [0.025, 0.975], axis=0)
                for n, key in enumerate(STAT_KEYS):
                    row[f"{key}_lo"], row[f"{key}_hi"] = float(lo[n]), float(hi[n])
            rows.append(row)
    return rows


def _alpha(pairs: Sequence[tuple[KeyItem, Judgement]]) -> float | None:
    import krippendorff

    annotators = sorted({j.annotator for _, j in pairs})
    items = sorted({k.item_id for k, _ in pairs})
    if len(annotators) < 2 or not items:
        return None
    a_ix = {a: i for i, a in enumerate(annotators)}
    i_ix = {i: n for n, i in enumerate(items)}
    data = np.full((len(annotators), len(items)), np.nan)
    for k, j in pairs:
        data[a_ix[j.annotator], i_ix[k.item_id]] = j.score
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    if not pairable.any() or len(np.unique(data[:, pairable][~np.isnan(data[:, pairable])])) < 2:
        return None  # no unit with two values, or one value only: alpha is undefined
    value = krippendorff.alpha(
        reliability_data=data[:, pairable],
        level_of_measurement="ordinal",
        value_domain=SCORES[::-1],
    )
    return None if math.isnan(value) else float(value)


def agreement(pairs: Sequence[tuple[KeyItem, Judgement]], corpora: Sequence[str]) -> list[dict]:
    """Per question (all corpora, then each corpus): Krippendorff's alpha (ordinal), the share
    of multiply-judged items with full agreement, and how many items that share is over."""
    out = []
    for q in FIELDS:
        for c in (None, *corpora):
            sel = [(k, j) for k, j in pairs if j.question == q and (c is None or k.corpus == c)]
            by_item: dict[str, list[int]] = defaultdict(list)
            for k, j in sel:
                by_item[k.item_id].append(j.score)
            multi = [v for v in by_item.values() if len(v) >= 2]
            full = sum(len(set(v)) == 1 for v in multi)
            out.append({
                "question": q,
                "corpus": c or "all",
                "alpha_ordinal": _alpha(sel),
                "full_agreement": 100.0 * full / len(multi) if multi else None,
                "n_multi_items": len(multi),
                "n_annotators": len({j.annotator for _, j in sel}),
            })  # fmt: skip
    return out


def check_report(pairs: Sequence[tuple[KeyItem, Judgement]]) -> list[dict]:
    """Per annotator: attention-check items answered and failed (any expected answer missed)."""
    seen: dict[str, set[str]] = defaultdict(set)
    failed: dict[str, set[str]] = defaultdict(set)
    for k, j in pairs:
        if not k.is_check:
            continue
        seen[j.annotator].add(k.item_id)
        want = k.expected.get(j.question)
        if want is not None and j.score != want:
            failed[j.annotator].add(k.item_id)
    return [{"annotator": a, "checks_answered": len(seen[a]), "checks_failed": len(failed[a])}
            for a in sorted(seen)]  # fmt: skip


@dataclass
class Scored:
    """Everything ``humaneval score`` reports."""

    rows: list[dict]
    agreement: list[dict]
    checks: list[dict]
    kit: Kit
    counts: dict = field(default_factory=dict)


def score_answers(
    kit: Kit,
    answers: Answers,
    skips: SkipLog,
    bootstrap: int = 1000,
    seed: int = 0,
    max_failed_checks: int | None = None,
) -> Scored:
    """Join answers with the key and compute Table 4, agreement and the checks."""
    pairs = join_key(answers, kit, skips)
    checks = check_report(pairs)
    excluded = []
    if max_failed_checks is not None:
        excluded = [c["annotator"] for c in checks if c["checks_failed"] > max_failed_checks]
        pairs = [(k, j) for k, j in pairs if j.annotator not in excluded]
    scored = [(k, j) for k, j in pairs if not k.is_check]
    judged = {k.item_id for k, _ in scored}
    counts = {
        "files": len(answers.files),
        "judgements_read": len(answers.judgements),
        "judgements_scored": len(scored),
        "judgements_on_checks": sum(k.is_check for k, _ in pairs),
        "rejected_assignments": answers.rejected,
        "annotators": len({j.annotator for _, j in scored}),
        "excluded_annotators": excluded,
        "items_never_judged": sum(not k.is_check and i not in judged for i, k in kit.items.items()),
        "skipped": skips.summary(),
    }
    return Scored(
        rows=table4_rows(scored, kit.corpora, bootstrap, seed),
        agreement=agreement(scored, kit.corpora),
        checks=checks,
        kit=kit,
        counts=counts,
    )
