"""Multi-process data-parallel training in the form of PyTorch's DDP tutorial series
(examples/distributed/ddp-tutorial-series/multigpu_torchrun.py) on the CPU: started by a launcher
(torchrun; spiral-run for SpiralTorch), init_process_group("gloo") / destroy_process_group,
RANK/LOCAL_RANK/WORLD_SIZE from the environment, a Trainer wrapping the model in
DistributedDataParallel, DistributedSampler with set_epoch, a snapshot of model.module's state dict
saved by rank 0 and read back, and the loss averaged over ranks with dist.all_reduce. Each rank
starts from different NumPy weights, so only DDP's broadcast makes them agree; the sampler does not
shuffle, so both libraries see the same batches and print the same losses."""
import json
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def ddp_setup():
    init_process_group(backend="gloo")


class Trainer:
    def __init__(self, model, train_data, optimizer, save_every, snapshot_path):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.global_rank = int(os.environ["RANK"])
        self.model = model
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.epochs_run = 0
        self.snapshot_path = snapshot_path
        self.model = DDP(self.model, device_ids=None, find_unused_parameters=False)
        self.history = []

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.cross_entropy(output, targets)
        loss.backward()
        self.optimizer.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean, op=dist.ReduceOp.SUM)
        self.history.append(mean.item() / dist.get_world_size())

    def _run_epoch(self, epoch):
        b_sz = len(next(iter(self.train_data))[0])
        if self.global_rank == 0:
            print(f"[GPU{self.global_rank}] Epoch {epoch} | Batchsize: {b_sz} | Steps: {len(self.train_data)}")
        self.train_data.sampler.set_epoch(epoch)
        for source, targets in self.train_data:
            self._run_batch(source, targets)

    def _save_snapshot(self, epoch):
        snapshot = {
            "MODEL_STATE": self.model.module.state_dict(),
            "EPOCHS_RUN": epoch,
        }
        torch.save(snapshot, self.snapshot_path)
        print(f"Epoch {epoch} | Training snapshot saved at {self.snapshot_path}")

    def train(self, max_epochs):
        for epoch in range(self.epochs_run, max_epochs):
            self._run_epoch(epoch)
            if self.global_rank == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)


def load_train_objs(rank):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 10)).astype(np.float32)
    y = (x[:, :3].sum(1) > 0).astype(np.int64) + (x[:, 3] > 1).astype(np.int64)
    train_set = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))
    init = np.random.default_rng(100 + rank)  # different on every rank: DDP broadcasts rank 0's
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(init.uniform(-0.3, 0.3, size=tuple(p.shape)).astype(np.float32)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return train_set, model, optimizer


def prepare_dataloader(dataset, batch_size):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        pin_memory=True,
        shuffle=False,
        sampler=DistributedSampler(dataset, shuffle=False)
    )


def main(save_every, total_epochs, batch_size, snapshot_path="snapshot.pt"):
    ddp_setup()
    dataset, model, optimizer = load_train_objs(int(os.environ["RANK"]))
    train_data = prepare_dataloader(dataset, batch_size)
    trainer = Trainer(model, train_data, optimizer, save_every, snapshot_path)
    trainer.train(total_epochs)
    dist.barrier()
    snapshot = torch.load(snapshot_path, map_location="cpu")
    model_keys = len(snapshot["MODEL_STATE"])
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps({"train": trainer.history, "world": dist.get_world_size(),
                                      "epochs_in_snapshot": snapshot["EPOCHS_RUN"], "keys": model_keys}))
    sys.stdout.flush()
    destroy_process_group()


if __name__ == "__main__":
    main(save_every=1, total_epochs=3, batch_size=16)
