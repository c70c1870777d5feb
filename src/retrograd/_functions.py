"""Top-level function forms PyTorch exposes beside its methods and ``nn.functional``.

- In-place function forms: ``torch.relu_(x)`` is ``x.relu_()``, for every in-place method
  PyTorch also exposes at the top level.
- The ATen-level neural-network functions at the top level (``torch.conv2d``,
  ``torch.dropout(input, p, train)``, ``torch.layer_norm``, ``torch.embedding(weight,
  indices)``, ...), with PyTorch's positional signatures (losses take ``reduction`` as
  PyTorch's integer enum: 0 none, 1 mean, 2 sum); each calls ``nn.functional``.
- The functions PyTorch keeps only to say they were removed (``torch.eig``, ``torch.symeig``,
  ``torch.matrix_rank``, ``torch.lstsq``, ``torch.solve``), with PyTorch's error.

>>> import retrograd as torch
>>> x = torch.tensor([-1.0, 2.0])
>>> torch.relu_(x)
tensor([0., 2.])
>>> x
tensor([0., 2.])
"""

from __future__ import annotations

from . import linalg, special
from ._tensor import Tensor
from .nn import functional as F
from .ops._autocast import fp32
from .ops._core import arg_error
from .ops.linalg_composite import geqrf, householder_product, ormqr
from .ops.linalg_composite import lu_unpack as _lu_unpack

_INPLACE = (
    "abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ "
    "atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ detach_ erf_ "
    "erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ gcd_ index_put_ lcm_ ldexp_ log10_ log1p_ "
    "log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ "
    "sigmoid_ sin_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_ sinc_"
).split()

__all__ = list(_INPLACE) + [
    "sinc", "detach", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "avg_pool1d", "max_pool1d", "max_pool2d",
    "max_pool3d", "max_pool1d_with_indices", "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
    "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "batch_norm",
    "layer_norm", "group_norm", "instance_norm", "rms_norm", "bilinear", "cosine_similarity",
    "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "embedding",
    "kl_div", "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
    "poisson_nll_loss", "triplet_margin_loss", "binary_cross_entropy_with_logits", "rrelu",
    "rrelu_", "selu_", "celu_", "threshold_", "eig", "symeig", "matrix_rank", "lstsq", "solve",
    "cholesky", "cholesky_solve", "cholesky_inverse", "matrix_exp", "lu", "lu_solve",
    "lu_unpack", "geqrf", "orgqr", "ormqr",
]

orgqr = householder_product

_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _inplace_form(name: str):
    def fn(input, *args, **kwargs):  # noqa: A002
        try:
            method = getattr(input, name)
        except AttributeError:  # not a tensor: PyTorch's TypeError (free when all is well)
            if not isinstance(input, Tensor):
                raise arg_error(name, "input", 1, input) from None
            raise
        return method(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(x, ...)`` is ``x.{name}(...)``: in place."
    return fn


for _name in _INPLACE:
    globals()[_name] = _inplace_form(_name)
del _name


def sinc(input: Tensor) -> Tensor:  # noqa: A002
    """The normalised sinc, ``sin(pi x) / (pi x)`` (``torch.special.sinc``)."""
    return special.sinc(input)


def _sinc_(self: Tensor) -> Tensor:
    return self.copy_(special.sinc(self))


def detach(input: Tensor) -> Tensor:  # noqa: A002
    """``input.detach()``."""
    return input.detach()


# -- the ATen-level nn functions ----------------------------------------------------------------
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """``nn.functional.conv1d``."""
    return F.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """``nn.functional.conv2d``."""
    return F.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """``nn.functional.conv3d``."""
    return F.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups=1, dilation=1):
    """``nn.functional.conv_transpose1d``."""
    return F.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups=1, dilation=1):
    """``nn.functional.conv_transpose2d``."""
    return F.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups=1, dilation=1):
    """``nn.functional.conv_transpose3d``."""
    return F.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True):
    """``nn.functional.avg_pool1d``."""
    return F.avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):  # noqa: A002
    """``nn.functional.max_pool1d``."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):  # noqa: A002
    """``nn.functional.max_pool2d``."""
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):  # noqa: A002
    """``nn.functional.max_pool3d``."""
    return F.max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False):
    """``(values, indices)`` of ``max_pool1d``."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode,
                        return_indices=True)


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """``nn.functional.adaptive_avg_pool1d``."""
    return F.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):  # noqa: A002
    """``(values, indices)``: at the top level PyTorch always returns both."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def dropout(input, p: float, train: bool):  # noqa: A002
    """``nn.functional.dropout(input, p, training=train)``."""
    return F.dropout(input, p, train)


def dropout_(input, p: float, train: bool):  # noqa: A002
    """Dropout in place."""
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input, p: float, train: bool):  # noqa: A002
    """``nn.functional.alpha_dropout``."""
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input, p: float, train: bool):  # noqa: A002
    """Alpha dropout in place."""
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p: float, train: bool):  # noqa: A002
    """Dropout of whole channels (dim 1), as ``nn.functional.dropout2d``."""
    return F.dropout2d(input, p, train)


def feature_dropout_(input, p: float, train: bool):  # noqa: A002
    """Channel dropout in place."""
    return F.dropout2d(input, p, train, inplace=True)


def feature_alpha_dropout(input, p: float, train: bool):  # noqa: A002
    """``nn.functional.feature_alpha_dropout``."""
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p: float, train: bool):  # noqa: A002
    """Feature alpha dropout in place."""
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,  # noqa: A002
               cudnn_enabled=True):
    """``nn.functional.batch_norm`` with PyTorch's ATen argument order."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5,  # noqa: A002
               cudnn_enable=True):
    """``nn.functional.layer_norm``."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):  # noqa: A002
    """``nn.functional.group_norm``."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,  # noqa: A002
                  momentum, eps, cudnn_enabled=True):
    """``nn.functional.instance_norm`` with PyTorch's ATen argument order."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    """``nn.functional.rms_norm``."""
    return F.rms_norm(input, normalized_shape, weight, eps)


def bilinear(input1, input2, weight, bias=None):
    """``nn.functional.bilinear``."""
    return F.bilinear(input1, input2, weight, bias)


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    """``nn.functional.cosine_similarity``."""
    return F.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """``nn.functional.pairwise_distance``."""
    return F.pairwise_distance(x1, x2, p, eps, keepdim)


def pixel_shuffle(input, upscale_factor: int):  # noqa: A002
    """``nn.functional.pixel_shuffle``."""
    return F.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor: int):  # noqa: A002
    """``nn.functional.pixel_unshuffle``."""
    return F.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups: int):  # noqa: A002
    """``nn.functional.channel_shuffle``."""
    return F.channel_shuffle(input, groups)


def embedding(weight, indices, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False):
    """``nn.functional.embedding(indices, weight)``: the ATen form takes the weight first."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def kl_div(input, target, reduction: int = 1, *, log_target: bool = False):  # noqa: A002
    """``nn.functional.kl_div`` (``reduction`` as PyTorch's integer enum)."""
    return F.kl_div(input, target, reduction=_REDUCTION[reduction], log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1):
    """``nn.functional.margin_ranking_loss`` (integer ``reduction``)."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_REDUCTION[reduction])


def hinge_embedding_loss(input, target, margin: float = 1.0, reduction: int = 1):  # noqa: A002
    """``nn.functional.hinge_embedding_loss`` (integer ``reduction``)."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_REDUCTION[reduction])


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, reduction: int = 1):
    """``nn.functional.cosine_embedding_loss`` (integer ``reduction``)."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_REDUCTION[reduction])


def poisson_nll_loss(input, target, log_input, full, eps, reduction):  # noqa: A002
    """``nn.functional.poisson_nll_loss`` (all arguments positional, integer ``reduction``)."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_REDUCTION[reduction])


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 1):
    """``nn.functional.triplet_margin_loss`` (integer ``reduction``)."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_REDUCTION[reduction])


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,  # noqa: A002
                                     reduction: int = 1):
    """``nn.functional.binary_cross_entropy_with_logits`` (integer ``reduction``)."""
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_REDUCTION[reduction],
                                              pos_weight=pos_weight)


def rrelu(input, lower: float = 1 / 8, upper: float = 1 / 3, training: bool = False,  # noqa: A002
          generator=None):
    """``nn.functional.rrelu``."""
    return F.rrelu(input, lower, upper, training)


def rrelu_(input, lower: float = 1 / 8, upper: float = 1 / 3, training: bool = False,  # noqa: A002
           generator=None):
    """``nn.functional.rrelu`` in place."""
    return F.rrelu(input, lower, upper, training, inplace=True)


def selu_(input):  # noqa: A002
    """``nn.functional.selu`` in place."""
    return F.selu(input, inplace=True)


def celu_(input, alpha: float = 1.0):  # noqa: A002
    """``nn.functional.celu`` in place."""
    return F.celu(input, alpha, inplace=True)


def threshold_(input, threshold: float, value: float):  # noqa: A002
    """``nn.functional.threshold`` in place."""
    return F.threshold(input, threshold, value, inplace=True)


# -- linear algebra under its old top-level names ------------------------------------------------
@fp32
def cholesky(input, upper: bool = False):  # noqa: A002
    """The Cholesky factor (lower, or upper with ``upper=True``): ``linalg.cholesky``."""
    return linalg.cholesky(input, upper=upper)


@fp32
def cholesky_solve(B, L, upper: bool = False):  # noqa: N803
    """Solve ``A X = B`` given the Cholesky factor of ``A``."""
    L = L.mT if upper else L
    y = linalg.solve_triangular(L, B, upper=False)
    return linalg.solve_triangular(L.mT, y, upper=True)


@fp32
def cholesky_inverse(L, upper: bool = False):  # noqa: N803
    """The inverse of ``A`` from its Cholesky factor."""
    eye = L.new_zeros(L.shape[-1:] * 2)
    eye.diagonal().fill_(1.0)
    return cholesky_solve(eye.expand(L.shape), L, upper)


def matrix_exp(A):  # noqa: N803
    """The matrix exponential ``linalg.matrix_exp``."""
    return linalg.matrix_exp(A)


def lu(A, pivot: bool = True, get_infos: bool = False):  # noqa: N803
    """``(LU, pivots)`` (and ``infos`` with ``get_infos``): ``linalg.lu_factor_ex``.

    >>> import retrograd as torch
    >>> torch.lu(torch.tensor([[1., 2.], [3., 4.]]))[1].tolist()
    [2, 2]
    """
    LU, pivots, info = linalg.lu_factor_ex(A, pivot=pivot)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def lu_solve(b, LU_data, LU_pivots):  # noqa: N803
    """Solve ``A x = b`` from ``A``'s LU factorization (``linalg.lu_solve(LU, pivots, b)``)."""
    return linalg.lu_solve(LU_data, LU_pivots, b)


def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True):  # noqa: N803
    """``(P, L, U)`` from a packed LU factorization."""
    return _lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


def _removed(name: str, text: str):
    def fn(*args, **kwargs):
        raise RuntimeError(text)

    fn.__name__ = name
    fn.__doc__ = "Removed from PyTorch: raises PyTorch's error pointing to the replacement."
    return fn


_GONE = "This function was deprecated since version 1.9 and is now removed."
eig = _removed("eig", f"{_GONE} `torch.linalg.eig` returns complex tensors of dtype `cfloat` "
                      "or `cdouble` rather than real tensors mimicking complex tensors.")
symeig = _removed("symeig", f"{_GONE} The default behavior has changed from using the upper "
                            "triangular portion of the matrix by default to using the lower "
                            "triangular portion.")
matrix_rank = _removed("matrix_rank", f"{_GONE}\nPlease use the `torch.linalg.matrix_rank` "
                                      "function instead.")


def lstsq(input, A, *, out=None):  # noqa: A002, N803
    """Removed from PyTorch: raises PyTorch's error pointing to ``linalg.lstsq``."""
    raise RuntimeError(f"{_GONE} `torch.linalg.lstsq` has its arguments reversed and does not "
                       "return the QR decomposition in the returned tuple")


def solve(input, A, *, out=None):  # noqa: A002, N803
    """Removed from PyTorch: raises PyTorch's error pointing to ``linalg.solve``."""
    raise RuntimeError(f"{_GONE} `torch.linalg.solve` has its arguments reversed and does not "
                       "return the LU factorization.")


def install() -> None:
    """Bind the Tensor methods this module adds (``sinc``, ``cholesky``, ``lu`` ...)."""
    for name, fn in (("sinc", sinc), ("sinc_", _sinc_),
                     ("cholesky", cholesky), ("cholesky_solve", cholesky_solve),
                     ("cholesky_inverse", cholesky_inverse), ("matrix_exp", matrix_exp),
                     ("eig", eig), ("symeig", symeig), ("lstsq", lstsq), ("solve", solve),
                     ("lu", lu), ("lu_solve", lu_solve), ("geqrf", geqrf),
                     ("orgqr", householder_product), ("ormqr", ormqr)):
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
