"""The paper's human evaluation (Table 4) as a kit: draw a blind sample of several corpora
(:mod:`~paraamr.humaneval.sample`), write the page people answer on and the MTurk batch
(:mod:`~paraamr.humaneval.kit`), read the answers (:mod:`~paraamr.humaneval.answers`) and score
them (:mod:`~paraamr.humaneval.score`). The questions' wording is in
:mod:`~paraamr.humaneval.questions`; ``paraamr humaneval`` runs it all (docs/human-evaluation.md).
"""
