"""A model's answers for many prompts: length-sorted batches through its ``generate``, read
back in input order, with a progress bar. Every stage that decodes many prompts (the AMR parser
and generator, the builder's wrappers of them, ``paraamr amr parse / generate``) goes through
this one function.

>>> class Echo:
...     def generate(self, batch):
...         return [p.upper() for p in batch]
>>> answers(Echo(), ["a bb", "c"], batch_size=1, progress=False)
['A BB', 'C']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paraamr.utils import map_length_batches

__all__ = ["answers"]


def answers(
    module: Any,
    prompts: Sequence[str],
    batch_size: int = 16,
    progress: bool = True,
    desc: str | None = None,
) -> list[str]:
    """``module.generate``'s answer per prompt, batched by length, in input order. ``desc``:
    the progress bar's label (``None``: the module's ``direction`` setting, else ``answers``).
    A module decoding on a pipeline that batches by itself (``engine_pipeline``, OpenVINO
    GenAI's continuous batching) gets at least :data:`paraamr.lms.genai.PIPELINE_BATCH`
    prompts a call, so its scheduler keeps its batch full."""
    from tqdm import tqdm

    if getattr(module, "engine_pipeline", None) is not None:
        from paraamr.lms.genai import PIPELINE_BATCH

        batch_size = max(batch_size, PIPELINE_BATCH)

    label = desc or getattr(module, "settings", {}).get("direction", "answers")
    bar = tqdm(total=len(prompts), desc=label, disable=not progress)

    def run(batch: list[str]) -> list[str]:
        out = module.generate(batch)
        bar.update(len(batch))
        return out

    try:
        return map_length_batches(list(prompts), run, batch_size)
    finally:
        bar.close()
