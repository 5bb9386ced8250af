"""The one policy every compared corpus's training set is built under, and its signature.

A downstream comparison is fair only when every corpus is read the same way: the same common
sources (matched as Table 2 matches them), the same case, the same cap of paraphrases per
source, perplexity from one named LM with one threshold per task, optionally the same number of
pairs, and the same held-out dev sources. :class:`Policy` holds those settings;
:meth:`Policy.signature` names all of them, so two comparisons that differ in any one setting
never share a number or a folder.

>>> p = Policy(max_paraphrases_per_source=5, lm="smollm2", max_perplexity={"table5": 200.0})
>>> p.threshold("table5"), p.threshold("table6")
(200.0, None)
>>> s = p.signature("table5", common="ab12", dev="cd34", lm_label="smollm2-135m")
>>> s.fields["cap"], s.fields["ppl"], s.fields["equal_pairs"]
('5', '<=200.0(smollm2-135m)', 'no')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from paraamr.errors import ConfigError
from paraamr.signature import Signature

__all__ = ["Policy", "TASKS", "SET_TASKS"]

#: the downstream tasks a comparison can run, and what each trains
TASKS = {
    "table5": "SimCSE on the pairs, STS12-16 (experiments/table5.py)",
    "table6": "a syntax-controlled paraphraser on the pairs, Quora / MRPC / PAN (table6.py)",
    "table7": "few-shot classifiers augmented by each row's Table 6 model (table7.py)",
}
#: the tasks that train on the rows' pairs (table7 trains on a GLUE task, augmented)
SET_TASKS = ("table5", "table6")


@dataclass(frozen=True)
class Policy:
    """How a corpus becomes a training set (see the module docstring).

    Args:
        lowercase: lowercase every source and paraphrase (the builder lowercases its output,
            so a cased corpus beside it would differ in case alone).
        max_paraphrases_per_source: at most this many paraphrases of a source, a seeded draw
            (``None``: all); the authors' SimCSE subset kept at most 5.
        lm: the one LM that scores every paraphrase of every corpus (``none``: no scoring).
        max_perplexity: per task, the largest perplexity kept under ``lm`` (a task not named,
            or ``None``: no filter).
        equal_pairs: after the filters, draw the same number of pairs from every corpus (the
            smallest corpus's count).
        dev_sources: common sources held out of every corpus's training set (Table 6's dev
            pairs are every corpus's paraphrases of exactly these sources).
        seed: seeds the dev draw, the cap's draw, the equal-pairs draw and the shuffled control.
    """

    lowercase: bool = True
    max_paraphrases_per_source: int | None = 5
    lm: str = "smollm2"
    max_perplexity: Mapping[str, float | None] = field(default_factory=dict)
    equal_pairs: bool = False
    dev_sources: int = 50
    seed: int = 0

    def __post_init__(self) -> None:
        cap = self.max_paraphrases_per_source
        if cap is not None and int(cap) < 1:
            raise ConfigError(f"policy.max_paraphrases_per_source must be >= 1 or null, got {cap}")
        if int(self.dev_sources) < 0:
            raise ConfigError(f"policy.dev_sources must be >= 0, got {self.dev_sources}")
        unknown = sorted(set(self.max_perplexity) - set(SET_TASKS))
        if unknown:
            raise ConfigError(
                f"policy.max_perplexity names unknown tasks {unknown}; known: {', '.join(TASKS)}"
            )
        if self.lm in ("none", None) and any(v is not None for v in self.max_perplexity.values()):
            raise ConfigError(
                "policy.max_perplexity is set but policy.lm=none: name the LM that "
                "scores every corpus (smollm2, gpt2 or a folder)"
            )

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any]) -> Policy:
        """From the ``policy`` block of ``conf/compare.yaml`` (unknown keys refused)."""
        known = set(cls.__dataclass_fields__)
        extra = sorted(set(cfg) - known)
        if extra:
            raise ConfigError(f"policy: unknown settings {extra}; known: {sorted(known)}")
        kw = dict(cfg)
        kw["max_perplexity"] = {
            k: (None if v is None else float(v))
            for k, v in dict(kw.get("max_perplexity") or {}).items()
        }
        return cls(**kw)

    def threshold(self, task: str) -> float | None:
        """The perplexity threshold of ``task`` (``None``: no filter)."""
        return self.max_perplexity.get(task)

    def scores_perplexity(self, tasks: list[str]) -> bool:
        """Whether any of ``tasks`` filters on perplexity (else the LM is never loaded)."""
        return any(self.threshold(t) is not None for t in tasks)

    def signature(self, task: str, *, common: str, dev: str, lm_label: str) -> Signature:
        """Every setting that shapes ``task``'s training sets: the common sources' digest, case,
        cap, the LM and threshold, equal pairs, the dev sources' digest and the policy seed."""
        t = self.threshold(task)
        ppl = "none" if t is None else f"<={t}({lm_label})"
        return Signature.build(
            ("common", common),
            ("lowercase", "yes" if self.lowercase else "no"),
            ("cap", self.max_paraphrases_per_source or "none"),
            ("ppl", ppl),
            ("equal_pairs", "yes" if self.equal_pairs else "no"),
            ("dev", f"{self.dev_sources}:{dev}"),
            ("policy_seed", self.seed),
        )
