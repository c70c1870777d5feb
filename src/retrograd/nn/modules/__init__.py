"""The layers of ``retrograd.nn``, one family per module."""

from .. import module
from ..module import Module
from . import (
    activation,
    adaptive,
    conv,
    distance,
    dropout,
    flatten,
    lazy,
    linear,
    loss,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
)
from .activation import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .container import (
    Container,
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .lazy import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403

__all__ = ["Module", "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict"]
for _m in (activation, adaptive, conv, distance, dropout, flatten, lazy, linear, loss,
           normalization, padding, pixelshuffle, pooling, rnn, sparse, transformer):
    __all__ += list(_m.__all__)

