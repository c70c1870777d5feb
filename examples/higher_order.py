"""Gradients of gradients: a Hessian-vector product and Newton's method, with create_graph.

Run: python examples/higher_order.py
"""

import retrograd as torch


def rosenbrock(p):
    x, y = p[0], p[1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


def hessian(f, p):
    """The full Hessian, one row per backward through the gradient."""
    (g,) = torch.autograd.grad(f(p), p, create_graph=True)
    rows = [torch.autograd.grad(g[i], p, retain_graph=True)[0] for i in range(p.numel())]
    return g.detach(), torch.stack(rows)


def main() -> None:
    p = torch.tensor([-1.2, 1.0], dtype=torch.float64, requires_grad=True)
    # A Hessian-vector product without forming the Hessian: d/dp <grad f(p), v>.
    v = torch.tensor([1.0, 0.0], dtype=torch.float64)
    (g,) = torch.autograd.grad(rosenbrock(p), p, create_graph=True)
    (hv,) = torch.autograd.grad((g * v).sum(), p)
    print("H v at the start:", hv)
    # Newton's method converges to the minimum at (1, 1) in a few steps.
    for step in range(8):
        g, h = hessian(rosenbrock, p)
        with torch.no_grad():
            p -= torch.linalg.solve(h, g)
        print(f"step {step}: p = {p.detach().tolist()}, f = {rosenbrock(p).item():.3e}")


if __name__ == "__main__":
    main()
