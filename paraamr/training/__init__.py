"""Shared training pieces: resumable data, callbacks (periodic evaluation, finite-loss guard),
loggers, and :func:`~paraamr.training.fit.fit` from a Hydra config.

A trainer is a LightningModule + a data module (:class:`~paraamr.training.data.ResumableDataModule`)
+ configs in ``conf/{model,data,trainer,callbacks,logger}/``.
"""
