"""A custom autograd.Function with a hand-written backward, checked by gradcheck.

Run: python examples/custom_function.py
"""

import retrograd as torch


class SmoothAbs(torch.autograd.Function):
    """sqrt(x^2 + eps): a differentiable |x|, with its derivative written by hand."""

    @staticmethod
    def forward(ctx, x, eps=1e-3):
        out = (x * x + eps).sqrt()
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        x, out = ctx.saved_tensors
        # Written in retrograd ops, so second derivatives work too.
        return grad_out * x / out, None


def main() -> None:
    x = torch.linspace(-2, 2, 7, dtype=torch.float64, requires_grad=True)
    y = SmoothAbs.apply(x)
    print("y =", y)
    print("grad_fn:", y.grad_fn)
    print("gradcheck:", torch.autograd.gradcheck(SmoothAbs.apply, (x,)))
    print("gradgradcheck:", torch.autograd.gradgradcheck(SmoothAbs.apply, (x,)))


if __name__ == "__main__":
    main()
