"""DDP communication hooks, as ``torch.distributed.algorithms.ddp_comm_hooks``: the default
ones (allreduce, fp16 and bf16 compression) are in :mod:`.default_hooks`."""

from . import default_hooks

__all__ = ["default_hooks"]
