"""A custom autograd Function (the Legendre polynomial P3), fitted to sin(x), in the style of
PyTorch's "Defining new autograd functions" example."""

import math

import torch


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


def main():
    torch.manual_seed(1)
    x = torch.linspace(-math.pi, math.pi, 200)
    y = torch.sin(x)
    a = torch.full((), 0.0, requires_grad=True)
    b = torch.full((), -1.0, requires_grad=True)
    c = torch.full((), 0.0, requires_grad=True)
    d = torch.full((), 0.3, requires_grad=True)
    P3 = LegendrePolynomial3.apply
    lr = 5e-6
    for t in range(400):
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, f"{loss.item():.3f}", loss.grad_fn.name())
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= lr * p.grad
                p.grad = None
    print(f"y = {a.item():.4f} + {b.item():.4f} * P3({c.item():.4f} + {d.item():.4f} x)")


if __name__ == "__main__":
    main()
