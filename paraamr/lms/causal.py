"""Batched perplexity under any Hugging Face causal LM.

Each sentence is scored after the tokenizer's beginning-of-text token (GPT-2 ``<|endoftext|>``,
SmolLM2 ``<|im_start|>``): perplexity = exp(mean negative log-likelihood of the sentence's own
tokens), the BOS token itself not counted. Sentences are tokenized without special tokens, sorted
by token count into batches (little padding), padded on the right and the padding masked out of
both attention and loss, so a sentence's perplexity does not depend on its batch.

>>> import math
>>> round(math.exp(mean_nll([0.5, 1.5])), 4)  # perplexity from token NLLs
2.7183
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

from paraamr.errors import ConfigError
from paraamr.precision import resolve
from paraamr.utils import length_batches

__all__ = ["CausalLMScorer", "mean_nll"]

log = logging.getLogger(__name__)


def mean_nll(token_nlls: Sequence[float]) -> float:
    """Mean of a sentence's token negative log-likelihoods (``nan`` when there are none).

    >>> mean_nll([])
    nan
    """
    return math.fsum(token_nlls) / len(token_nlls) if token_nlls else float("nan")


class CausalLMScorer:
    """Perplexity of sentences under a causal LM, batched and length-sorted.

    Args:
        name_or_path: a hub name or local Hugging Face causal-LM dir.
        batch_size: sentences per forward pass.
        device: torch device (``None``: cuda when available, else cpu).
        max_length: sentence tokens kept (longer sentences are cut; counted in ``n_truncated``),
            at most the model's positions.
        label: the model's name in signatures (default ``name_or_path``).
        dtype: ``fp16`` / ``bf16`` run the model in half precision on a GPU; on a CPU ``bf16``
            keeps fp32 weights and runs under bf16 autocast (fast with AVX512-BF16 or AMX,
            slow where bf16 is emulated; ``fp16`` is ignored there); ``auto``: bf16 where the
            hardware runs it natively, else fp32. Log-probabilities are always taken in fp32.
        max_tokens: a token budget per forward pass (``None``: ``batch_size`` sentences each):
            a batch holds at most ``batch_size`` sentences and at most ``max_tokens`` padded
            tokens (:func:`paraamr.utils.length_batches`), so many short sentences share a pass
            and long ones do not run out of memory.

    Without a BOS token the first token has nothing to be predicted from and is not scored.
    """

    def __init__(
        self,
        name_or_path: str,
        batch_size: int = 16,
        device: str | None = None,
        max_length: int = 256,
        label: str | None = None,
        dtype: str | None = None,
        max_tokens: int | None = None,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        # one rule (paraamr.precision): a CPU keeps fp32 weights and runs bf16 as autocast
        self.precision = resolve(dtype, self.device, "lm.dtype")
        if self.precision.note:
            log.warning("lm.dtype: %s", self.precision.note)
        self.autocast, self.dtype = self.precision.autocast, self.precision.weights
        self.tok = AutoTokenizer.from_pretrained(name_or_path)
        self.model = AutoModelForCausalLM.from_pretrained(
            name_or_path, dtype=self.precision.torch_dtype()
        )
        self.model.to(self.device).eval()
        self.name, self.label = name_or_path, label or name_or_path
        self.batch_size, self.max_length = batch_size, max_length
        if max_tokens is not None and int(max_tokens) < 1:
            raise ConfigError(f"lm.max_tokens must be >= 1 or null, got {max_tokens!r}")
        self.max_tokens = None if max_tokens is None else int(max_tokens)
        bos = self.tok.bos_token_id
        self.prefix_ids = [bos] if bos is not None else []
        cfg = self.model.config
        positions = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", 0)
        if positions:  # the model cannot see more tokens than it has positions
            self.max_length = min(max_length, positions - len(self.prefix_ids))
        self.n_truncated = 0

    def signature(self) -> str:
        import transformers

        # "<|im_start|>" -> "<im_start>": '|' separates a Signature's fields
        bos = self.tok.bos_token.replace("|", "") if self.prefix_ids else "none"
        return (
            f"ppl({self.label},after={bos},tokens-mean,"
            f"{self.precision.label},max_len={self.max_length},"
            f"transformers-{transformers.__version__})"
        )

    def _ids(self, sentence: str) -> list[int]:
        ids = self.tok(sentence, add_special_tokens=False)["input_ids"]
        if len(ids) > self.max_length:
            self.n_truncated += 1
            ids = ids[: self.max_length]
        return self.prefix_ids + ids

    def nlls(self, sentences: Sequence[str], batch_size: int | None = None) -> list[float]:
        """Mean token NLL (nats) of each sentence, in input order (``nan`` for empty ones)."""
        import torch
        import torch.nn.functional as F

        bs = batch_size or self.batch_size
        ids = [self._ids(s) for s in sentences]
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        out = [float("nan")] * len(ids)
        with torch.inference_mode():
            lens = [len(x) for x in ids]
            for batch in length_batches(lens, bs, longest_first=True, max_tokens=self.max_tokens):
                idx = [i for i in batch if len(ids[i]) >= 2]
                if not idx:
                    continue
                width = max(len(ids[i]) for i in idx)
                inp = torch.full((len(idx), width), pad, dtype=torch.long)
                mask = torch.zeros((len(idx), width), dtype=torch.long)
                for row, i in enumerate(idx):
                    inp[row, : len(ids[i])] = torch.tensor(ids[i])
                    mask[row, : len(ids[i])] = 1
                inp, mask = inp.to(self.device), mask.to(self.device)
                with self.precision.context():
                    logits = self.model(input_ids=inp, attention_mask=mask).logits
                nll = F.cross_entropy(
                    logits[:, :-1].float().transpose(1, 2), inp[:, 1:], reduction="none"
                )
                target = mask[:, 1:].float()
                means = (nll * target).sum(1) / target.sum(1)
                for row, i in enumerate(idx):
                    out[i] = float(means[row])
        return out

    def perplexities(self, sentences: Sequence[str], batch_size: int | None = None) -> list[float]:
        """exp(mean token NLL) of each sentence, in input order (``nan`` for empty ones)."""
        return [math.exp(x) if x == x else x for x in self.nlls(sentences, batch_size)]
