"""``retrograd.nn.functional``: the functional form of every layer, losses and activations.

Each topic lives in its own module; this package gathers their ``__all__``.
"""

from . import (
    activation,
    attention,
    bags,
    conv,
    loss,
    loss_margin,
    misc,
    norm,
    pooling3d,
    sampling,
    vision,
)
from .activation import *  # noqa: F403
from .attention import *  # noqa: F403
from .bags import *  # noqa: F403
from .conv import *  # noqa: F403
from .loss import *  # noqa: F403
from .loss_margin import *  # noqa: F403
from .misc import *  # noqa: F403
from .norm import *  # noqa: F403
from .pooling3d import *  # noqa: F403
from .sampling import *  # noqa: F403
from .vision import *  # noqa: F403

__all__ = (list(activation.__all__) + list(attention.__all__) + list(conv.__all__)
           + list(loss.__all__) + list(misc.__all__) + list(norm.__all__)
           + list(loss_margin.__all__) + list(pooling3d.__all__) + list(sampling.__all__)
           + list(vision.__all__) + list(bags.__all__))
