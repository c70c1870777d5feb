"""``summary(model, *inputs)``: a model's layers, output shapes, parameters and the bytes each
layer's forward saved for backward, in the manner of torchinfo (built in, no add-on)."""

from __future__ import annotations

from .._tensor import Tensor
from ..autograd.graph_tools import saved_arrays, storage
from ..ops._apply import add_observer, remove_observer

__all__ = ["summary", "ModelSummary"]


def _shape_of(out):
    if isinstance(out, Tensor):
        return list(out.shape)
    if isinstance(out, (tuple, list)):
        return [_shape_of(o) for o in out]
    return "-"


class ModelSummary:
    """What ``summary`` found: ``rows`` (one dict per module: ``name``, ``type``,
    ``output_shape``, ``params``, ``saved_bytes``), ``total_params``, ``trainable_params``,
    ``param_bytes`` and ``saved_bytes``. ``str()`` is the table."""

    def __init__(self, rows, total_params, trainable_params, param_bytes, saved_bytes):
        self.rows = rows
        self.total_params = total_params
        self.trainable_params = trainable_params
        self.param_bytes = param_bytes
        self.saved_bytes = saved_bytes

    def __str__(self) -> str:
        head = ("layer (type)", "output shape", "params", "saved bytes")
        body = [(("  " * r["depth"]) + f"{r['name'] or '(model)'} ({r['type']})",
                 str(r["output_shape"]), f"{r['params']:,}", f"{r['saved_bytes']:,}")
                for r in self.rows]
        widths = [max(len(x[i]) for x in [head, *body]) for i in range(4)]

        def line(cells):
            return "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

        rule = "-" * len(line(head))
        out = [rule, line(head), rule, *map(line, body), rule]
        out += [
            f"total params: {self.total_params:,}",
            f"trainable params: {self.trainable_params:,}",
            f"non-trainable params: {self.total_params - self.trainable_params:,}",
            f"params size: {self.param_bytes:,} bytes",
            f"saved for backward: {self.saved_bytes:,} bytes",
            rule,
        ]
        return "\n".join(out)

    __repr__ = __str__


def summary(model, *example_inputs, **kwargs) -> ModelSummary:
    """Run ``model(*example_inputs, **kwargs)`` once and tabulate each module: its type, output
    shape, parameter count (its own and its children's) and the bytes of saved tensors its
    forward (children included) created for backward. Shared storage counts once per row.

    >>> import retrograd as torch
    >>> from retrograd import nn
    >>> s = summary(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)), torch.ones(3, 4))
    >>> s.total_params, s.trainable_params, s.rows[1]["output_shape"]
    (58, 58, [3, 8])
    """
    stack: list = []
    nodes: dict = {}  # module id -> nodes created while it ran
    outputs: dict = {}
    handles = []

    def pre(mod, args):
        stack.append(mod)

    def post(mod, args, out):
        stack.pop()
        outputs[id(mod)] = _shape_of(out)

    def observe(P, inputs, attrs, run):
        r = run()
        first = r[0] if isinstance(r, tuple) and r else r
        fn = getattr(first, "grad_fn", None)
        if fn is not None:
            for m in stack:
                nodes.setdefault(id(m), []).append(fn)
        return r

    modules = list(model.named_modules())
    for _, m in modules:
        handles.append(m.register_forward_pre_hook(pre))
        handles.append(m.register_forward_hook(post))
    add_observer(observe)
    try:
        model(*example_inputs, **kwargs)
    finally:
        remove_observer(observe)
        for h in handles:
            h.remove()

    names = {id(m): n for n, m in modules}
    rows = []
    for name, m in modules:
        seen: set = set()
        nbytes = 0
        for fn in nodes.get(id(m), ()):
            for _, a in saved_arrays(fn):
                s = storage(a)
                if id(s) not in seen:
                    seen.add(id(s))
                    nbytes += s.nbytes
        rows.append({
            "name": names[id(m)],
            "depth": name.count(".") + (1 if name else 0),
            "type": type(m).__name__,
            "output_shape": outputs.get(id(m), "-"),
            "params": sum(p.numel() for p in m.parameters()),
            "saved_bytes": nbytes,
        })
    params = list(model.parameters())
    total = sum(p.numel() for p in params)
    trainable = sum(p.numel() for p in params if p.requires_grad)
    param_bytes = sum(p.numel() * p.element_size() for p in params)
    return ModelSummary(rows, total, trainable, param_bytes, rows[0]["saved_bytes"])
