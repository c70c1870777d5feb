"""``retrograd.optim``: optimizers and learning-rate schedulers, as in ``torch.optim``."""

from . import lr_scheduler
from .adadelta import Adadelta, Adamax
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "LBFGS",
    "lr_scheduler",
]
