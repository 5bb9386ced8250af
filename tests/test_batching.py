"""Length-sorted batching (paraamr.utils.length_batches) against a plain restatement of its
rules on random lengths: the sorted order is kept, no batch passes its limits, and each batch
is as large as the limits allow (the next item would break one)."""

from __future__ import annotations

import random

import pytest

from paraamr.errors import ConfigError
from paraamr.utils import length_batches


@pytest.mark.parametrize("longest_first", [False, True])
@pytest.mark.parametrize("seed", range(20))
def test_token_budget_batches_keep_order_limits_and_are_greedy(seed, longest_first):
    rng = random.Random(seed)
    lengths = [rng.randint(1, 40) for _ in range(rng.randint(0, 60))]
    size, budget = rng.randint(1, 16), rng.randint(1, 120)
    batches = list(length_batches(lengths, size, longest_first=longest_first, max_tokens=budget))
    order = sorted(range(len(lengths)), key=lambda i: (-1 if longest_first else 1) * lengths[i])
    assert [i for b in batches for i in b] == order
    for k, b in enumerate(batches):
        padded = len(b) * max(lengths[i] for i in b)
        assert len(b) <= size and (padded <= budget or len(b) == 1)
        if k + 1 < len(batches):  # greedy: the next batch's first item did not fit
            nxt = b + [batches[k + 1][0]]
            assert len(nxt) > size or len(nxt) * max(lengths[i] for i in nxt) > budget


def test_without_a_budget_batches_are_fixed_size_and_bad_limits_fail():
    assert list(length_batches([3, 1, 2, 5, 4], 2)) == [[1, 2], [0, 4], [3]]
    with pytest.raises(ConfigError, match="max_tokens"):
        next(length_batches([1], 2, max_tokens=0))
    with pytest.raises(ConfigError, match="batch size"):
        next(length_batches([1], 0))
