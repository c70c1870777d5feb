"""``retrograd.distributed.algorithms``: torch.distributed.algorithms' DDP communication hooks
(``ddp_comm_hooks.default_hooks``) and the ``join`` context manager for uneven inputs."""
