"""GLUE MRPC / QQP / RTE for few-shot learning: readers, seeded k-shot samples, the seeded 1/3
internal dev / 2/3 test split of the GLUE dev set, and the no-overlap check.

Where each split comes from (``source="local"``, the shared data directory):

====  ==========================================================  ==================================
task  few-shot pool (k examples drawn from it)                    evaluation pool (split 1/3 + 2/3)
====  ==========================================================  ==================================
MRPC  ``glue_pretrain/MRPC/{train,dev}.json`` (GLUE train)        ``k-shot/MRPC/16-42/test.tsv``
                                                                  (the GLUE dev set, 408)
RTE   ``glue_pretrain/RTE/{train,dev}.json`` (GLUE train)         ``k-shot/RTE/16-42/test.tsv``
                                                                  (the GLUE dev set, 277)
QQP   ``glue_pretrain/QQP/train.json`` (8,999 rows of a 10k       ``glue_pretrain/QQP/dev.json``
      sample of GLUE train)                                       (the other 1,000 rows of that
                                                                  sample: NOT the GLUE dev set)
====  ==========================================================  ==================================

QQP's evaluation rows are rows no few-shot draw can reach (they are not in the pool); the
outputs name every test set's source (:attr:`FewShotData.sources`). ``source="hub"`` reads
``nyu-mll/glue`` (train -> pool, validation -> evaluation) for users with a network.

In every case pool examples whose text (case and spacing folded) equals an evaluation example
are removed before sampling (counted in ``counts["pool_removed_overlap"]``), and
:func:`check_no_overlap` verifies the drawn sample against the test split.

Labels are GLUE's integers: MRPC 1 = equivalent, QQP 1 = duplicate, RTE 0 = entailment,
1 = not_entailment (as ``nyu-mll/glue``).

>>> pool = [Example(f"s{i}", None, i % 2, f"p#{i}") for i in range(20)]
>>> [e.uid for e in sample_k(pool, 3, seed=1)] == [e.uid for e in sample_k(pool, 3, seed=1)]
True
>>> dev, test = split_dev(pool[:9], seed=0)
>>> len(dev), len(test), set(e.uid for e in dev) & set(e.uid for e in test)
(3, 6, set())
"""

from __future__ import annotations

import csv
import json
import logging
import os
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paraamr.errors import ConfigError, CorpusFormatError, DataNotFoundError, InputError

__all__ = [
    "Example",
    "TaskSpec",
    "TASKS",
    "FewShotData",
    "read_glue_tsv",
    "read_glue_json",
    "read_hub",
    "sample_k",
    "split_dev",
    "text_key",
    "check_no_overlap",
    "load_fewshot",
    "read_examples",
    "write_examples",
]

log = logging.getLogger(__name__)

KSHOT_DIR = "glue/k-shot"
PRETRAIN_DIR = "glue/glue_pretrain"
HUB_NAME = "nyu-mll/glue"


@dataclass(frozen=True)
class Example:
    """One labelled example: a sentence (``text_b`` None) or a sentence pair; ``uid`` names
    where it came from (``file#key`` or ``file:line``)."""

    text_a: str
    text_b: str | None
    label: int
    uid: str

    def to_dict(self) -> dict:
        return {"text_a": self.text_a, "text_b": self.text_b, "label": self.label, "uid": self.uid}


@dataclass(frozen=True)
class TaskSpec:
    """A GLUE task: its folder name, label names (index = label id), the F1 class (None: no F1)
    and the TSV columns of the sentence(s) and label."""

    folder: str
    labels: tuple[str, ...]
    f1_label: int | None
    tsv_columns: tuple[str, str, str]


TASKS: dict[str, TaskSpec] = {
    "mrpc": TaskSpec("MRPC", ("0", "1"), 1, ("#1 String", "#2 String", "Quality")),
    "qqp": TaskSpec("QQP", ("0", "1"), 1, ("question1", "question2", "is_duplicate")),
    "rte": TaskSpec(
        "RTE", ("entailment", "not_entailment"), None, ("sentence1", "sentence2", "label")
    ),
}


def _spec(task: str) -> TaskSpec:
    if task not in TASKS:
        raise ConfigError(f"task: {task!r} is not one of {sorted(TASKS)}")
    return TASKS[task]


def _label(spec: TaskSpec, value: str, path: str, line: int | str) -> int:
    v = str(value).strip()
    if v in spec.labels:
        return spec.labels.index(v)
    raise CorpusFormatError(f"label {v!r} is not one of {list(spec.labels)}", path, line)


def read_glue_tsv(path: str | Path, task: str) -> list[Example]:
    """A GLUE TSV (``k-shot/*/*/{train,dev,test}.tsv``: header row, tab separated, no quoting;
    MRPC's header starts with a byte-order mark). ``uid`` = ``<file>:<line>``.

    Raises:
        CorpusFormatError: a missing column, a short row or an unknown label (file and line).
    """
    spec, path = _spec(task), Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"{path} not found (GLUE {spec.folder})")
    with open(path, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise CorpusFormatError("empty file (a header row is expected)", str(path), 1)
    header = rows[0]
    missing = [c for c in spec.tsv_columns if c not in header]
    if missing:
        raise CorpusFormatError(f"header lacks column(s) {missing} (has {header})", str(path), 1)
    ia, ib, il = (header.index(c) for c in spec.tsv_columns)
    out = []
    for n, row in enumerate(rows[1:], start=2):
        if len(row) < len(header):
            raise CorpusFormatError(
                f"{len(row)} fields, the header has {len(header)}", str(path), n
            )
        out.append(
            Example(row[ia], row[ib], _label(spec, row[il], str(path), n), f"{path.name}:{n}")
        )
    return out


def read_glue_json(path: str | Path, task: str) -> list[Example]:
    """A ``glue_pretrain`` JSON file (``{"<key>": {"text_a", "text_b", "label"}}``).
    ``uid`` = ``<folder>/<file>#<key>``.

    Raises:
        CorpusFormatError: invalid JSON or a record without the three fields (file and key).
    """
    spec, path = _spec(task), Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"{path} not found (GLUE {spec.folder})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise CorpusFormatError(f"invalid JSON ({e.msg})", str(path), e.lineno) from None
    out = []
    for key, rec in data.items():
        if not isinstance(rec, dict) or not {"text_a", "text_b", "label"} <= set(rec):
            raise CorpusFormatError(
                f"record {key!r} needs text_a, text_b and label", str(path), f"key {key}"
            )
        uid = f"{path.parent.name}/{path.name}#{key}"
        out.append(
            Example(rec["text_a"], rec["text_b"], _label(spec, rec["label"], str(path), key), uid)
        )
    return out


def read_hub(task: str, split: str) -> list[Example]:
    """``nyu-mll/glue`` (``mrpc``, ``qqp``, ``rte``) ``split`` from the Hugging Face hub."""
    from paraamr.utils import require

    _spec(task)
    ds = require("datasets", "source=hub (GLUE from the hub)").load_dataset(
        HUB_NAME, task, split=split
    )
    a, b = ("question1", "question2") if task == "qqp" else ("sentence1", "sentence2")
    return [
        Example(r[a], r[b], int(r["label"]), f"{HUB_NAME}/{task}/{split}#{r['idx']}") for r in ds
    ]


def text_key(e: Example) -> tuple[str, str]:
    """The text of an example with case and spacing folded (what "the same example" means).

    >>> text_key(Example("A  cat .", "b", 0, "x"))
    ('a cat .', 'b')
    """
    return (" ".join(e.text_a.lower().split()), " ".join((e.text_b or "").lower().split()))


def sample_k(pool: Sequence[Example], k: int, seed: int) -> list[Example]:
    """``k`` examples drawn without replacement with ``random.Random(seed)``, in draw order."""
    if not 0 < k <= len(pool):
        raise InputError(f"cannot draw k={k} examples from a pool of {len(pool)}")
    return [pool[i] for i in random.Random(seed).sample(range(len(pool)), k)]


def split_dev(examples: Sequence[Example], seed: int) -> tuple[list[Example], list[Example]]:
    """The paper's split of a GLUE dev set: a random third (``round(n / 3)``) as internal dev
    (model selection), the other two thirds as test; both keep the file order."""
    n = len(examples)
    if n < 3:
        raise InputError(f"an evaluation set of {n} examples cannot be split 1/3 + 2/3")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    dev_idx = set(order[: round(n / 3)])
    dev = [e for i, e in enumerate(examples) if i in dev_idx]
    test = [e for i, e in enumerate(examples) if i not in dev_idx]
    return dev, test


def check_no_overlap(train: Sequence[Example], test: Sequence[Example]) -> None:
    """Raise when a training example is a test example (same ``uid`` or same text).

    >>> check_no_overlap([Example("a", "b", 0, "t#1")], [Example("A", "b", 1, "d:2")])
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: 1 few-shot example(s) are test examples: t#1 = d:2
    """
    by_key = {text_key(e): e for e in test}
    uids = {e.uid for e in test}
    bad = [(e, by_key.get(text_key(e))) for e in train if e.uid in uids or text_key(e) in by_key]
    if bad:
        shown = ", ".join(f"{e.uid} = {t.uid if t else e.uid}" for e, t in bad[:5])
        raise InputError(f"{len(bad)} few-shot example(s) are test examples: {shown}")


@dataclass
class FewShotData:
    """One few-shot setting: ``train`` (the k drawn examples), ``dev`` (internal dev), ``test``,
    where each came from (``sources``), and counts (pool size, overlaps removed)."""

    task: str
    k: int
    seed: int
    split_seed: int
    train: list[Example]
    dev: list[Example]
    test: list[Example]
    sources: dict[str, str]
    counts: Counter = field(default_factory=Counter)

    @property
    def num_labels(self) -> int:
        return len(TASKS[self.task].labels)


def _local_pools(task: str, root: Path) -> tuple[list[Example], list[Example], dict[str, str]]:
    spec = TASKS[task]
    pre = root / PRETRAIN_DIR / spec.folder
    if task == "qqp":
        pool = read_glue_json(pre / "train.json", task)
        evals = read_glue_json(pre / "dev.json", task)
        src = {
            "pool": f"{PRETRAIN_DIR}/QQP/train.json (rows of a 10k sample of GLUE QQP train)",
            "eval": f"{PRETRAIN_DIR}/QQP/dev.json (the other rows of that 10k sample of GLUE QQP "
            "train; not the GLUE dev set, which is not in the shared data)",
        }
    else:
        pool = read_glue_json(pre / "train.json", task) + read_glue_json(pre / "dev.json", task)
        test_file = f"{KSHOT_DIR}/{spec.folder}/16-42/test.tsv"
        evals = read_glue_tsv(root / test_file, task)
        src = {
            "pool": f"{PRETRAIN_DIR}/{spec.folder}/{{train,dev}}.json (GLUE {spec.folder} train)",
            "eval": f"{test_file} (the GLUE {spec.folder} dev set)",
        }
    return pool, evals, src


def load_fewshot(
    task: str,
    k: int,
    seed: int,
    *,
    data_dir: str | Path | None = None,
    source: str = "local",
    split_seed: int = 0,
) -> FewShotData:
    """The few-shot sample (``k`` from the pool, drawn with ``seed``) and the internal dev / test
    split of the evaluation set (drawn with ``split_seed``, the same for every seed so that seeds
    are compared on one test set).

    Args:
        task: ``mrpc``, ``qqp`` or ``rte``.
        k: training examples (the paper: 15 or 30).
        seed: the few-shot draw.
        data_dir: the shared data directory (an entry point's ``paths.data_dir``; from Python:
            :func:`paraamr.datadir.resolve_data_dir`).
        source: ``local`` (the shared files, see the module docstring) or ``hub``.
        split_seed: the 1/3 + 2/3 split of the evaluation set.
    """
    _spec(task)
    if source == "local":
        from paraamr.datadir import data_path

        root = data_path(data_dir)
        pool, evals, sources = _local_pools(task, root)
        sources = {kk: f"{v}" for kk, v in sources.items()}
    elif source == "hub":
        pool, evals = read_hub(task, "train"), read_hub(task, "validation")
        sources = {
            "pool": f"{HUB_NAME}/{task} train",
            "eval": f"{HUB_NAME}/{task} validation (the GLUE dev set)",
        }
    else:
        raise ConfigError(f"source: {source!r} is not 'local' or 'hub'")
    counts: Counter = Counter(pool=len(pool), eval=len(evals))
    eval_keys = {text_key(e) for e in evals}
    clean = [e for e in pool if text_key(e) not in eval_keys]
    if len(clean) < len(pool):
        counts["pool_removed_overlap"] = len(pool) - len(clean)
        log.info(
            "%s: %d pool examples equal an evaluation example: removed",
            task,
            len(pool) - len(clean),
        )
    train = sample_k(clean, k, seed)
    dev, test = split_dev(evals, split_seed)
    check_no_overlap(train, test)
    check_no_overlap(train, dev)
    sources["test"] = f"2/3 of {sources['eval']}, split seed {split_seed}"
    sources["dev"] = f"1/3 of {sources['eval']}, split seed {split_seed}"
    sources["train"] = f"{k} drawn from {sources['pool']}, seed {seed}"
    counts.update(train=len(train), dev=len(dev), test=len(test))
    return FewShotData(task, k, seed, split_seed, train, dev, test, sources, counts)


def write_examples(path: str | os.PathLike, examples: Sequence[Example]) -> Path:
    """One JSON object per line: ``text_a``, ``text_b``, ``label``, ``uid`` (the training set
    a run used, for users to inspect or reuse)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for e in examples:
            fh.write(json.dumps(e.to_dict(), ensure_ascii=False) + "\n")
    return path


def read_examples(path: str | os.PathLike) -> list[Example]:
    """Read a JSONL few-shot set (``text_a``, optional ``text_b``, integer ``label``, optional
    ``uid``) or a TSV with a header ``text_a<TAB>text_b<TAB>label`` (``text_b`` optional).

    Raises:
        CorpusFormatError: a line that is not such a record (file and line).
    """
    path = Path(path)
    out = []
    with open(path, encoding="utf-8-sig") as fh:
        lines = fh.read().splitlines()
    tsv = path.suffix == ".tsv"
    header = lines[0].split("\t") if tsv and lines else []
    for n, line in enumerate(lines, start=1):
        if not line.strip() or (tsv and n == 1):
            continue
        try:
            rec = dict(zip(header, line.split("\t"), strict=True)) if tsv else json.loads(line)
            out.append(
                Example(
                    str(rec["text_a"]),
                    rec.get("text_b") or None,
                    int(rec["label"]),
                    str(rec.get("uid") or f"{path.name}:{n}"),
                )
            )
        except (ValueError, KeyError, TypeError) as e:
            raise CorpusFormatError(
                f"not a few-shot record (text_a, text_b, label): {e}", str(path), n
            ) from None
    return out
