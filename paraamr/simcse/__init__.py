"""Supervised SimCSE training on paraphrase corpora (ParaAMR paper §5.1, Table 5).

- :mod:`paraamr.simcse.loss`: the contrastive loss on plain tensors;
- :mod:`paraamr.simcse.data`: triplets from corpora / SimCSE CSV / pair TSV, the data module;
- :mod:`paraamr.simcse.module`: the Lightning module, STS-B dev evaluation, export to
  sentence-transformers;
- :mod:`paraamr.simcse.train`: ``train(cfg)`` behind ``experiments/train_simcse.py``.

Heavy imports (Lightning, transformers) happen when the submodules are imported, not here.
"""

from __future__ import annotations

from paraamr.simcse.loss import SimCSELoss, simcse_logits, simcse_loss

__all__ = ["SimCSELoss", "simcse_logits", "simcse_loss"]
