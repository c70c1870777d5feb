"""Op table entries for ``retrograd.special`` (the ``torch.special`` namespace)."""

from __future__ import annotations

from .op_table import OpInfo

_S = [((3, 4),), ((),), ((0, 2),)]

OPS = [
    OpInfo("special_expit", lambda lib, a: lib.special.expit(a), _S),
    OpInfo("special_ndtr", lambda lib, a: lib.special.ndtr(a), _S),
    OpInfo("special_ndtri", lambda lib, a: lib.special.ndtri(a), _S, low=0.05, high=0.95),
    OpInfo("special_log_ndtr", lambda lib, a: lib.special.log_ndtr(a), _S, low=-3, high=2),
    OpInfo("special_entr", lambda lib, a: lib.special.entr(a), _S, low=0.1, high=2),
    OpInfo("special_xlog1py", lambda lib, a, b: lib.special.xlog1py(a, b),
           [((3, 4), (3, 4)), ((3, 4), (4,))], low=0.1, high=2),
    OpInfo("special_sinc", lambda lib, a: lib.special.sinc(a), _S, positive_gap=0.1),
    OpInfo("special_gammaln", lambda lib, a: lib.special.gammaln(a), _S, low=0.5, high=3),
    OpInfo("special_psi", lambda lib, a: lib.special.psi(a), _S, low=0.5, high=3),
    OpInfo("special_erfinv", lambda lib, a: lib.special.erfinv(a), _S, low=-0.9, high=0.9),
    OpInfo("special_logsumexp", lambda lib, a: lib.special.logsumexp(a, -1), [((3, 4),)]),
    OpInfo("special_softmax", lambda lib, a: lib.special.softmax(a, 0), [((3, 4),)]),
]
