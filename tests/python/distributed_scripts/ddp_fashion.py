"""One rank of the DDP acceptance run (tests/python/test_distributed.py starts it with spiral-run).

Trains the PyTorch-quickstart Fashion-MNIST MLP for a few steps with DistributedDataParallel over
MPI, reading this rank's share through DistributedSampler, once per experiment in EXPERIMENTS
(several optimizers, gradient accumulation with no_sync(), nn.fit and ModuleTrainer), and saves
the weights and what the reducer reported to <out>/rank<r>.npz. Every rank seeds differently:
only the broadcast at wrap time makes them start equal. The test trains one process on the
concatenated batches (``reference``) and compares.
"""

import sys
from typing import Any, Dict, List, Sequence

import numpy as np

import spiraltorch as st
from spiraltorch import nn

STEPS, BATCH, SAMPLES, SEED = 4, 32, 256, 3
EXPERIMENTS = ("sgd", "adam", "adamw", "rmsprop", "accumulate", "fit", "trainer")


def make_model(seed: int, dtype: Any) -> Any:
    """The quickstart MLP, initialised from ``seed``, in ``dtype``."""
    st.manual_seed(seed)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    return model.to(dtype)


def make_optimizer(kind: str, params: Sequence[Any]) -> Any:
    """The optimizer of experiment ``kind`` (SGD with momentum unless it names another)."""
    if kind == "adam":
        return st.optim.Adam(params, lr=1e-3)
    if kind == "adamw":
        return st.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
    if kind == "rmsprop":
        return st.optim.RMSprop(params, lr=1e-3)
    return st.optim.SGD(params, lr=0.1, momentum=0.9)


def dtype_of(kind: str) -> Any:
    """Float32 for SGD-type runs; float64 for the adaptive optimizers, whose division by
    sqrt(v) would magnify float32 rounding in near-zero gradients beyond the 1e-6 tolerance."""
    return st.float64 if kind in ("adam", "adamw", "rmsprop") else st.float32


def weights(model: Any) -> Dict[str, np.ndarray]:
    return {k.replace("::", "__"): v.numpy() for k, v in model.state_dict().items()}


def reference(kind: str, batches: List[Any]) -> Dict[str, np.ndarray]:
    """One process trained on ``batches`` (each the concatenation of the ranks' batches of a
    step), from rank 0's initial weights: what DDP must reproduce."""
    model = make_model(1, dtype_of(kind))
    loss_fn = nn.CrossEntropyLoss()
    if kind == "trainer":
        trainer = nn.ModuleTrainer(fallback_learning_rate=0.1)
        trainer.train_epoch(model, loss_fn, batches, trainer.roundtable(2 * BATCH, 10))
        return weights(model)
    opt = make_optimizer(kind, model.parameters())
    for x, y in batches:
        x = x.to(dtype_of(kind))
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    return weights(model)


def main(out_dir: str) -> None:
    import spiraltorch.distributed as dist

    dist.init_process_group("mpi", timeout=120)
    rank = dist.get_rank()
    images, labels = st.data.load_fashion_mnist(split="train")
    dataset = st.data.TensorDataset(images[:SAMPLES], labels[:SAMPLES])
    sampler = st.data.DistributedSampler(dataset, shuffle=True, seed=SEED)
    result: Dict[str, Any] = {"indices": np.array(list(sampler))}
    loss_fn = nn.CrossEntropyLoss()
    for kind in EXPERIMENTS:
        dtype = dtype_of(kind)
        model = make_model(1 + rank, dtype)
        # A 1 MB bucket cap: the 784x512 and 512x512 weights each fill a bucket of their own.
        ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=1.0)
        loader = st.data.DataLoader(dataset, batch_size=BATCH, sampler=sampler)
        if kind == "trainer":
            trainer = nn.ModuleTrainer(fallback_learning_rate=0.1)
            trainer.train_epoch(ddp, loss_fn, loader, trainer.roundtable(BATCH, 10))
        elif kind == "fit":
            opt = make_optimizer(kind, ddp.parameters())
            nn.fit(ddp, loss_fn, opt, loader, epochs=1, progress=False)
        else:
            opt = make_optimizer(kind, ddp.parameters())
            for step, (x, y) in enumerate(loader):
                if step == STEPS:
                    break
                x = x.to(dtype)
                opt.zero_grad()
                if kind == "accumulate":
                    # Two micro-batches: the first stays local, the second's backward averages the sum.
                    half = BATCH // 2
                    with ddp.no_sync():
                        (loss_fn(ddp(x[:half]), y[:half]) * 0.5).backward()
                    (loss_fn(ddp(x[half:]), y[half:]) * 0.5).backward()
                else:
                    loss_fn(ddp(x), y).backward()
                opt.step()
        result.update({f"{kind}.{k}": v for k, v in weights(model).items()})
        result[f"{kind}.buckets"] = np.array(len(ddp.bucket_indices))
        result[f"{kind}.overlapped"] = np.array(ddp.overlapped_buckets)
        result[f"{kind}.synced"] = np.array(ddp.synced_steps)
    np.savez(f"{out_dir}/rank{rank}.npz", **result)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
