"""Under 2-process DDP (gloo, CPU) with the all-gather SimCSE uses (Lightning's
``all_gather(sync_grads=True)``), each rank sees different data and the averaged gradient equals
the single-process gradient of the loss on the whole batch; without the gather it does not."""

from __future__ import annotations

import os

import pytest
import torch

from paraamr.simcse.loss import simcse_loss

B, D_IN, D = 3, 8, 4  # triplets per rank, input and embedding width


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Linear(D_IN, D)


def _batch() -> torch.Tensor:
    """The global batch: 2 ranks x B triplets, rows (anchors, positives, negatives) per rank."""
    return torch.randn(2, 3 * B, D_IN, generator=torch.Generator().manual_seed(1))


def _loss(model, x, gather):
    z = model(x).view(3, -1, D).transpose(0, 1)  # (B, 3, D), as SimCSEModule.training_step
    if gather:
        from lightning_fabric.utilities.distributed import _all_gather_ddp_if_available

        z = _all_gather_ddp_if_available(z, sync_grads=True).reshape(-1, 3, D)
    return simcse_loss(*z.unbind(1), temperature=0.05)


def _worker(rank: int, out: str, port: int, gather: bool) -> None:
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    model = DDP(_model())
    x = _batch()[rank]  # this rank's shard of the batch
    _loss(model, x, gather).backward()
    torch.save({"x": x, "grads": [p.grad for p in model.parameters()]}, f"{out}/rank{rank}.pt")
    dist.destroy_process_group()


def _run(tmp_path, gather: bool, port: int):
    import torch.multiprocessing as mp

    mp.spawn(_worker, args=(str(tmp_path), port, gather), nprocs=2, join=True)
    return [torch.load(tmp_path / f"rank{r}.pt") for r in (0, 1)]


def _single_process_grads():
    model = _model()
    x = _batch()
    # one process, whole batch: the global triplets in rank order
    z = model(x.reshape(2, 3, B, D_IN)).transpose(1, 2).reshape(-1, 3, D)
    simcse_loss(*z.unbind(1), temperature=0.05).backward()
    return [p.grad for p in model.parameters()]


@pytest.mark.slow
def test_ddp_gradient_equals_the_whole_batch_gradient(tmp_path):
    r0, r1 = _run(tmp_path, gather=True, port=29517)
    assert not torch.equal(r0["x"], r1["x"])  # the ranks saw different data
    assert torch.equal(torch.stack([r0["x"], r1["x"]]), _batch())  # and together all of it
    expect = _single_process_grads()
    for g0, g1, e in zip(r0["grads"], r1["grads"], expect, strict=True):
        assert torch.allclose(g0, g1, atol=0, rtol=0)  # DDP all-reduced them
        assert torch.allclose(g0, e, atol=1e-6, rtol=1e-5)

    (tmp_path / "nogather").mkdir()
    n0, _ = _run(tmp_path / "nogather", gather=False, port=29518)  # the negative control
    assert not all(
        torch.allclose(g, e, atol=1e-4) for g, e in zip(n0["grads"], expect, strict=True)
    )
