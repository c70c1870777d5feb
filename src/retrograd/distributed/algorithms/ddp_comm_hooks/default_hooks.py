"""torch's default DDP communication hooks: ``allreduce_hook`` (what DDP does without a hook),
``fp16_compress_hook`` and ``bf16_compress_hook`` (the bucket sent as float16 or bfloat16,
half the bytes, and cast back), and the wrappers that compress around another hook.

Register one with ``DistributedDataParallel.register_comm_hook(process_group, hook)``
(``None`` for the default group). torch runs ``bf16_compress_hook`` only with NCCL on a GPU;
retrograd's MPI backend reduces bfloat16 on CPU, so it runs here.

This module's annotations are evaluated (no ``from __future__ import annotations``): DDP
checks that a hook's annotations are ``dist.GradBucket`` and ``Future[Tensor]``.
"""

from collections.abc import Callable
from typing import Any

import retrograd as torch
import retrograd.distributed as dist
from retrograd.futures import Future

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook",
           "fp16_compress_wrapper", "bf16_compress_wrapper"]


def _allreduce_fut(process_group, tensor: torch.Tensor) -> Future[torch.Tensor]:
    """Average ``tensor`` across the group: divide, then an asynchronous allreduce."""
    group_to_use = process_group if process_group is not None else dist.group.WORLD
    tensor.div_(group_to_use.size())
    return (dist.all_reduce(tensor, group=group_to_use, async_op=True)
            .get_future().then(lambda fut: fut.value()[0]))


def allreduce_hook(process_group, bucket: dist.GradBucket) -> Future[torch.Tensor]:
    """Average the bucket by allreduce: the same gradients as DDP without a hook.

    >>> ddp_model.register_comm_hook(None, allreduce_hook)   # doctest: +SKIP
    """
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket: dist.GradBucket) -> Future[torch.Tensor]:
    group_to_use = process_group if process_group is not None else dist.group.WORLD
    world_size = group_to_use.size()
    buffer = bucket[0] if isinstance(bucket, tuple) else bucket.buffer()
    compressed = buffer.to(dtype).div_(world_size)

    def decompress(fut):
        value = fut if isinstance(fut, torch.Tensor) else fut.value()[0]
        buffer.copy_(value)
        return buffer

    return dist.all_reduce(compressed, group=group_to_use, async_op=True).get_future().then(
        decompress)


def fp16_compress_hook(process_group, bucket: dist.GradBucket) -> Future[torch.Tensor]:
    """Send the bucket as float16 divided by the group size, then cast the sum back.

    >>> ddp_model.register_comm_hook(None, fp16_compress_hook)   # doctest: +SKIP
    """
    return _compress_hook(torch.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket: dist.GradBucket) -> Future[torch.Tensor]:
    """Send the bucket as bfloat16 divided by the group size, then cast the sum back.

    >>> ddp_model.register_comm_hook(None, bf16_compress_hook)   # doctest: +SKIP
    """
    return _compress_hook(torch.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook: Callable[[Any, dist.GradBucket], Future[torch.Tensor]]):
    def wrapper_hook(hook_state, bucket: dist.GradBucket) -> Future[torch.Tensor]:
        # The wrapped hook sees the compressed buffer; the result is cast back into the
        # bucket's own.
        bucket.set_buffer(bucket.buffer().to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            decompressed = bucket.buffer()
            decompressed.copy_(fut.value())
            return decompressed

        return fut.then(decompress)

    return wrapper_hook


def fp16_compress_wrapper(hook):
    """``hook`` run on a float16 copy of the bucket, its result cast back to the bucket's
    dtype (``fp16_compress_wrapper(allreduce_hook)`` is ``fp16_compress_hook``)."""
    wrapped = _compress_wrapper(torch.float16, hook)
    wrapped.__name__ = wrapped.__qualname__ = "fp16_compress_wrapper_hook"
    return wrapped


def bf16_compress_wrapper(hook):
    """``hook`` run on a bfloat16 copy of the bucket, its result cast back."""
    wrapped = _compress_wrapper(torch.bfloat16, hook)
    wrapped.__name__ = wrapped.__qualname__ = "bf16_compress_wrapper_hook"
    return wrapped
