"""``DistributedDataParallel``: one model replica per process, gradients averaged across them.

Construction checks that every rank holds the same parameters and broadcasts rank 0's
parameters and buffers, so all replicas start equal. Each forward (with grad enabled and sync
on) tells the reducer to expect a backward; during it the reducer averages gradients in buckets
whose nonblocking allreduces overlap the rest of backward (see ``distributed.reducer``). Buckets
hold parameters in reverse registration order (about the order backward produces their
gradients), the first limited to 1 MiB so that communication starts early, the others to
``bucket_cap_mb`` (25 MiB by default). torch starts from one bucket and re-buckets after the
first iteration by the order gradients arrived; here the buckets are fixed from the start.

Written on the public API: the module wraps ``module`` (so ``state_dict`` keys carry the
``module.`` prefix, as in torch), and all communication goes through ``retrograd.distributed``.
"""

from __future__ import annotations

import dataclasses
import warnings
from contextlib import contextmanager

import retrograd as torch
from retrograd import distributed as dist

from ..module import Module

__all__ = ["DistributedDataParallel"]

_MB = 1024 * 1024
_FIRST_BUCKET_BYTES = 1 * _MB
_DEFAULT_BUCKET_CAP_MB = 25


def bucket_assignment(sizes: list[int], dtypes: list, limits: list[int]) -> list[list[int]]:
    """Group tensors (given by byte size and dtype, in order) into buckets as torch's
    ``_compute_bucket_assignment_by_size`` does: per dtype, a bucket closes once it reaches its
    limit (``limits[k]`` for that dtype's ``k``-th bucket, the last limit repeating); buckets
    come out ordered by their first tensor.

    >>> bucket_assignment([600, 600, 600, 100], ["f"] * 4, [1000])
    [[0, 1], [2, 3]]
    """
    open_: dict = {}
    count: dict = {}
    done: list = []
    for i, (size, dt) in enumerate(zip(sizes, dtypes)):
        b = open_.setdefault(dt, [[], 0])
        b[0].append(i)
        b[1] += size
        k = count.get(dt, 0)
        if b[1] >= limits[min(k, len(limits) - 1)]:
            done.append(b[0])
            count[dt] = k + 1
            del open_[dt]
    done.extend(b[0] for b in open_.values() if b[0])
    return sorted(done, key=lambda ix: ix[0])


def _find_tensors(obj) -> list:
    """Every tensor inside a forward's output (tensors, lists, tuples, dicts, dataclasses)."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for x in obj for t in _find_tensors(x)]
    if isinstance(obj, dict):
        return [t for x in obj.values() for t in _find_tensors(x)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [t for f in dataclasses.fields(obj) for t in _find_tensors(getattr(obj, f.name))]
    return []


class DistributedDataParallel(Module):
    """Data parallelism across processes: wrap the model, train as usual.

    Every rank runs the same script on its own share of the data (see
    ``utils.data.distributed.DistributedSampler``); after ``loss.backward()`` each parameter's
    ``.grad`` holds the sum over ranks divided by the world size, identical on every rank, so
    the optimizers keep the replicas equal. ``no_sync()`` skips the averaging (gradient
    accumulation), ``find_unused_parameters=True`` allows parameters that a forward does not use.

    Inside a job (``mpiexec -n 2 python train.py``; docs/distributed.md has a whole script):

    >>> dist.init_process_group()                                    # doctest: +SKIP
    >>> model = DistributedDataParallel(nn.Linear(4, 2))             # doctest: +SKIP
    >>> loss_fn(model(x_of_this_rank), y_of_this_rank).backward()    # doctest: +SKIP
    >>> list(model.state_dict())                                     # doctest: +SKIP
    ['module.weight', 'module.bias']
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool | None = None, init_sync: bool = True,
                 process_group=None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params: bool = False, bucket_cap_mb_list=None,
                 batched_grad_copy: bool = False,
                 forward_sync_buffers: bool | None = None) -> None:
        super().__init__()
        if mixed_precision is not None or device_mesh is not None \
                or delay_all_reduce_named_params is not None:
            raise NotImplementedError("DistributedDataParallel: mixed_precision, device_mesh "
                                      "and delayed all-reduce are not supported by retrograd")
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        if self.process_group is None:
            dist.get_rank()  # raises torch's error: no default process group
        ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        self.parameters_to_ignore = ignore
        if not any(p.requires_grad for n, p in module.named_parameters() if n not in ignore):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids or output_device:
            devices = {p.device for p in module.parameters()}
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                f"{devices}.")
        if check_reduction:
            warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module "
                          "is deprecated. Please avoid using it.", stacklevel=2)
        if broadcast_buffers is not None:
            warnings.warn("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` "
                          "instead.", stacklevel=2)
        if forward_sync_buffers is not None:
            self.forward_sync_buffers, init_buffers = forward_sync_buffers, True
        else:
            flag = broadcast_buffers if broadcast_buffers is not None else True
            self.forward_sync_buffers = init_buffers = flag
        self.broadcast_buffers = self.forward_sync_buffers
        self.module = module
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True

        params = self._params_for_reducer()
        cap_mb = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * _MB)
        if bucket_cap_mb_list:
            limits = [int(c * _MB) for c in bucket_cap_mb_list]
        elif bucket_cap_mb is None:
            limits = [_FIRST_BUCKET_BYTES, self.bucket_bytes_cap]
        else:
            limits = [self.bucket_bytes_cap]
        order = list(range(len(params)))[::-1]   # reverse registration order
        buckets = bucket_assignment([params[i].numel() * params[i].element_size()
                                     for i in order],
                                    [params[i].dtype for i in order], limits)
        self.reducer = dist.Reducer(params, [[order[j] for j in ix] for ix in buckets],
                                    self.process_group, find_unused_parameters,
                                    gradient_as_bucket_view)
        if init_sync:
            # Every parameter (frozen ones too) and buffer starts as rank 0's, as in torch.
            states = [p for n, p in module.named_parameters() if n not in ignore]
            self._broadcast(states + self._buffers_to_sync(init_buffers))

    def _params_for_reducer(self) -> list:
        """Parameters that require grad, each once, in registration order (as torch)."""
        out, seen = [], set()
        for mname, m in self.module.named_modules():
            for pname, p in m.named_parameters(recurse=False):
                name = f"{mname}.{pname}" if mname else pname
                if p.requires_grad and name not in self.parameters_to_ignore \
                        and id(p) not in seen:
                    seen.add(id(p))
                    out.append(p)
        return out

    def _buffers_to_sync(self, wanted: bool = True) -> list:
        if not wanted:
            return []
        return [b for n, b in self.module.named_buffers() if n not in self.parameters_to_ignore]

    def _broadcast(self, tensors: list) -> None:
        """Rank 0's values into ``tensors`` on every rank, one broadcast per dtype (coalesced,
        as torch's ``_broadcast_coalesced``)."""
        by_dtype: dict = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        with torch.no_grad():
            for group in by_dtype.values():
                flat = torch.cat([t.detach().reshape(-1) for t in group])
                dist.broadcast(flat, group=self.process_group, group_src=0)
                off = 0
                for t in group:
                    n = t.numel()
                    t.copy_(flat[off:off + n].view(t.shape))
                    off += n

    # -- training ------------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self.require_forward_param_sync and self.forward_sync_buffers:
            bufs = self._buffers_to_sync()
            if bufs:
                self._broadcast(bufs)
        output = self.module(*inputs, **kwargs)
        if torch.is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            self.reducer.prepare_for_backward(
                _find_tensors(output) if self.find_unused_parameters else [])
        else:
            self.require_forward_param_sync = False
        return output

    @contextmanager
    def no_sync(self):
        """Gradients of backward passes whose forward runs inside accumulate locally, without
        communication; the first synchronised backward after it averages the sum.

        The forward must run inside the block (as in torch): it decides whether its backward
        synchronises.
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def train(self, mode: bool = True):
        super().train(mode)
        return self
