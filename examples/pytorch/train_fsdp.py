"""Sharded data-parallel training with FSDP2 (``fully_shard``) on scikit-learn's bundled digits (8x8 images, offline).

    torchrun --standalone --nproc-per-node 4 examples/pytorch/train_fsdp.py --backend inagg
    torchrun --standalone --nproc-per-node 4 examples/pytorch/train_fsdp.py --backend gloo
    INAGG_STRICT=1 torchrun ... --backend inagg     # fail instead of falling back to gloo for any collective
    torchrun --standalone --nproc-per-node 4 examples/pytorch/train_fsdp.py --mesh hsdp   # HSDP on a 2-D mesh

Each rank holds a quarter of every weight; FSDP2 all-gathers a layer's weights before its forward and backward and
reduce-scatters its gradients after, all through the inagg agent (docs/pytorch.md says how). Each run prints loss, test
accuracy and wall time per epoch and writes OUT/fsdp-<backend>.json (history) and OUT/fsdp-<backend>.pt (the full
parameters after training), so that two runs can be compared, and OUT/fsdp-curves.png (the loss and accuracy of every
backend run so far). ``--mesh hsdp`` shards each layer over half the ranks and replicates it over two halves (a 2-D
DeviceMesh: reduce-scatter and all-gather inside a half, all-reduce between halves), under the prefix ``hsdp``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

from train import load_digits, plot


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["inagg", "gloo"], default="inagg")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=16, help="per rank")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mesh", choices=["flat", "hsdp"], default="flat",
                   help="flat: FSDP2 over every rank; hsdp: 2 replicas x world/2 shards (world even)")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    return p.parse_args()


def main() -> None:
    args = parse_args()
    if args.backend == "inagg":
        import inagg_torch  # noqa: F401  (registers the backend)
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.mesh == "hsdp":
        if world % 2 or world < 4:
            raise SystemExit(f"--mesh hsdp needs an even world size of 4 or more, not {world}")
        mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("replicate", "shard"))
    else:
        mesh = init_device_mesh("cpu", (world,))
    prefix = "fsdp" if args.mesh == "flat" else "hsdp"
    torch.manual_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = load_digits(args.seed)
    train = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)  # one all-gather and one reduce-scatter per layer
    fully_shard(model, mesh=mesh)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    history = {"backend": args.backend, "mesh": args.mesh, "world_size": world, "epoch": [], "loss": [], "accuracy": [], "seconds": []}
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        start = time.perf_counter()
        model.train()
        total, batches = torch.zeros(1), 0
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            total += loss.detach()
            batches += 1
        dist.all_reduce(total)
        seconds = time.perf_counter() - start
        model.eval()
        with torch.no_grad():  # every rank evaluates the whole test set (FSDP2 all-gathers the weights)
            accuracy = (model(x_test).argmax(1) == y_test).float().mean().item() * 100
        history["epoch"].append(epoch)
        history["loss"].append(total.item() / (batches * world))
        history["accuracy"].append(accuracy)
        history["seconds"].append(seconds)
        if rank == 0:
            print(f"[{prefix} {args.backend}] epoch {epoch:3d}  loss {history['loss'][-1]:.4f}  test accuracy "
                  f"{accuracy:6.2f}%  wall {seconds * 1000:7.1f} ms", flush=True)
    full = {name: p.full_tensor().detach() for name, p in model.named_parameters()}  # a collective: every rank
    if rank == 0:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"{prefix}-{args.backend}.json").write_text(json.dumps(history, indent=1))
        torch.save(full, args.out / f"{prefix}-{args.backend}.pt")
        print(f"[{prefix} {args.backend}] final test accuracy {history['accuracy'][-1]:.2f}% after {args.epochs} epochs, "
              f"{sum(history['seconds']):.2f} s training on {world} ranks", flush=True)
        plot(args.out, prefix, f"{'HSDP (2-D mesh)' if prefix == 'hsdp' else 'FSDP2'} on sklearn digits: inagg vs gloo",
             f"{prefix}-curves.png")
    # Every rank leaves together: a rank that tears its process group down while rank 0 still writes and plots
    # aborted at exit under gloo now and then ("terminate called without an active exception").
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
