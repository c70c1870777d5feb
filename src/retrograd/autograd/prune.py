"""Which nodes a backward pass with targets (``autograd.grad``'s inputs, ``backward(inputs=)``)
runs: only those from which some target can be reached, so that no gradient is computed that
flows nowhere. The engine (engine.py) computes the set once per pass and routes gradients only
to its members.
"""

from __future__ import annotations

__all__ = ["reaching", "runs"]


def runs(fn, reach) -> bool:
    """With targets, a node runs only if one of its inputs leads to a target."""
    for nxt, _ in fn.next_functions:
        if nxt is not None and nxt in reach:
            return True
    return False


def reaching(root_edges, targets) -> set:
    """The nodes from which some target can be reached (targets included): a depth-first walk
    from the roots, without recursion, deciding each node once all its inputs are decided.

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0], requires_grad=True)
    >>> y = torch.tensor([2.0], requires_grad=True)
    >>> z = x * 2 + y.exp()
    >>> acc = z.grad_fn.next_functions[0][0].next_functions[0][0]
    >>> sorted(fn.name() for fn in reaching([(z.grad_fn, 0)], {acc}))
    ['AddBackward0', 'MulBackward0', 'torch::autograd::AccumulateGrad']
    """
    reach = set()
    done = set()
    for root, _ in root_edges:
        if root in done:
            continue
        done.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            fn, it = stack[-1]
            for nxt, _ in it:
                if nxt is not None and nxt not in done:
                    done.add(nxt)
                    stack.append((nxt, iter(nxt.next_functions)))
                    break
            else:
                stack.pop()
                if fn in targets:
                    reach.add(fn)
                    continue
                for nxt, _ in fn.next_functions:
                    if nxt in reach:  # (None is never in it)
                        reach.add(fn)
                        break
    return reach
