"""The paper's two human-evaluation questions (ParaAMR §4.4, Appendix A), word for word.

One description serves the annotation page, the MTurk template and the scorer, so what people
read and what the scorer accepts cannot drift apart. The answer field names (``similarity``,
``diversity``) are the ones MTurk batch results carry as ``Answer.similarity`` and
``Answer.diversity``.

>>> [q.field for q in QUESTIONS]
['similarity', 'diversity']
>>> SIMILARITY.choices[0]
(3, 'The two sentences are paraphrases of each other. Their meanings are near-equivalent.')
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Question", "QUESTIONS", "SIMILARITY", "DIVERSITY", "SCORES", "INSTRUCTIONS"]

#: the 3-point scale of both questions, best first (as the paper lists them)
SCORES = (3, 2, 1)


@dataclass(frozen=True)
class Question:
    """One 3-point question: its answer field, title, prompt and the text of each score."""

    field: str
    title: str
    prompt: str
    choices: tuple[tuple[int, str], ...]  # (score, text), 3 first


SIMILARITY = Question(
    field="similarity",
    title="Semantic similarity",
    prompt="How similar are the meanings of the two sentences?",
    choices=(
        (3, "The two sentences are paraphrases of each other. Their meanings are near-equivalent."),
        (2, "The two sentences have similar meanings but some unimportant details differ."),
        (
            1,
            "Some important information differs or is missing, which alters the intent or meaning.",
        ),
    ),
)

DIVERSITY = Question(
    field="diversity",
    title="Syntactic diversity",
    prompt="How different are the ways the two sentences are written?",
    choices=(
        (
            3,
            "The two sentences are written in very different ways or have much different sentence "
            "structures. (For example, \u201cWe will go fishing if tomorrow is sunny.\u201d and "
            "\u201cIf tomorrow is sunny, we will go fishing\u201d)",
        ),
        (
            2,
            "Only some words in the two sentences differ. (For example, \u201cWe will go fishing "
            "if tomorrow is sunny.\u201d and \u201cWe are going to go fishing if tomorrow is "
            "sunny.\u201d)",
        ),
        (1, "The two sentences are almost the same."),
    ),
)

QUESTIONS = (SIMILARITY, DIVERSITY)

#: shown above the questions on the page and in the MTurk template
INSTRUCTIONS = (
    "You will read a sentence and a rewritten version of it. Answer two questions about the pair: "
    "how similar their meanings are, and how different the ways they are written are. Judge the "
    "two questions separately: a rewrite can keep the meaning and change the structure, or keep "
    "the words and change the meaning."
)
