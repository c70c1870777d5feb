"""``DistributedDataParallel``: one model replica per process, gradients averaged across them.

Construction checks that every rank holds the same parameters and broadcasts rank 0's
parameters and buffers, so all replicas start equal. Each forward (with grad enabled and sync
on) tells the reducer to expect a backward; during it the reducer averages gradients in buckets
whose allreduces overlap the rest of backward (see ``distributed.reducer``). Bucketing is
torch's: the first iteration reduces all gradients in one bucket (with
``find_unused_parameters``, buckets in reverse registration order, the first limited to 1 MiB
and the others to ``bucket_cap_mb``); the next forward re-buckets them in the order their
gradients arrived in that first backward (the first bucket limited to 1 MiB, so that
communication starts early, the others to ``bucket_cap_mb``, 25 MiB by default), rank 0's order
for every rank.

Written on the public API: the module wraps ``module`` (so ``state_dict`` keys carry the
``module.`` prefix, as in torch), and all communication goes through ``retrograd.distributed``.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import time
import warnings
from contextlib import contextmanager

import retrograd as torch
from retrograd import distributed as dist
from retrograd.distributed.algorithms.join import Join, Joinable, JoinHook, _JoinConfig

from ..module import Module

__all__ = ["DistributedDataParallel"]

_MB = 1024 * 1024
_FIRST_BUCKET_BYTES = 1 * _MB
_DEFAULT_BUCKET_CAP_MB = 25


def bucket_assignment(sizes: list[int], dtypes: list, limits: list[int],
                      ready_order: bool = False) -> list[list[int]]:
    """Group tensors (given by byte size and dtype, in order) into buckets as torch's
    ``_compute_bucket_assignment_by_size`` does: per dtype, a bucket closes once it reaches its
    limit (``limits[k]`` for that dtype's ``k``-th bucket, the last limit repeating); buckets
    come out ordered by their first tensor. With ``ready_order`` (the tensors in the order
    their gradients arrived, as when torch re-buckets) they come out as they closed, then the
    unclosed ones, in reverse order of their dtype's first tensor (the order torch's hash map
    yields them in).

    >>> bucket_assignment([600, 600, 600, 100], ["f"] * 4, [1000])
    [[0, 1], [2, 3]]
    """
    open_: dict = {}   # dtype -> [indices, bytes]; a dtype keeps its place once seen
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
            open_[dt] = [[], 0]
    rest = [b[0] for b in open_.values() if b[0]]
    if ready_order:
        return done + rest[::-1]
    return sorted(done + rest, key=lambda ix: ix[0])


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


class _DDPJoinHook(JoinHook):
    """DDP's side of ``Join``: a joined rank shadows the collectives of one iteration of the
    ranks still training (re-bucketing, buffers, whether to sync, the bucket allreduces with
    zero gradients), and in the end every rank takes the last joiner's model."""

    def __init__(self, ddp, divide_by_initial_world_size: bool) -> None:
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self) -> None:
        ddp = self.ddp
        ddp._rebuild_buckets()
        ddp._sync_buffers_before_forward(joined=True)
        should_sync = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync
        if not should_sync:
            return
        ddp.reducer.match_backward()
        # A rank that joins before its first backward re-buckets with the others next round.
        if ddp.reducer.ready_order is not None:
            ddp.reducer.ready_order = list(range(len(ddp._params)))

    def post_hook(self, is_last_joiner: bool) -> None:
        self.ddp._sync_final_model(is_last_joiner)


class DistributedDataParallel(Module, Joinable):
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
        self._join_config = _JoinConfig.construct_disabled_join_config()
        self._divide_by_initial_world_size = True
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
        default_cap = bucket_cap_mb is None and not bucket_cap_mb_list
        if bucket_cap_mb_list:
            cap_mb = max(bucket_cap_mb_list)
        else:
            cap_mb = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * _MB)
        first_cap = _FIRST_BUCKET_BYTES if default_cap else self.bucket_bytes_cap
        # torch's limits: the first iteration in one bucket unless unused parameters are
        # looked for (the order of gradients is unknown yet), then re-bucketed in the order
        # they arrived.
        if bucket_cap_mb_list:
            limits = self._rebuild_limits = [int(c * _MB) for c in bucket_cap_mb_list]
        else:
            self._rebuild_limits = [first_cap, self.bucket_bytes_cap]
            if static_graph or not find_unused_parameters:
                limits = [sys.maxsize]
            else:
                limits = [first_cap, self.bucket_bytes_cap]
        self._params = params
        buckets = bucket_assignment([p.numel() * p.element_size() for p in params],
                                    [p.dtype for p in params], limits)[::-1]
        self._bucket_sizes = [self._bytes(ix) for ix in buckets]
        self._rebuilt: list | None = None
        self.reducer = dist.Reducer(params, buckets, self.process_group, find_unused_parameters,
                                    gradient_as_bucket_view,
                                    record_ready_order=static_graph or not find_unused_parameters)
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
        """The module's buffers (less the ignored ones), listed once at construction as torch
        does (not walked again at every forward)."""
        if not wanted:
            return []
        bufs = self.__dict__.get("_sync_buffer_list")
        if bufs is None:
            bufs = self.__dict__["_sync_buffer_list"] = [
                b for n, b in self.module.named_buffers() if n not in self.parameters_to_ignore]
        return bufs

    def _broadcast(self, tensors: list, src: int = 0) -> None:
        """Rank ``src``'s values into ``tensors`` on every rank, one broadcast per dtype
        (coalesced, as torch's ``_broadcast_coalesced``)."""
        by_dtype: dict = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        with torch.no_grad():
            for group in by_dtype.values():
                flat = torch.cat([t.detach().reshape(-1) for t in group])
                dist.broadcast(flat, group=self.process_group, group_src=src)
                off = 0
                for t in group:
                    n = t.numel()
                    t.copy_(flat[off:off + n].view(t.shape))
                    off += n

    # -- training ------------------------------------------------------------------------------
    def _bytes(self, ix) -> int:
        return sum(self._params[i].numel() * self._params[i].element_size() for i in ix)

    def _rebuild_buckets(self) -> bool:
        """After the first synchronised backward, re-bucket in the order its gradients arrived
        (torch's ``_rebuild_buckets``, once); returns whether it did."""
        order = self.reducer.ready_order
        if order is None or self._rebuilt is not None:
            return False
        self.reducer.ensure_prior_reduction_finished()
        if len(order) != len(self._params):
            return False   # no synchronised backward yet
        ps = [self._params[i] for i in order]
        buckets = bucket_assignment([p.numel() * p.element_size() for p in ps],
                                    [p.dtype for p in ps], self._rebuild_limits,
                                    ready_order=True)
        self.reducer.rebuild([[order[j] for j in ix] for ix in buckets])
        self._rebuilt = self.reducer.bucket_indices
        return True

    def forward(self, *inputs, **kwargs):
        self._forward_start = time.perf_counter_ns()
        divisor = dist.get_world_size(self.process_group)
        work = Join.notify_join_context(self)
        if work is not None:
            # Inside join(): the count of ranks still training, the divisor of this
            # iteration's gradients unless divide_by_initial_world_size.
            work.wait()
            if not self._divide_by_initial_world_size:
                divisor = int(work.result()[0].item())
        self.reducer.set_divisor(divisor)
        if torch.is_grad_enabled():
            self._rebuild_buckets()
        self._sync_buffers_before_forward(joined=False)
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        output = self.module(*inputs, **kwargs)
        if torch.is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            self.reducer.prepare_for_backward(
                _find_tensors(output) if self.find_unused_parameters else [])
        else:
            self.require_forward_param_sync = False
        return output

    def _sync_buffers_before_forward(self, joined: bool) -> None:
        """Buffers from rank 0 (in a join, from a rank still training) before a forward."""
        if not (self.require_forward_param_sync and self.forward_sync_buffers):
            return
        bufs = self._buffers_to_sync()
        if bufs:
            src = 0
            if self._join_config.enable:
                src = self._find_common_rank(dist.get_rank(self.process_group), not joined)
            self._broadcast(bufs, src)

    def _check_global_requires_backward_grad_sync(self, is_joined_rank: bool):
        """Whether the ranks still training synchronise this iteration's backward."""
        want = not is_joined_rank and self.require_backward_grad_sync
        flag = torch.ones(1) if want else torch.zeros(1)
        dist.all_reduce(flag, group=self.process_group)
        return flag.item() != 0 if is_joined_rank else None

    def _find_common_rank(self, input_rank: int, rank_cond: bool) -> int:
        """The largest rank among those where ``rank_cond`` holds."""
        rank_to_use = torch.tensor([input_rank if rank_cond else -1])
        dist.all_reduce(rank_to_use, op=dist.ReduceOp.MAX, group=self.process_group)
        if rank_to_use.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process. "
                             "This indicates a bug in PyTorch, please report an issue.")
        return int(rank_to_use.item())

    def _sync_final_model(self, is_last_joiner: bool) -> None:
        """Every rank takes the parameters (and buffers) of the last rank to join."""
        src = self._find_common_rank(dist.get_rank(self.process_group), is_last_joiner)
        states = [p for n, p in self.module.named_parameters()
                  if n not in self.parameters_to_ignore]
        self._broadcast(states + self._buffers_to_sync(self.forward_sync_buffers), src)

    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False) -> Join:
        """A context manager for training with uneven inputs: a rank that runs out of
        batches leaves the block and shadows the others' collectives until all are done, then
        every rank takes the model of the last to finish. Gradients are divided by the
        initial world size (the joined ranks count as zeros), or with
        ``divide_by_initial_world_size=False`` by the number of ranks still training.

        >>> with ddp.join():                              # doctest: +SKIP
        ...     for x, y in this_ranks_batches:           # fewer on some ranks
        ...         opt.zero_grad(); loss_fn(ddp(x), y).backward(); opt.step()
        """
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs) -> JoinHook:
        """DDP's ``JoinHook`` (``divide_by_initial_world_size`` from ``kwargs``)."""
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return torch.device("cpu")

    @property
    def join_process_group(self):
        return self.process_group

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

    def register_comm_hook(self, state: object, hook) -> None:
        """Reduce each bucket with ``hook(state, bucket)`` instead of averaging it: the hook
        gets a ``dist.GradBucket`` (gradients not divided by the world size) and returns a
        ``retrograd.futures.Future`` of the reduced flat tensor, which becomes the gradients.
        ``distributed.algorithms.ddp_comm_hooks.default_hooks`` has torch's ``allreduce_hook``,
        ``fp16_compress_hook`` and ``bf16_compress_hook``. Register it once, before training.

        >>> from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks
        >>> ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)  # doctest: +SKIP
        """
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        sig = inspect.signature(hook)
        bucket = sig.parameters.get("bucket")
        if bucket is not None and bucket.annotation not in (inspect.Parameter.empty,
                                                            dist.GradBucket):
            raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        if sig.return_annotation not in (inspect.Signature.empty,
                                         torch.futures.Future[torch.Tensor]):
            raise ValueError("Communication hook: return annotation should be "
                             "torch.futures.Future[torch.Tensor].")
        self.reducer.register_comm_hook(state, hook)

    def _get_ddp_logging_data(self) -> dict:
        """torch's DDP logging data (a subset): the configuration, the buckets, and the
        average timings of the synchronised backward passes so far, in ns (torch samples
        some iterations; here every one counts)."""
        r = self.reducer
        data = {"world_size": dist.get_world_size(self.process_group),
                "rank": dist.get_rank(self.process_group),
                "module_name": type(self.module).__name__, "backend_name": "mpi",
                "bucket_cap_bytes": self.bucket_bytes_cap,
                "find_unused_parameters": int(self.find_unused_parameters),
                "gradient_as_bucket_view": int(self.gradient_as_bucket_view),
                "static_graph": int(self.static_graph),
                "broadcast_buffers": int(self.forward_sync_buffers),
                "num_parameter_tensors": len(self._params),
                "total_parameter_size_bytes": self._bytes(range(len(self._params))),
                "dtypes": ", ".join(sorted({str(p.dtype).split(".")[-1]
                                            for p in self._params})),
                "bucket_sizes": ", ".join(map(str, self._bucket_sizes)),
                "has_rebuilt_buckets": int(self._rebuilt is not None)}
        if self._rebuilt is not None:
            data["rebuilt_bucket_sizes"] = ", ".join(str(self._bytes(ix)) for ix in self._rebuilt)
            data["rebuilt_per_bucket_param_indices"] = ", ".join(
                " ".join(map(str, ix)) for ix in self._rebuilt)
        if r.stats_count:
            data.update(r.stats)
            data.update({"avg_" + k: v // r.stats_count for k, v in r.stats_sum.items()})
        return data

    def train(self, mode: bool = True):
        super().train(mode)
        return self
