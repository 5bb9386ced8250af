"""Diversity metrics: semantic (cosine), lexical (BLEU, IoU), syntactic (TED)."""

from paraamr.metrics.lexical import BLEU_VARIANTS, bleu_nltk, token_iou
from paraamr.metrics.ted import VARIANTS, tree_edit_distance

__all__ = ["BLEU_VARIANTS", "VARIANTS", "bleu_nltk", "token_iou", "tree_edit_distance"]
