"""One precision rule for every model the project runs: training, the perplexity LM, the
similarity encoder and the builder's seq2seq models.

A setting is ``auto``, ``fp32``, ``bf16`` or ``fp16`` (Lightning's spellings too: ``32``,
``32-true``, ``bf16-mixed``, ``bf16-true``, ``16-mixed``, ``16``; ``None`` is ``fp32``):

- ``auto``: bf16 where the device runs it natively (a CUDA GPU with bf16, a CPU with
  AVX512-BF16 or AMX: :func:`cpu_bf16_support`), fp32 elsewhere. The training configs'
  default: a bf16 CPU trains ~5x faster with frozen lower blocks, an AVX2 one would be slower.
- ``bf16``: honoured. On a GPU the weights are bf16; on a CPU they stay fp32 and the matmuls run
  under bf16 autocast (:attr:`Precision.autocast`) — emulated, and slower than fp32, where the
  CPU has no native bf16 (said in :attr:`Precision.note`).
- ``fp16``: on a GPU; on a CPU fp32 (half-precision matmuls there are neither fast nor stable;
  said in the note).
- ``fp32``.

>>> resolve("fp32", "cpu").name, resolve("bf16", "cpu").autocast, resolve("bf16", "cuda").weights
('fp32', True, 'bf16')
>>> resolve("16-mixed", "cpu").name, resolve(None, "cuda").lightning
('fp32', '32-true')
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from paraamr.errors import ConfigError

__all__ = ["Precision", "resolve", "apply", "native_bf16", "cpu_bf16_support", "TORCH_DTYPES",
           "SETTINGS"]  # fmt: skip

#: precision name -> torch dtype attribute
TORCH_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
#: every spelling a setting may take -> its precision (``auto`` is resolved per device)
SETTINGS = {
    "auto": "auto",
    "fp32": "fp32", "32": "fp32", "32-true": "fp32",
    "bf16": "bf16", "bf16-mixed": "bf16", "bf16-true": "bf16",
    "fp16": "fp16", "16": "fp16", "16-mixed": "fp16", "16-true": "fp16",
}  # fmt: skip
_LIGHTNING = {"fp32": "32-true", "bf16": "bf16-mixed", "fp16": "16-mixed"}


@dataclass(frozen=True)
class Precision:
    """What a model runs in on one device.

    Attributes:
        name: ``fp32``, ``bf16`` or ``fp16``: the precision of the matmuls.
        device: ``cpu`` or ``cuda``.
        note: why this differs from the setting, or why it will be slow; ``None`` when neither.
        setting: the setting as given (a Lightning spelling is kept for the Trainer).
        cpu_weights: bf16 on a CPU casts the weights too instead of autocasting
            (:func:`resolve` with ``inference=True``).
    """

    name: str
    device: str
    note: str | None = None
    setting: str = "auto"
    cpu_weights: bool = False

    @property
    def autocast(self) -> bool:
        """bf16 on a CPU: fp32 weights, bf16 matmuls under :func:`torch.autocast` (unless
        :attr:`cpu_weights`)."""
        return self.name == "bf16" and self.device == "cpu" and not self.cpu_weights

    @property
    def weights(self) -> str:
        """The dtype the weights are cast to (``fp32``: none)."""
        return "fp32" if self.autocast else self.name

    @property
    def label(self) -> str:
        """The name signatures carry: ``fp32``, ``bf16``, ``fp16`` or ``bf16-autocast``."""
        return "bf16-autocast" if self.autocast else self.name

    @property
    def lightning(self) -> str:
        """The Trainer's ``precision``: the setting's own spelling when it resolved unchanged
        (``bf16-true`` stays), else ``32-true`` / ``bf16-mixed`` / ``16-mixed``."""
        if self.autocast:  # fp32 weights on a CPU, whatever the spelling (bf16-true too)
            return "bf16-mixed"
        if SETTINGS.get(self.setting) == self.name and self.setting not in TORCH_DTYPES:
            return self.setting
        return _LIGHTNING[self.name]

    def torch_dtype(self):
        """The torch dtype of :attr:`weights`."""
        import torch

        return getattr(torch, TORCH_DTYPES[self.weights])

    def context(self):
        """A context that runs the matmuls in :attr:`name`: bf16 autocast on a CPU, else none
        (GPU half precision is in the weights)."""
        if not self.autocast:
            return nullcontext()
        import torch

        return torch.autocast("cpu", dtype=torch.bfloat16)


def _device_type(device: Any) -> str:
    return "cuda" if str(device).startswith("cuda") or str(device) == "gpu" else "cpu"


def resolve(setting: Any, device: Any = "cpu", what: str = "precision",
            inference: bool = False) -> Precision:  # fmt: skip
    """The :class:`Precision` that ``setting`` runs in on ``device`` (``cpu``, ``cuda[:N]`` or
    Lightning's ``gpu``). ``what`` names the setting in errors. Unknown settings are a
    :class:`~paraamr.errors.ConfigError`. ``inference``: bf16 on a CPU casts the weights too
    (:attr:`Precision.cpu_weights`): decoding runs many small steps, and autocast would cast
    every weight again at each one (``make bench-decode``).

    Examples:
        >>> p = resolve("bf16-mixed", "gpu")
        >>> p.name, p.device, p.lightning, p.note
        ('bf16', 'cuda', 'bf16-mixed', None)
        >>> resolve("fp16", "cpu").note
        'fp16 runs fp32 on a CPU'
        >>> p = resolve("bf16", "cpu", inference=True)
        >>> p.autocast, p.weights, p.label
        (False, 'bf16', 'bf16')
        >>> resolve("half", "cpu", "lm.dtype")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        paraamr.errors.ConfigError: lm.dtype: 'half' is not one of auto, fp32, 32, ...
    """
    key = "fp32" if setting is None else str(setting)
    if key not in SETTINGS:
        raise ConfigError(f"{what}: {setting!r} is not one of {', '.join(SETTINGS)} (or null)")
    device = _device_type(device)
    name = SETTINGS[key]
    note = None
    if name == "auto":
        name = "bf16" if native_bf16(device) else "fp32"
    elif name == "fp16" and device == "cpu":
        name, note = "fp32", f"{key} runs fp32 on a CPU"
    elif name == "bf16" and device == "cpu":
        native, why = cpu_bf16_support()
        notes = [f"{key} on a CPU runs as bf16-mixed (fp32 weights, bf16 autocast)"
                 ] if key == "bf16-true" and not inference else []  # fmt: skip
        if not native:
            notes.append(f"{key} on this CPU is slower than fp32: {why}")
        note = "; ".join(notes) or None
    return Precision(name, device, note, key, inference and name == "bf16" and device == "cpu")


def apply(model: Any, setting: Any, device: Any, what: str = "precision",
          inference: bool = False) -> Precision:  # fmt: skip
    """:func:`resolve` ``setting`` on ``device``, log its note as a warning naming ``what``, and
    cast ``model`` in place to the precision's weights (fp32 casts back); returns the
    precision."""
    import logging

    p = resolve(setting, device, what, inference)
    if p.note:
        logging.getLogger(__name__).warning("%s: %s", what, p.note)
    model.to(p.torch_dtype())
    return p


def native_bf16(device: str) -> bool:
    """Whether ``device`` runs bf16 natively: a CUDA GPU with bf16, or a CPU with AVX512-BF16
    or AMX (:func:`cpu_bf16_support`); elsewhere bf16 is emulated and slower than fp32."""
    import torch

    if _device_type(device) == "cuda":
        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    return cpu_bf16_support()[0]


def cpu_bf16_support() -> tuple[bool, str]:
    """``(supported, reason)``: whether this CPU runs bf16 natively (AVX512-BF16 or AMX)."""
    import torch

    cpu = getattr(torch, "cpu", None)
    checks = (("_is_avx512_bf16_supported", "AVX512-BF16"), ("_is_amx_tile_supported", "AMX"))
    for fn, name in checks:
        f = getattr(cpu, fn, None)
        try:
            if f is not None and f():
                return True, f"the CPU has {name}"
        except RuntimeError:  # pragma: no cover - torch builds without the check
            continue
    cap = torch.backends.cpu.get_cpu_capability()
    return False, f"the CPU has no AVX512-BF16 or AMX (torch capability {cap}): bf16 is emulated"
