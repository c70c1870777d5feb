"""``retrograd.optim``: optimizers and learning-rate schedulers, as in ``torch.optim``."""

from . import lr_scheduler
from .adadelta import Adadelta, Adamax
from .adafactor import Adafactor, Muon
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .asgd import ASGD, Rprop
from .lbfgs import LBFGS
from .nadam import NAdam, RAdam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "LBFGS",
    "lr_scheduler", "NAdam", "RAdam", "ASGD", "Rprop",
    "Adafactor", "Muon", "swa_utils",
]
