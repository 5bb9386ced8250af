"""Greedy answers from OpenVINO GenAI's continuous-batching pipeline (``engine.name=genai``).

Where the ``openvino`` engine runs the project's own Python loop over the exported graph, this
one hands the whole decoding to OpenVINO GenAI's C++ scheduler: the prompts are batched and
re-batched as answers finish (paged key/value cache), the next token is chosen in C++, and the
parser's grammar (:func:`paraamr.amrlm.grammar.graph_grammar`) is enforced by the XGrammar
backend built into the pipeline. Prompts go in as token ids, answers come back as token ids,
so the Hugging Face tokenizer of the model reads and writes every text and only the pipeline's
construction reads the tokenizer IR beside the model's graph.

Per-row settings: each prompt carries its own answer limit (the parser's ``answer_cap``), so a
batch is one call. A rule the pipeline cannot run is refused before any decoding
(:func:`paraamr.lms.engines.check_engine` and the module's ``set_engine``): beam search and the
parser's ``stop_loops``. The generator's word-level no-repeat rule does not run inside the
pipeline (its own ``no_repeat_ngram_size`` applies to beam search only: greedy answers repeat
under it, tested); :class:`paraamr.amrlm.module.AMRModule` decodes again, under the rule and
in the project's loop, the answers the rule would have changed.

Precision: ``f32`` sets OpenVINO's inference precision hint and the key/value cache to f32 (the
CPU plugin otherwise picks bf16 on a CPU with AMX and a u8 cache); ``bf16`` sets both to bf16.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["GenAIPipeline", "TOKENIZER_FILE", "PIPELINE_BATCH"]

TOKENIZER_FILE = "openvino_tokenizer.xml"
#: the paged key/value cache's size in GB (a 135M model: ~46 kB per token in f32, so 2 GB hold
#: ~45k tokens: 64 rows of 700 tokens)
CACHE_GB = 2
#: the fewest prompts :func:`paraamr.lms.answers.answers` hands the pipeline a call: its
#: scheduler batches them itself, and a small call leaves its batch short as answers finish
PIPELINE_BATCH = 256


class GenAIPipeline:
    """An export folder (:func:`paraamr.lms.export.openvino_ir`) under OpenVINO GenAI's
    ``ContinuousBatchingPipeline`` on the CPU.

    Args:
        folder: the export folder (the model's IR and its tokenizer IR).
        precision: ``f32`` or ``bf16``.
        threads: inference threads (``None``: every core the process may use).
    """

    def __init__(self, folder: str | Path, precision: str = "f32", threads: int | None = None):
        import openvino_genai as og

        from paraamr.lms.engines import refuse_bf16_on_one_core
        from paraamr.lms.export import IR_FILE, ExportError

        refuse_bf16_on_one_core(precision, threads)
        folder = Path(folder)
        for name in (IR_FILE, TOKENIZER_FILE):
            if not (folder / name).is_file():
                raise ExportError(f"{folder}: no {name} (export it again: delete the folder)")
        props: dict[str, Any] = {"INFERENCE_PRECISION_HINT": precision,
                                 "KV_CACHE_PRECISION": precision}  # fmt: skip
        if threads:
            props["INFERENCE_NUM_THREADS"] = int(threads)
        scheduler = og.SchedulerConfig()
        scheduler.cache_size = CACHE_GB
        try:
            self.pipe = og.ContinuousBatchingPipeline(str(folder), scheduler, "CPU", props)
        except RuntimeError as e:
            first = (str(e).strip().splitlines() or ["?"])[0]
            raise ExportError(f"{folder}: OpenVINO GenAI cannot load it ({first})") from None
        self.folder = folder

    def answers(
        self,
        prompts: Sequence[Sequence[int]],
        limits: Sequence[int],
        eos_token_id: int,
        grammar: str | None = None,
    ) -> list[list[int]]:
        """Each prompt's greedy answer ids (the end token left out), at most ``limits[i]``
        tokens; ``grammar``: EBNF every answer follows (start rule ``root``)."""
        import numpy as np
        import openvino as ov
        import openvino_genai as og

        if len(prompts) != len(limits):
            raise ValueError(f"{len(prompts)} prompts but {len(limits)} limits")
        if not prompts:
            return []
        tensors, configs = [], []
        for ids, limit in zip(prompts, limits, strict=True):
            tensors.append(ov.Tensor(np.asarray([list(ids)], dtype=np.int64)))
            cfg = og.GenerationConfig()
            cfg.max_new_tokens = int(limit)
            cfg.do_sample = False
            cfg.eos_token_id = int(eos_token_id)
            cfg.stop_token_ids = {int(eos_token_id)}
            if grammar is not None:
                structured = og.StructuredOutputConfig()
                structured.grammar = grammar
                cfg.structured_output_config = structured
            configs.append(cfg)
        results = self.pipe.generate(tensors, configs)
        out = []
        for r in results:
            ids = list(r.m_generation_ids[0]) if r.m_generation_ids else []
            out.append(ids[:-1] if ids and ids[-1] == eos_token_id else ids)
        return out
