"""Data-parallel training with DistributedDataParallel on scikit-learn's bundled digits (8x8 images, offline).

    torchrun --standalone --nproc-per-node 4 examples/pytorch/train.py --backend inagg
    torchrun --standalone --nproc-per-node 4 examples/pytorch/train.py --backend gloo

Each run prints loss, test accuracy and wall time per epoch, writes its history to OUT/history-<backend>.json and
draws every history found in OUT (both backends after the two commands) to OUT/curves.png.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["inagg", "gloo"], default="inagg")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=16, help="per rank")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    return p.parse_args()


def load_digits(seed: int):
    from sklearn.datasets import load_digits as digits
    from sklearn.model_selection import train_test_split

    x, y = digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(x / 16.0, y, test_size=0.25, random_state=seed, stratify=y)
    as_tensors = lambda a, b: (torch.tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.int64))  # noqa: E731
    return as_tensors(x_train, y_train), as_tensors(x_test, y_test)


def main() -> None:
    args = parse_args()
    if args.backend == "inagg":
        import inagg_torch  # noqa: F401  (registers the backend)
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = load_digits(args.seed)
    train = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)
    model = DDP(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    history = {"backend": args.backend, "world_size": world, "epoch": [], "loss": [], "accuracy": [], "seconds": []}
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
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        seconds = time.perf_counter() - start
        model.eval()
        with torch.no_grad():
            accuracy = (model(x_test).argmax(1) == y_test).float().mean().item() * 100
        mean_loss = total.item() / (batches * world)
        history["epoch"].append(epoch)
        history["loss"].append(mean_loss)
        history["accuracy"].append(accuracy)
        history["seconds"].append(seconds)
        if rank == 0:
            print(f"[{args.backend}] epoch {epoch:3d}  loss {mean_loss:.4f}  test accuracy {accuracy:6.2f}%  "
                  f"wall {seconds * 1000:7.1f} ms", flush=True)
    if rank == 0:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"history-{args.backend}.json").write_text(json.dumps(history, indent=1))
        print(f"[{args.backend}] final test accuracy {history['accuracy'][-1]:.2f}% after {args.epochs} epochs, "
              f"{sum(history['seconds']):.2f} s training on {world} ranks", flush=True)
        plot(args.out)
    # Every rank leaves together: a rank that tears its process group down while rank 0 still writes and plots
    # aborted at exit under gloo now and then ("terminate called without an active exception").
    dist.barrier()
    dist.destroy_process_group()


def plot(out: Path, prefix: str = "history", title: str = "DDP on sklearn digits: inagg vs gloo",
         name: str = "curves.png") -> None:
    """Loss and test accuracy of every OUT/<prefix>-<backend>.json run so far, one line per backend, to OUT/name."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib not installed: no {name}")
        return
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    for path in sorted(out.glob(f"{prefix}-*.json")):
        h = json.loads(path.read_text())
        label = f"{h['backend']} ({h['world_size']} ranks, final {h['accuracy'][-1]:.2f}%)"
        ax_loss.plot(h["epoch"], h["loss"], label=label)
        ax_acc.plot(h["epoch"], h["accuracy"], label=label)
    ax_loss.set(xlabel="epoch", ylabel="training loss", yscale="log", title="loss")
    ax_acc.set(xlabel="epoch", ylabel="test accuracy (%)", title="test accuracy")
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out / name, dpi=110)
    print(f"curves: {out / name}")


if __name__ == "__main__":
    main()
