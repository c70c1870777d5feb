"""The demo behind ``python -m retrograd``: train a small network on two spirals.

The data is made here with NumPy (no download): two interleaved spirals in the plane, one per
class, with a little noise. A multilayer perceptron learns to tell them apart, written exactly as
PyTorch code is written (``nn.Sequential``, ``DataLoader``, ``Adam``, a cosine learning-rate
schedule) but running on retrograd. It shows a progress bar with the loss, then prints the
accuracy reached on held-out points and where it wrote its outputs (in ./retrograd-demo by
default, replacing the previous run's): the loss curve as CSV, a JSON summary, a text picture of
the learnt decision regions, demo.svg (the loss curve and the regions; no plotting library
needed), with ``--graph`` the model's autograd graph, and where matplotlib is installed a PNG.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Sequence
from typing import TextIO

import numpy as np

import retrograd as torch
import retrograd.distributed as dist
from retrograd import nn
from retrograd.nn.parallel import DistributedDataParallel
from retrograd.utils.data import DataLoader, TensorDataset

__all__ = ["main", "make_spirals", "make_model", "ProgressBar"]


def make_spirals(n_per_class: int, rng: np.random.Generator, noise: float = 0.04,
                 turns: float = 1.75) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved spirals: points (2 * n_per_class, 2) in about [-1, 1]^2 and labels 0/1.

    >>> x, y = make_spirals(5, np.random.default_rng(0))
    >>> x.shape, y.shape, sorted(set(y.tolist()))
    ((10, 2), (10,), [0, 1])
    """
    t = np.sqrt(rng.random(2 * n_per_class)) * turns * 2 * math.pi
    labels = np.repeat(np.arange(2), n_per_class)
    angle = t + math.pi * labels
    radius = t / (turns * 2 * math.pi)
    points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    points += rng.normal(scale=noise, size=points.shape)
    return points.astype(np.float32), labels.astype(np.int64)


def make_model(hidden: int) -> nn.Module:
    """The classifier: 2 inputs -> two hidden layers of ``hidden`` units -> 2 logits."""
    return nn.Sequential(
        nn.Linear(2, hidden), nn.Tanh(),
        nn.Linear(hidden, hidden), nn.Tanh(),
        nn.Linear(hidden, 2),
    )


class ProgressBar:
    """A one-line text progress bar, redrawn in place with a carriage return.

    >>> import io
    >>> s = io.StringIO()
    >>> bar = ProgressBar(4, s, width=4, min_interval=0, live=True)
    >>> bar.update(2, loss=0.5)
    >>> s.getvalue().split("\\r")[-1].rsplit("  ", 1)[0]   # the elapsed time last
    'training [##..]   2/4  loss 0.5000'
    """

    def __init__(self, total: int, stream: TextIO, width: int = 30, label: str = "training",
                 min_interval: float = 0.05, live: bool | None = None) -> None:
        self.total, self.stream, self.width, self.label = total, stream, width, label
        self.min_interval = min_interval
        # Redrawn in place on a terminal; into a log (not a terminal) only the last frame goes.
        self.live = stream.isatty() if live is None else live
        self.last = -math.inf
        self.start = time.perf_counter()
        self.drawn = False

    def update(self, n: int, **values: float) -> None:
        now = time.perf_counter()
        if n < self.total and (not self.live or now - self.last < self.min_interval):
            return
        self.last = now
        fill = self.width * n // self.total
        digits = len(str(self.total))
        text = f"{self.label} [{'#' * fill}{'.' * (self.width - fill)}] {n:{digits + 2}d}/" \
               f"{self.total}"
        text += "".join(f"  {k} {v:.4f}" for k, v in values.items())
        text += f"  {now - self.start:.1f}s"
        self.stream.write(("\r" if self.live else "") + text)
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


DEFAULT_OUT = "retrograd-demo"
OUTPUTS = ("loss_curve.csv", "summary.json", "regions.txt", "demo.svg", "loss_curve.png",
           "graph.dot", "graph.svg")


def prepare_out(path: str, say) -> str:
    """Make ``path`` ready for this run's outputs: create it, or replace the outputs a previous
    run left there (saying so). A one-line ``ValueError`` when it cannot be used."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"--out {path}: exists and is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise ValueError(f"--out {path}: cannot create it ({e.strerror})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"--out {path}: not writable")
    old = [n for n in OUTPUTS if os.path.exists(os.path.join(path, n))]
    if old:
        say(f"replacing the outputs of a previous run in {os.path.abspath(path)}")
        for n in old:
            os.remove(os.path.join(path, n))
    return path


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()


def text_regions(model: nn.Module, points: np.ndarray, labels: np.ndarray,
                 cols: int = 56, rows: int = 24) -> str:
    """The decision regions as text: '.' and ' ' for the two classes, 'o'/'x' for points."""
    xs = np.linspace(-1.1, 1.1, cols, dtype=np.float32)
    ys = np.linspace(1.1, -1.1, rows, dtype=np.float32)
    grid = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
    with torch.no_grad():
        pred = model(torch.from_numpy(grid)).argmax(dim=1).numpy().reshape(rows, cols)
    canvas = np.where(pred == 0, ".", " ").astype("<U1")
    ci = np.clip(np.rint((points[:, 0] + 1.1) / 2.2 * (cols - 1)).astype(int), 0, cols - 1)
    ri = np.clip(np.rint((1.1 - points[:, 1]) / 2.2 * (rows - 1)).astype(int), 0, rows - 1)
    canvas[ri, ci] = np.where(labels == 0, "o", "x")
    border = "+" + "-" * cols + "+"
    return "\n".join([border] + ["|" + "".join(r) + "|" for r in canvas] + [border])


def save_png(path: str, curve: Sequence[dict], model: nn.Module, points: np.ndarray,
             labels: np.ndarray) -> bool:
    """The loss curve and the decision regions as a PNG, where matplotlib is installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:  # not installed, or no usable backend
        return False
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
    epochs = [c["epoch"] for c in curve]
    ax1.plot(epochs, [c["loss"] for c in curve], label="training loss")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("cross-entropy")
    ax1.set_yscale("log")
    ax1.set_title("loss")
    ax1.grid(alpha=0.3)
    xs = np.linspace(-1.2, 1.2, 200, dtype=np.float32)
    gx, gy = np.meshgrid(xs, xs)
    with torch.no_grad():
        prob = model(torch.from_numpy(np.stack([gx, gy], -1).reshape(-1, 2))).softmax(dim=1)
    ax2.contourf(gx, gy, prob[:, 1].numpy().reshape(gx.shape), levels=20, cmap="RdBu_r",
                 alpha=0.6)
    ax2.scatter(points[:, 0], points[:, 1], c=labels, cmap="RdBu_r", s=6, edgecolors="none")
    ax2.set_aspect("equal")
    ax2.set_title("decision regions (held-out points)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def save_svg(path: str, curve: Sequence[dict], model: nn.Module, points: np.ndarray,
             labels: np.ndarray) -> None:
    """The loss curve and the decision regions as an SVG picture: no plotting library needed."""
    w, h, pad = 420, 360, 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w + 20}" height="{h + 30}" '
             'font-family="sans-serif" font-size="12">',
             '<rect width="100%" height="100%" fill="white"/>']
    # Left: the training loss per epoch, on a log scale.
    losses = np.log10([max(c["loss"], 1e-12) for c in curve])
    lo, hi = float(losses.min()), float(losses.max())
    hi = hi if hi > lo else lo + 1.0
    xs = pad + (w - 2 * pad) * np.arange(len(losses)) / max(len(losses) - 1, 1)
    ys = pad + (h - 2 * pad) * (hi - losses) / (hi - lo)
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys))
    parts += [f'<text x="{w / 2}" y="20" text-anchor="middle">training loss (log scale) per '
              'epoch</text>',
              f'<rect x="{pad}" y="{pad}" width="{w - 2 * pad}" height="{h - 2 * pad}" '
              'fill="none" stroke="#999"/>',
              f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="2"/>',
              f'<text x="{pad}" y="{pad - 4}">{10 ** hi:.3g}</text>',
              f'<text x="{pad}" y="{h - pad + 14}">{10 ** lo:.3g}</text>',
              f'<text x="{w - pad}" y="{h - pad + 14}" text-anchor="end">{len(curve)}</text>']
    # Right: the classes the model predicts over the plane, and the held-out points.
    n = 48
    grid = np.linspace(-1.2, 1.2, n, dtype=np.float32)
    gx, gy = np.meshgrid(grid, grid[::-1])
    with torch.no_grad():
        pred = model(torch.from_numpy(np.stack([gx, gy], -1).reshape(-1, 2))).argmax(dim=1)
    pred = pred.numpy().reshape(n, n)
    cell = (h - 2 * pad) / n
    x0 = w + 20 + pad
    parts.append(f'<text x="{x0 + (h - 2 * pad) / 2}" y="20" text-anchor="middle">decision '
                 'regions and held-out points</text>')
    for i in range(n):
        for j in range(n):
            color = "#fcd9c4" if pred[i, j] else "#c6dbef"
            parts.append(f'<rect x="{x0 + j * cell:.1f}" y="{pad + i * cell:.1f}" '
                         f'width="{cell + 0.3:.1f}" height="{cell + 0.3:.1f}" fill="{color}"/>')
    scale = (h - 2 * pad) / 2.4
    for (px, py), c in zip(points, labels):
        color = "#d62728" if c else "#1f77b4"
        parts.append(f'<circle cx="{x0 + (px + 1.2) * scale:.1f}" '
                     f'cy="{pad + (1.2 - py) * scale:.1f}" r="1.6" fill="{color}"/>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def save_graph(out: str, model: nn.Module, loss_fn, x: torch.Tensor, y: torch.Tensor) -> list:
    """The autograd graph of the model's loss on ``x``: graph.dot, and graph.svg where
    Graphviz's ``dot`` program is installed."""
    from retrograd.autograd.graph import draw

    loss = loss_fn(model(x), y)
    params = dict(model.named_parameters())
    paths = [draw(loss, os.path.join(out, "graph.dot"), params=params)]
    if shutil.which("dot"):
        paths.append(draw(loss, os.path.join(out, "graph.svg"), params=params))
    return paths


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m retrograd",
        description="Train a small MLP on two generated spirals with retrograd (PyTorch's API "
                    "on NumPy), show the loss as it trains, and write the loss curve.")
    p.add_argument("--epochs", type=int, default=60, help="passes over the training set "
                   "(default: %(default)s)")
    p.add_argument("--hidden", type=int, default=64, help="units per hidden layer "
                   "(default: %(default)s)")
    p.add_argument("--lr", type=float, default=0.01, help="Adam's peak learning rate "
                   "(default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=32, help="minibatch size "
                   "(default: %(default)s)")
    p.add_argument("--points", type=int, default=1000,
                   help="training points per spiral (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    p.add_argument("--out", default=DEFAULT_OUT,
                   help="output directory, its previous outputs replaced (default: "
                        "./%(default)s)")
    p.add_argument("--graph", action="store_true",
                   help="also draw the model's autograd graph (graph.dot, and graph.svg where "
                        "Graphviz is installed)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar or intro; print only the results")
    p.add_argument("--distributed", action="store_true",
                   help="data-parallel over MPI: run as 'mpiexec -n 2 python -m retrograd "
                        "--distributed'; each global batch of --batch-size is split across "
                        "the processes, so the result matches a single-process run")
    args = p.parse_args(argv)
    for name in ("epochs", "hidden", "batch_size", "points"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if not (math.isfinite(args.lr) and args.lr > 0):
        p.error("--lr must be a finite positive number")
    if not 0 <= args.seed < 2 ** 32:
        p.error("--seed must be between 0 and 2**32 - 1")
    return args


def _start_distributed() -> tuple[int, int]:
    """Join the MPI job (``mpiexec -n N``): this process's rank and the number of ranks."""
    dist.init_process_group("mpi")
    return dist.get_rank(), dist.get_world_size()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; returns the process exit status."""
    args = parse_args(argv)
    say = (lambda *a: None) if args.quiet else print
    out = args.out

    rank, world = _start_distributed() if args.distributed else (0, 1)
    if rank != 0:
        say = lambda *a: None  # noqa: E731 (only rank 0 talks)
        args.quiet = True
    else:
        try:
            prepare_out(out, say)
        except ValueError as e:
            print(f"python -m retrograd: error: {e}", file=sys.stderr)
            return 2
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    x_train, y_train = make_spirals(args.points, rng)
    x_test, y_test = make_spirals(max(args.points // 5, 50), rng)
    train = TensorDataset(torch.from_numpy(x_train), torch.from_numpy(y_train))
    loader = DataLoader(train, batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    model = make_model(args.hidden)
    # With --distributed every rank trains a replica; DDP averages the gradients.
    train_model = DistributedDataParallel(model) if world > 1 else model
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    steps = args.epochs * len(loader)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps)
    loss_fn = nn.CrossEntropyLoss()

    say(f"retrograd {torch.__version__}: two spirals, {len(train)} training points, "
        f"MLP 2-{args.hidden}-{args.hidden}-2, {args.epochs} epochs of {len(loader)} steps")
    bar = ProgressBar(args.epochs, sys.stderr) if not args.quiet else None
    xt, yt = torch.from_numpy(x_test), torch.from_numpy(y_test)
    curve = []
    t0 = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        total, count = 0.0, 0
        for xb, yb in loader:
            n_global = len(yb)
            if world > 1:  # this rank's share of the global batch
                xb, yb = xb[rank::world], yb[rank::world]
            loss = loss_fn(train_model(xb), yb)
            opt.zero_grad()
            if world > 1:
                # DDP averages the ranks' gradients: weighting each rank's mean by its share
                # makes that average the gradient of the global batch's mean loss.
                (loss * (len(yb) * world / n_global)).backward()
            else:
                loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(yb)
            count += len(yb)
        model.eval()
        if world > 1:
            sums = torch.tensor([total, count], dtype=torch.float64)
            dist.all_reduce(sums)
            total, count = sums.tolist()
        curve.append({"epoch": epoch, "loss": total / count, "lr": sched.get_last_lr()[0]})
        if bar is not None:
            bar.update(epoch, loss=curve[-1]["loss"])
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - t0
    train_acc = accuracy(model, torch.from_numpy(x_train), torch.from_numpy(y_train))
    test_acc = accuracy(model, xt, yt)
    curve[-1]["test_accuracy"] = test_acc
    if world > 1:
        dist.destroy_process_group()
        if rank != 0:
            return 0  # rank 0 writes and reports

    os.makedirs(out, exist_ok=True)
    written = []
    path = os.path.join(out, "loss_curve.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["epoch", "loss", "lr"])
        for c in curve:
            w.writerow([c["epoch"], f"{c['loss']:.6g}", f"{c['lr']:.6g}"])
    written.append(path)
    path = os.path.join(out, "summary.json")
    summary = {
        "task": "two spirals", "model": f"MLP 2-{args.hidden}-{args.hidden}-2 (tanh)",
        "epochs": args.epochs, "steps": steps, "batch_size": args.batch_size,
        "lr": args.lr, "seed": args.seed, "train_points": len(train),
        "test_points": len(y_test), "final_loss": curve[-1]["loss"],
        "train_accuracy": train_acc, "test_accuracy": test_acc,
        "seconds": round(seconds, 3), "retrograd": torch.__version__,
        "loss_curve": [c["loss"] for c in curve],
    }
    with open(path, "w") as f:
        json.dump(summary, f, indent=2)
    written.append(path)
    picture = text_regions(model, x_test, y_test)
    path = os.path.join(out, "regions.txt")
    with open(path, "w") as f:
        f.write(picture + "\n")
    written.append(path)
    path = os.path.join(out, "demo.svg")
    save_svg(path, curve, model, x_test, y_test)
    written.append(path)
    if args.graph:
        written += save_graph(out, model, loss_fn, xt[:64], yt[:64])
    png = os.path.join(out, "loss_curve.png")
    has_png = save_png(png, curve, model, x_test, y_test)
    if has_png:
        written.append(png)

    say(picture)
    say("decision regions of the held-out points: '.' and ' ' the two classes, 'o'/'x' points")
    print(f"final loss {curve[-1]['loss']:.4f} after {steps} steps in {seconds:.1f} s")
    print(f"accuracy: {100 * test_acc:.1f}% on {len(y_test)} held-out points "
          f"(training set {100 * train_acc:.1f}%)")
    if args.distributed:
        print(f"data-parallel on {world} process{'es' if world > 1 else ''}, global batch "
              f"{args.batch_size}" + ("" if world > 1 else " (launch with mpiexec -n 2)"))
    print(f"outputs written to {os.path.abspath(out)}: "
          + ", ".join(os.path.basename(p) for p in written))
    say(f"open {os.path.join(os.path.abspath(out), 'demo.svg')} in a browser to see the loss "
        "curve and the decision regions")
    return 0
