"""Syntactically controlled paraphrase generation (ParaAMR paper §5.2, Table 6).

Input formats (:mod:`~paraamr.scpn.formats`), training pairs (:mod:`~paraamr.scpn.pairs`), the
Lightning module and data (:mod:`~paraamr.scpn.module`, :mod:`~paraamr.scpn.data`), training
(:mod:`~paraamr.scpn.train`), template -> full parse (:mod:`~paraamr.scpn.parse_generator`),
the user-facing paraphraser (:mod:`~paraamr.scpn.paraphrase`) and evaluation
(:mod:`~paraamr.scpn.evaluate`).
"""
