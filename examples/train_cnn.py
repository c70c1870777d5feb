"""A small CNN trained on generated images (bars: horizontal or vertical), PyTorch-style.

Run: python examples/train_cnn.py [--epochs N]
"""

import argparse

import numpy as np

import retrograd as torch
import retrograd.nn as nn
import retrograd.nn.functional as F
from retrograd.utils.data import DataLoader, TensorDataset


def make_bars(n: int, rng) -> tuple:
    """12x12 noisy images with one bright bar; the label says if it is vertical."""
    x = rng.normal(0, 0.3, (n, 1, 12, 12)).astype(np.float32)
    y = rng.integers(0, 2, n)
    pos = rng.integers(2, 10, n)
    for i in range(n):
        if y[i]:
            x[i, 0, :, pos[i]] += 1.5
        else:
            x[i, 0, pos[i], :] += 1.5
    return torch.from_numpy(x), torch.from_numpy(y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 3 * 3, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    train = DataLoader(TensorDataset(*make_bars(512, rng)), batch_size=32, shuffle=True)
    x_test, y_test = make_bars(256, rng)
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(args.epochs):
        model.train()
        for x, y in train:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(x_test).argmax(1) == y_test).float().mean().item()
        print(f"epoch {epoch}: loss {loss.item():.4f}, test accuracy {acc:.1%}")
    return acc


if __name__ == "__main__":
    main()
