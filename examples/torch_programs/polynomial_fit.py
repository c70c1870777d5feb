"""Fit y = sin(x) with a third-order polynomial by gradient descent on autograd tensors, in the
style of PyTorch's "Learning PyTorch with Examples". Runs unchanged under torch and under
``python -m retrograd.run``."""

import math

import torch


def main():
    torch.manual_seed(0)
    x = torch.linspace(-math.pi, math.pi, 200, dtype=torch.float64)
    y = torch.sin(x)
    a, b, c, d = (torch.randn((), dtype=torch.float64, requires_grad=True) for _ in range(4))
    lr = 1e-6 * 10
    for t in range(500):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, f"{loss.item():.4f}")
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= lr * p.grad
                p.grad = None
    print(f"y = {a.item():.4f} + {b.item():.4f} x + {c.item():.4f} x^2 + {d.item():.4f} x^3")


if __name__ == "__main__":
    main()
