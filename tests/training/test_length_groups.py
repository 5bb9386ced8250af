"""Length-grouped training batches: every example once per epoch, batches of similar length,
resumable into the same order."""

from __future__ import annotations

import random

import pytest

from paraamr.training.data import ListDataset, PairDataModule, ResumableSampler, group_by_length


def _zip(sources, targets):
    return list(zip(sources, targets, strict=True))


def _padded(batches: list[list[int]], lengths: list[int]) -> int:
    return sum(max(lengths[i] for i in b) * len(b) for b in batches)


def _batches(order: list[int], size: int) -> list[list[int]]:
    return [order[i : i + size] for i in range(0, len(order), size)]


@pytest.mark.parametrize("n,size,window", [(1, 4, 50), (37, 8, 2), (100, 8, 50), (64, 3, 1)])
def test_every_index_once(n, size, window):
    rng = random.Random(n)
    lengths = [rng.randint(1, 300) for _ in range(n)]
    order = list(range(n))
    rng.shuffle(order)
    out = group_by_length(order, lengths, size, seed=3, window=window)
    assert sorted(out) == list(range(n))


def test_one_window_gives_the_batches_of_the_sorted_lengths():
    # with one window over everything, the batches are the sorted lengths cut in runs of 8: the
    # least padding any split into batches of 8 can have (hand rule, not the code's loop)
    rng = random.Random(0)
    lengths = rng.sample(range(1, 10_000), 96)
    out = group_by_length(list(range(96)), lengths, 8, seed=1, window=12)
    got = sorted(sorted(lengths[i] for i in b) for b in _batches(out, 8))
    by_length = sorted(lengths)
    want = sorted(by_length[i : i + 8] for i in range(0, 96, 8))
    assert got == want
    shuffled = list(range(96))
    random.Random(2).shuffle(shuffled)
    assert _padded(_batches(out, 8), lengths) < _padded(_batches(shuffled, 8), lengths)


def test_windows_keep_the_shuffle_between_them():
    # an index never leaves its window of window x batch_size places
    lengths = list(range(40, 0, -1))
    order = list(range(40))
    out = group_by_length(order, lengths, batch_size=4, seed=0, window=2)
    for w in range(0, 40, 8):
        assert sorted(out[w : w + 8]) == sorted(order[w : w + 8])


def test_the_sampler_groups_each_epoch_differently_and_resumes_into_it():
    lengths = [random.Random(i).randint(1, 200) for i in range(50)]
    data = ListDataset(range(50))
    s = ResumableSampler(data, seed=5, lengths=lengths, batch_size=5)
    s.set_epoch(0)
    first = list(s)
    s.set_epoch(1)
    second = list(s)
    assert sorted(first) == sorted(second) == list(range(50)) and first != second
    # grouped: far less padding than the plain shuffle of the same seed and epoch
    plain = ResumableSampler(data, seed=5)
    plain.set_epoch(0)
    assert _padded(_batches(first, 5), lengths) < 0.8 * _padded(_batches(list(plain), 5), lengths)
    again = ResumableSampler(data, seed=5, lengths=lengths, batch_size=5)
    again.resume(0, 15)
    again.set_epoch(0)
    assert list(again) == first[15:]


def test_lengths_must_match_the_examples():
    with pytest.raises(ValueError, match="3 lengths for 2 examples"):
        ResumableSampler(ListDataset([0, 1]), lengths=[1, 2, 3])


def test_pair_data_module_batches_pairs_of_similar_length():
    rng = random.Random(0)
    pairs = [("x" * rng.randint(1, 100), "y" * rng.randint(1, 100)) for _ in range(80)]
    dm = PairDataModule(pairs, [], _zip, batch_size=8, group_by_length=True)
    batches = list(dm.train_dataloader())
    assert sorted(p for b in batches for p in b) == sorted(pairs)
    plain = PairDataModule(pairs, [], _zip, batch_size=8)

    def spread(batch):
        sizes = [len(s) + len(t) for s, t in batch]
        return max(sizes) - min(sizes)

    assert sum(map(spread, batches)) < 0.25 * sum(map(spread, plain.train_dataloader()))
    assert dm.loader.state_dict()["grouped"] == 1 and "grouped" not in plain.loader.state_dict()
