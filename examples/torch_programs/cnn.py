"""A small convolutional classifier trained on synthetic images (bright rows versus bright
columns) with a DataLoader, dropout, max pooling, SGD with momentum and a step LR schedule."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(8 * 2 * 2, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 1)
        x = self.dropout(torch.flatten(x, 1))
        return self.fc(x)


def make_data(n):
    x = torch.rand(n, 1, 8, 8) * 0.3
    y = torch.randint(0, 2, (n,))
    k = torch.randint(0, 8, (n,))
    for i in range(n):
        if y[i] == 0:
            x[i, 0, k[i], :] += 1.0
        else:
            x[i, 0, :, k[i]] += 1.0
    return x, y


def main():
    torch.manual_seed(0)
    x, y = make_data(96)
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for epoch in range(4):
        model.train()
        total = 0.0
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
        sched.step()
        model.eval()
        with torch.no_grad():
            acc = (model(x).argmax(1) == y).float().mean().item()
        print(f"epoch {epoch}: loss {total / len(x):.4f} accuracy {acc:.4f}")


if __name__ == "__main__":
    main()
