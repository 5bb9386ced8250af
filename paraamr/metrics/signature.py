"""The signature of Table 2 metric numbers (a :class:`paraamr.signature.Signature`).

Examples:
    >>> s = metric_signature(similarity="minilm", parser_sig="gold(...)", bleu="nltk-sentence",
    ...                      ted_variant="paraamr", ted_kernel="edist", ted3_depth=3, data="x")
    >>> s.split("|")[:3]
    ['paraamr:0.1.0', 'data:x', 'agg:src-mean,drop-identical:ci']
"""

from __future__ import annotations

from paraamr.errors import ConfigError
from paraamr.signature import PACKAGES, Signature, package_versions

__all__ = ["metric_signature"]


def metric_signature(
    *,
    similarity: str,
    parser_sig: str,
    bleu: str,
    ted_variant: str,
    ted_kernel: str,
    ted3_depth: int,
    data: str,
    lowercase: bool = False,
    self_bleu: bool = False,
) -> Signature:
    """One line naming metric variants, model, parser, tokenization, data and versions.

    The TED part names the preset with its definition version (``ted:paraamr-v2``): numbers
    from different definitions of one preset name never share a signature.

    Raises:
        ConfigError: for an unknown TED variant.
    """
    from paraamr.metrics.ted import VARIANTS

    if ted_variant not in VARIANTS:
        raise ConfigError(
            f"ted.variant: unknown TED variant {ted_variant!r}; one of {tuple(VARIANTS)}"
        )
    v = package_versions()
    case = "lower" if lowercase else "as-written"
    bleu_part = (
        f"{bleu},w:uniform4,tok:parser" if bleu == "nltk-sentence" else f"{bleu},tok:13a"
    ) + f",case:{case}"
    fields: list[tuple[str, object]] = [
        ("paraamr", v["paraamr"]),
        ("data", data),
        ("agg", "src-mean,drop-identical:ci"),
        ("sim", f"cos({similarity})"),
        ("bleu", bleu_part),
        ("iou", f"token-set,tok:parser,case:{case}"),
        ("ted", f"{VARIANTS[ted_variant].describe()},d3:{ted3_depth},unit-cost,words:no,pos:yes,"
                f"kernel:{ted_kernel}"),
        ("parser", parser_sig),
        ("versions", ",".join(f"{k}-{v[k]}" for k in PACKAGES)),
    ]  # fmt: skip
    if self_bleu:
        selfbleu = f"nltk-sentence,n:5,pad:repeat,order:rng(source-id),case:{case}"
        fields.insert(-2, ("selfbleu", selfbleu))
    return Signature.build(*fields)
