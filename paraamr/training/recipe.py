"""The fast CPU fine-tuning recipe: frozen lower layers and bf16 autocast where the CPU has it.

Reported for another 2-core CPU with AVX512-BF16 (not rerun here; one SmolLM2-135M step, batch
8 x 96 tokens, AdamW): fp32 with every layer trained 8.23 s, bf16 autocast 5.04 s, the
embeddings and the lowest 20 of 30 blocks frozen 3.07 s, both 1.76 s. On a 2-core AVX2-only CPU
(measured, README "Performance of the SCPN recipe") bf16 is emulated and over ten times *slower*
than fp32, so the training configs ask for ``precision: auto``: bf16 where the CPU runs it
natively, fp32 elsewhere (:mod:`paraamr.precision`; ``make bench-scpn`` measures all four on the
machine at hand).

- :func:`freeze_lower_layers`: the input embeddings (and an output head tied to them) and the
  lowest ``n`` blocks of every block stack of a Hugging Face model stop training.
- :func:`resolve_precision`: the Lightning precision of a setting (:func:`paraamr.precision.resolve`
  on the Trainer's accelerator).
- :func:`training_threads`: the cores this process may use (``torch.set_num_threads``).
- :func:`train_new_embedding_rows`: added tokens (TOP labels) keep training under frozen
  embeddings.
- :func:`causal_answer_nll`: a decoder-only model's loss on the answer, the output head run on
  the answer positions only (SCPN and TOP).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from paraamr.errors import ConfigError
from paraamr.training.layout import IGNORE
from paraamr.utils import available_cores

__all__ = [
    "freeze_lower_layers",
    "block_stacks",
    "count_parameters",
    "resolve_precision",
    "training_threads",
    "train_new_embedding_rows",
    "merged_embeddings",
    "causal_answer_nll",
    "LOSS_NORMS",
    "mean_answer_tokens",
]

log = logging.getLogger(__name__)

_STACK_NAMES = ("layers", "h", "layer", "block")


def block_stacks(model: Any) -> list[tuple[str, Any]]:
    """``(name, ModuleList)`` of the model's transformer block stacks, outermost first: a
    decoder-only model has one (``model.layers``, ``transformer.h``), an encoder-decoder two.

    >>> import torch
    >>> m = torch.nn.Module(); m.layers = torch.nn.ModuleList([torch.nn.Linear(2, 2)] * 2)
    >>> [n for n, _ in block_stacks(m)]
    ['layers']
    """
    import torch

    out = []
    for name, mod in model.named_modules():
        is_stack = isinstance(mod, torch.nn.ModuleList) and name.rsplit(".", 1)[-1] in _STACK_NAMES
        if is_stack and not any(name.startswith(n + ".") for n, _ in out):  # not inside a block
            out.append((name, mod))
    return out


def count_parameters(model: Any) -> tuple[int, int]:
    """``(trainable, total)`` parameter counts (shared tensors counted once)."""
    seen: dict[int, Any] = {}
    for p in model.parameters():
        seen[id(p)] = p
    total = sum(p.numel() for p in seen.values())
    return sum(p.numel() for p in seen.values() if p.requires_grad), total


def freeze_lower_layers(model: Any, n: int | None) -> dict[str, int]:
    """Freeze the input embeddings and the lowest ``n`` blocks of each block stack.

    ``n=None`` or ``0`` freezes nothing. The embeddings of an encoder-decoder are shared, so they
    are frozen once; an output head tied to the embeddings is frozen with them (one tensor).
    Position embeddings (``wpe``, ``embed_positions``) are frozen too.

    Returns:
        ``{"frozen_blocks", "trainable", "total"}``.

    Raises:
        ConfigError: ``n`` is negative or not below the depth of a stack (nothing would train).
    """
    if not n:
        trainable, total = count_parameters(model)
        return {"frozen_blocks": 0, "trainable": trainable, "total": total}
    if n < 0:
        raise ConfigError(f"model.freeze_layers must be >= 0 or null, got {n}")
    stacks = block_stacks(model)
    if not stacks:
        raise ConfigError(
            f"model.freeze_layers={n}: no block stack found in {type(model).__name__} "
            f"(looked for ModuleLists named {_STACK_NAMES})"
        )
    for name, stack in stacks:
        if n >= len(stack):
            raise ConfigError(
                f"model.freeze_layers={n} freezes every block of {name} ({len(stack)} blocks): "
                f"use at most {len(stack) - 1}"
            )
    emb = model.get_input_embeddings()
    for p in emb.parameters():
        p.requires_grad_(False)
    for name, mod in model.named_modules():
        if name.rsplit(".", 1)[-1] in ("wpe", "embed_positions", "position_embeddings"):
            for p in mod.parameters():
                p.requires_grad_(False)
    for _, stack in stacks:
        for block in list(stack)[:n]:
            for p in block.parameters():
                p.requires_grad_(False)
    trainable, total = count_parameters(model)
    log.info("froze the embeddings and %d blocks per stack: %d of %d parameters train",
             n, trainable, total)  # fmt: skip
    return {"frozen_blocks": n * len(stacks), "trainable": trainable, "total": total}


def resolve_precision(precision: Any, accelerator: str | None) -> tuple[str, str | None]:
    """The Trainer's ``precision`` for a setting (``auto``, ``32``, ``bf16-mixed``, …) on the
    Trainer's ``accelerator`` (``None`` / ``cpu``, ``gpu`` / ``cuda``, ``auto``), and the note
    of :func:`paraamr.precision.resolve` (why it differs, or why it will be slow), else ``None``.

    >>> resolve_precision("32", "cpu"), resolve_precision("16-mixed", "cpu")
    (('32', None), ('32-true', '16-mixed runs fp32 on a CPU'))
    """
    from paraamr.precision import resolve

    device = accelerator or "cpu"
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    p = resolve(precision, device, "trainer.precision")
    return p.lightning, p.note


def training_threads(requested: int | None = None) -> int:
    """Set torch's intra-op threads to ``requested`` or to the cores this process may use."""
    import torch

    n = requested or available_cores()
    torch.set_num_threads(n)
    return n


def _split_modules():
    import torch

    class AddedRowsEmbedding(torch.nn.Module):
        """An embedding whose first ``base`` rows are frozen and whose added rows train: the
        added rows are a separate small parameter, so no gradient of the whole matrix is
        ever computed."""

        def __init__(self, base: torch.Tensor, extra: torch.Tensor) -> None:
            super().__init__()
            self.base = torch.nn.Parameter(base, requires_grad=False)
            self.extra = torch.nn.Parameter(extra.clone())

        @property
        def weight(self) -> torch.Tensor:
            return torch.cat([self.base, self.extra])

        @property
        def num_embeddings(self) -> int:
            return self.base.shape[0] + self.extra.shape[0]

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            n0 = self.base.shape[0]
            added = ids >= n0
            out = torch.nn.functional.embedding(ids.clamp(max=n0 - 1), self.base)
            if bool(added.any()):
                new = torch.nn.functional.embedding((ids - n0).clamp(min=0), self.extra)
                out = torch.where(added.unsqueeze(-1), new, out)
            return out

    class AddedRowsHead(torch.nn.Module):
        """The output head tied to an :class:`AddedRowsEmbedding`: logits over every row."""

        def __init__(self, emb: AddedRowsEmbedding) -> None:
            super().__init__()
            self.emb = [emb]  # a list: not registered twice as a submodule

        def forward(self, hidden: torch.Tensor) -> torch.Tensor:
            e = self.emb[0]
            return torch.cat([hidden @ e.base.T, hidden @ e.extra.T], dim=-1)

    return AddedRowsEmbedding, AddedRowsHead


def train_new_embedding_rows(model: Any, first: int) -> int:
    """Let the embedding rows from ``first`` on (tokens added to the vocabulary, such as TOP's
    labels) train while :func:`freeze_lower_layers` keeps the rows below frozen.

    The input embedding becomes a frozen matrix of the old rows plus a small trainable one of
    the added rows, and an output head tied to the embeddings reads both, so a training step
    costs what it costs with every row frozen (the gradient of the whole vocabulary matrix is
    never formed). :func:`merged_embeddings` turns it back into plain modules for
    ``save_pretrained``.

    Returns the number of rows that train (0: nothing changed: no added rows, or the
    embeddings are not frozen and train anyway).
    """
    emb = model.get_input_embeddings()
    rows = emb.weight.shape[0] - first
    if rows <= 0 or emb.weight.requires_grad:
        return 0
    split_cls, head_cls = _split_modules()
    head = model.get_output_embeddings()
    tied = head is not None and head.weight is emb.weight
    split = split_cls(emb.weight.data[:first], emb.weight.data[first:])
    model.set_input_embeddings(split)
    if tied:
        model.set_output_embeddings(head_cls(split))
    log.info("embedding rows %d-%d (added tokens) train; the other %d stay frozen",
             first, first + rows - 1, first)  # fmt: skip
    return rows


@contextlib.contextmanager
def merged_embeddings(model: Any) -> Iterator[Any]:
    """Within the block the model has plain embedding and (tied) head modules again, holding
    the trained rows (for ``save_pretrained``); the split modules come back after."""
    import torch

    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    if not hasattr(emb, "extra"):
        yield model
        return
    plain = torch.nn.Embedding(emb.num_embeddings, emb.base.shape[1])
    plain.weight = torch.nn.Parameter(emb.weight.detach().clone(), requires_grad=False)
    model.set_input_embeddings(plain)
    tied = head is not None and not isinstance(head, torch.nn.Linear)
    if tied:
        lin = torch.nn.Linear(plain.weight.shape[1], plain.weight.shape[0], bias=False)
        lin.weight = plain.weight
        model.set_output_embeddings(lin)
    try:
        yield model
    finally:
        model.set_input_embeddings(emb)
        if tied:
            model.set_output_embeddings(head)


def causal_answer_nll(model: Any, batch: dict[str, Any]) -> tuple[Any, int]:
    """``(summed token cross-entropy, tokens)`` of the answer of a decoder-only batch
    (``input_ids``, ``attention_mask``, ``labels`` with -100 on the prompt and padding).

    The output head runs only on the positions that predict an answer token (prompt and
    padding positions need no logits), which saves the head's cost (vocabulary x hidden per
    position) on most of the sequence; ``sum / tokens`` equals the model's own ``loss``
    (tested).
    """
    import torch

    labels = batch["labels"][:, 1:]
    keep = labels != IGNORE
    hidden = model.base_model(
        input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
    ).last_hidden_state[:, :-1]
    logits = model.get_output_embeddings()(hidden[keep])
    nll = torch.nn.functional.cross_entropy(logits.float(), labels[keep], reduction="sum")
    return nll, int(keep.sum())


#: how a training batch's summed answer cross-entropy is divided (``data.loss_norm``)
LOSS_NORMS = ("batch", "corpus")


def mean_answer_tokens(
    pairs: Sequence[tuple[str, str]], encode_batch: Callable[..., dict[str, Any]], chunk: int = 256
) -> float:
    """The mean answer tokens per pair, counted as the loss counts them (``labels`` other than
    -100 after ``encode_batch``'s truncation).

    ``data.loss_norm: corpus`` divides every training batch's summed cross-entropy by
    ``batch_size`` x this, one number for the whole run, so every answer token weighs the same
    whichever batch it falls in. The default (``batch``) divides by the batch's own answer
    tokens, which gives a token of a batch of short answers more weight than one of a batch of
    long answers; with batches grouped by length that gap is large (a batch of 8 one-line graphs
    against a batch of 8 long ones).

    >>> import torch
    >>> enc = lambda s, t: {"labels": torch.tensor([[-100] + [1] * len(x) + [-100] * (3 - len(x))
    ...                                             for x in t])}
    >>> mean_answer_tokens([("a", "xy"), ("b", "xyz"), ("c", "x")], enc, chunk=2)
    2.0
    """
    if not pairs:
        raise ValueError("no pairs to count answer tokens in")
    total = 0
    for i in range(0, len(pairs), chunk):
        part = pairs[i : i + chunk]
        labels = encode_batch([s for s, _ in part], [t for _, t in part])["labels"]
        total += int((labels != IGNORE).sum())
    return total / len(pairs)
