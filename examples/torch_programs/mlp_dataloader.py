"""A small classifier trained with a DataLoader, written for PyTorch and run unchanged.

    python -m retrograd.run examples/torch_programs/mlp_dataloader.py   # torch is retrograd
    python examples/torch_programs/mlp_dataloader.py                    # real PyTorch

With the same seed both print the same numbers (retrograd draws PyTorch's random numbers).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class MLP(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def main():
    torch.manual_seed(0)
    x = torch.randn(64, 4)
    y = (x[:, 0] + x[:, 1] > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    model = MLP(4, 8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for epoch in range(3):
        total = 0.0
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item()
        print(f"epoch {epoch}: loss {total / len(loader):.4f}")
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    print(f"accuracy {acc:.4f}")


if __name__ == "__main__":
    main()
