"""Which nodes a backward pass with targets (``autograd.grad``'s inputs, ``backward(inputs=)``)
runs: only those from which some target can be reached, so that no gradient is computed that
flows nowhere. The engine (engine.py) computes the set once per pass and routes gradients only
to its members.
"""

from __future__ import annotations

from operator import attrgetter, itemgetter

__all__ = ["reaching", "reaching_closed", "runs", "SEQ"]


def runs(fn, reach) -> bool:
    """With targets, a node runs only if one of its inputs leads to a target."""
    for nxt, _ in fn.next_functions:
        if nxt is not None and nxt in reach:
            return True
    return False


def reaching(root_edges, targets) -> set:
    """The nodes from which some target can be reached (targets included): every node the
    roots reach, taken oldest first (a node is made after the nodes its edges lead to, the
    order the engine's walk relies on too), is in when a target or one of its inputs is.

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0], requires_grad=True)
    >>> y = torch.tensor([2.0], requires_grad=True)
    >>> z = x * 2 + y.exp()
    >>> acc = z.grad_fn.next_functions[0][0].next_functions[0][0]
    >>> sorted(fn.name() for fn in reaching([(z.grad_fn, 0)], {acc}))
    ['AddBackward0', 'MulBackward0', 'torch::autograd::AccumulateGrad']
    """
    return reaching_closed(root_edges, targets)[0]


def reaching_closed(root_edges, targets) -> tuple:
    """``(reaching(root_edges, targets), closed)``: ``closed`` when every node the roots reach
    leads to a target (no branch ends elsewhere, at another leaf or a node without inputs)."""
    # (map/any over the edges keep the per-edge work in C: this runs before every pass.)
    seen = {None}
    stack = list(map(_NODE, root_edges))
    ends_in_targets = True
    while stack:
        fn = stack.pop()
        if fn not in seen:
            seen.add(fn)
            nf = fn.next_functions
            if ends_in_targets and not any(map(_NODE, nf)) and fn not in targets:
                ends_in_targets = False  # a dead end: some nodes may not lead to a target
            stack.extend(map(_NODE, nf))
    seen.discard(None)
    if ends_in_targets:
        return seen, True  # every path ends at a target: every node leads to one
    reach = set()
    has = reach.__contains__
    for fn in sorted(seen, key=_SEQ):
        if fn in targets or any(map(has, map(_NODE, fn.next_functions))):
            reach.add(fn)
    return reach, False


SEQ = _SEQ = attrgetter("_seq")  # a node's creation number
_NODE = itemgetter(0)
