"""The signature of Table 2 metric numbers (a :class:`paraamr.signature.Signature`).

Examples:
    >>> s = metric_signature(similarity="minilm", parser_sig="gold(...)", bleu="nltk-sentence",
    ...                      ted_variant="paraamr", ted_kernel="edist", ted3_depth=3, data="x")
    >>> list(s.fields)
    ['paraamr', 'data', 'agg', 'sim', 'bleu', 'iou', 'ted', 'parser', 'versions']
    >>> s.fields["agg"], s.fields["sim"]
    ('src-mean,drop-identical:ci', 'cos(minilm)')
"""

from __future__ import annotations

from paraamr.signature import Signature, package_versions, versions_field

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

    Each field is the ``signature()`` of the metric object that computes the number
    (:mod:`paraamr.metrics.pairwise`).

    Raises:
        ConfigError: for an unknown TED variant or BLEU variant.
    """
    from paraamr.metrics.pairwise import Bleu, SelfBleu, TokenIoU, TreeEdit, similarity_field

    v = package_versions()
    fields: list[tuple[str, object]] = [
        ("paraamr", v["paraamr"]),
        ("data", data),
        ("agg", "src-mean,drop-identical:ci"),
        ("sim", similarity_field(similarity)),
        ("bleu", Bleu(bleu, lowercase).signature()),
        ("iou", TokenIoU(lowercase).signature()),
        ("ted", TreeEdit(ted_variant, ted3_depth, ted_kernel).signature()),
        ("parser", parser_sig),
        ("versions", versions_field()),
    ]
    if self_bleu:
        fields.insert(-2, ("selfbleu", SelfBleu(lowercase).signature()))
    return Signature.build(*fields)
