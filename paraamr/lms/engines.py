"""The engine a trained decoder-only model decodes on: ``hf`` (PyTorch, the model as trained),
``openvino`` (its OpenVINO IR, :func:`paraamr.lms.export.openvino_ir`, run by the OpenVINO
runtime) or ``genai`` (the same IR under OpenVINO GenAI's continuous-batching pipeline,
:class:`paraamr.lms.genai.GenAIPipeline`).

``hf`` and ``openvino`` run the project's own greedy loop
(:func:`paraamr.lms.greedy.greedy_compact`: finished rows leave the batch, the logits
processors of the model's decoding applied at every step), so the constraints of the AMR
parser (balanced graphs or the graph grammar, answer caps) and the generator's no-repeat rule
hold on both; only the forward passes differ. ``genai`` decodes in C++: the parser runs the
graph grammar (:mod:`paraamr.amrlm.grammar`, XGrammar inside the pipeline), answer caps are
per-row length limits, and a generator's answer that its word n-gram rule would have changed
is decoded again under the rule by the project's loop on the same IR. ``openvino`` and
``genai`` run greedy decoding only (beam search stays on ``hf``).

Settings (``conf/engine/``): ``name`` (``hf`` | ``openvino`` | ``genai``), ``precision``
(``f32`` | ``bf16``: OpenVINO's inference precision hint) and ``threads`` (``null``:
OpenVINO's default).
OpenVINO 2026.4.1 stops the process with a floating-point exception on bf16 when it runs on one
core (one inference thread, or a process pinned to one core) on a 2-core Xeon with AMX, so bf16
on fewer than two cores is refused.

>>> engine_label({"name": "hf"}), engine_label({"name": "openvino", "precision": "bf16"})
('', ',engine=openvino-bf16')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from paraamr.errors import ConfigError

__all__ = ["ENGINES", "PRECISIONS", "check_engine", "engine_label", "OpenVINOSteps",
           "refuse_bf16_on_one_core"]  # fmt: skip

ENGINES = ("hf", "openvino", "genai")
PRECISIONS = ("f32", "bf16")


def check_engine(engine: Mapping[str, Any] | None, what: str = "engine") -> dict[str, Any]:
    """``engine``'s settings, checked (``None``: ``hf``); a :class:`ConfigError` naming the key.

    >>> check_engine(None)
    {'name': 'hf', 'precision': 'f32', 'threads': None}
    >>> check_engine({"name": "vllm"})
    Traceback (most recent call last):
    ...
    paraamr.errors.ConfigError: engine.name must be one of ('hf', 'openvino', 'genai'), got 'vllm'
    """
    e = {"name": "hf", "precision": "f32", "threads": None, **dict(engine or {})}
    if e["name"] not in ENGINES:
        raise ConfigError(f"{what}.name must be one of {ENGINES}, got {e['name']!r}")
    if e["precision"] not in PRECISIONS:
        raise ConfigError(f"{what}.precision must be one of {PRECISIONS}, got {e['precision']!r}")
    if e["threads"] is not None and int(e["threads"]) < 1:
        raise ConfigError(f"{what}.threads must be >= 1 or null, got {e['threads']!r}")
    if e["name"] != "hf" and e["precision"] == "bf16" and e["threads"] == 1:
        raise ConfigError(f"{what}: OpenVINO bf16 on one thread stops with a floating-point "
                          "exception; use threads >= 2 or precision f32")  # fmt: skip
    return {k: e[k] for k in ("name", "precision", "threads")}


def engine_label(engine: Mapping[str, Any] | None) -> str:
    """What a signature adds for the engine (nothing for ``hf``, so old names stay)."""
    e = check_engine(engine)
    return "" if e["name"] == "hf" else f",engine={e['name']}-{e['precision']}"


def refuse_bf16_on_one_core(precision: str, threads: int | None) -> None:
    """A :class:`ConfigError` for OpenVINO bf16 on fewer than two cores (the threads asked
    for, or the cores this process may use), which stops the process on a CPU with AMX."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if precision == "bf16" and min(int(threads or cores or 1), cores or 1) < 2:
        raise ConfigError("engine: OpenVINO bf16 on one core stops with a floating-point "
                          f"exception ({cores} core(s) this process may use, threads "
                          f"{threads}); use precision f32")  # fmt: skip


class OpenVINOSteps:
    """The decoding steps of an exported model on the OpenVINO runtime (the interface of
    :class:`paraamr.lms.greedy.HFSteps`): the prompt's pass, then one token per row; the
    key/value cache lives in the model's state, and ``beam_idx`` picks the rows that go on.

    Args:
        folder: an export folder (:func:`paraamr.lms.export.openvino_ir`).
        precision: ``f32`` or ``bf16`` (the inference precision hint).
        threads: inference threads (``None``: OpenVINO's default, every core).
    """

    def __init__(self, folder: str | Path, precision: str = "f32", threads: int | None = None):
        import openvino as ov

        from paraamr.lms.export import IR_FILE, ExportError

        refuse_bf16_on_one_core(precision, threads)
        xml = Path(folder) / IR_FILE
        if not xml.is_file():
            raise ExportError(f"{folder}: no {IR_FILE} (export it again: delete the folder)")
        config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": precision}
        if threads:
            config["INFERENCE_NUM_THREADS"] = int(threads)
        core = ov.Core()
        try:
            self.compiled = core.compile_model(core.read_model(xml), "CPU", config)
        except RuntimeError as e:
            first = (str(e).strip().splitlines() or ["?"])[0]
            raise ExportError(f"{xml}: OpenVINO cannot load it ({first})") from None
        self.request = self.compiled.create_infer_request()

    def _logits(self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor,
                beam: torch.Tensor) -> torch.Tensor:  # fmt: skip
        self.request.infer({
            "input_ids": ids.numpy(), "attention_mask": mask.numpy(),
            "position_ids": positions.numpy(), "beam_idx": beam.to(torch.int32).numpy(),
        })  # fmt: skip
        out = self.request.get_tensor("logits").data
        return torch.from_numpy(out[:, -1, :].copy()).float()

    def first(self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """The last position's logits of each prompt (left-padded); a fresh cache."""
        self.request.reset_state()
        return self._logits(ids, mask, positions, torch.arange(ids.shape[0]))

    def next(self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor,
             keep: torch.Tensor | None) -> torch.Tensor:  # fmt: skip
        """The logits after one more token per row; ``keep``: the rows that go on."""
        beam = keep if keep is not None else torch.arange(ids.shape[0])
        return self._logits(ids, mask, positions, beam)
