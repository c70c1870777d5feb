"""Learning-rate schedulers, as ``torch.optim.lr_scheduler``: each ``step()`` writes a new
``lr`` into the optimizer's groups.

``base`` holds ``LRScheduler`` and the shared helpers; ``basic`` the formula schedulers and
the two that combine others (``SequentialLR``, ``ChainedScheduler``); ``cyclic`` the
per-batch cyclical ones; ``plateau`` ``ReduceLROnPlateau``.
"""

from .base import EPOCH_DEPRECATION_WARNING, LRScheduler, _LRScheduler
from .basic import *  # noqa: F403
from .basic import __all__ as _basic_all
from .cyclic import *  # noqa: F403
from .cyclic import __all__ as _cyclic_all
from .plateau import ReduceLROnPlateau

__all__ = ["LRScheduler", *_basic_all, *_cyclic_all, "ReduceLROnPlateau"]
