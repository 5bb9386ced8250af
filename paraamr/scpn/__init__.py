"""Syntactically controlled paraphrase generation (ParaAMR paper §5.2, Table 6).

Input formats (:mod:`~paraamr.scpn.formats`), training pairs (:mod:`~paraamr.scpn.pairs`), model
loading (:mod:`~paraamr.lms.loading`), the Lightning module and data (:mod:`~paraamr.scpn.module`,
:mod:`~paraamr.scpn.data`), training (:mod:`~paraamr.scpn.train`), template -> full parse
(:mod:`~paraamr.scpn.parse_generator`), the user-facing paraphraser and its command
(:mod:`~paraamr.scpn.paraphrase`, :mod:`~paraamr.scpn.cli`), evaluation
(:mod:`~paraamr.scpn.evaluate`) and the Table 6 jobs (:mod:`~paraamr.scpn.job`).
"""
