"""Attention: scaled_dot_product_attention and multi-head attention's functional core."""

from __future__ import annotations

import math
import warnings

import numpy as np

import retrograd as torch
from retrograd import Tensor
from retrograd.ops import nn_attention

from ...ops._autocast import lower_precision
from .activation import softmax
from .misc import linear as _linear
from .norm import dropout

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

def _keep_mask(p: float):
    def keep_fn(shape: tuple, dtype) -> np.ndarray:
        # PyTorch's math kernel applies at::dropout to the weights: Bernoulli(1 - p) noise
        # divided by 1 - p, drawn as torch draws it (nothing is drawn for p = 1)
        if p >= 1:
            return np.zeros(shape, dtype)
        dt = torch.float64 if dtype == np.float64 else torch.float32
        return torch.empty(shape, dtype=dt).bernoulli_(1 - p).div_(1 - p).numpy()
    return keep_fn


def _flash(qs: tuple, vs: tuple, fmask, dropout_p: float) -> bool:
    """Whether PyTorch's CPU dispatch picks its flash kernel (else the math fallback), given the
    query and value shapes."""
    return (len(qs) == 4 and vs[-1] == qs[-1] and dropout_p == 0
            and (fmask is None or not fmask.requires_grad))


def _sdpa_name(qs: tuple, flash: bool) -> str:
    """The grad_fn name PyTorch gives the result on each path."""
    if flash:
        return "ScaledDotProductFlashAttentionForCpuBackward0"
    return "MmBackward0" if len(qs) == 2 else "UnsafeViewBackward0"


@lower_precision
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key.T * scale + mask) @ value``, with dropout on the weights.

    A boolean ``attn_mask`` marks with True the positions that may be attended to; a float mask
    is added to the scores. ``is_causal`` forbids attending to later positions (a top-left
    lower-triangular mask; combined with ``attn_mask`` when PyTorch's flash kernel would run,
    an error otherwise, as in PyTorch). ``scale``
    defaults to ``1 / sqrt(query.size(-1))``. Dropout is applied whenever ``dropout_p > 0``.
    With ``enable_gqa`` the key and value may have fewer heads (dim -3) than the query.
    Fully masked rows give zeros.

    >>> import retrograd as torch
    >>> q = torch.ones(1, 2, 3, 4)
    >>> torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).shape
    retrograd.Size([1, 2, 3, 4])
    """
    qs, ks, vs = tuple(query.shape), tuple(key.shape), tuple(value.shape)
    if len(qs) < 2 or len(ks) < 2 or len(vs) < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{len(qs)} key.dim: {len(ks)} and value.dim: {len(vs)} instead.")
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cname(query)} key.dtype: {_cname(key)} and value.dtype: {_cname(value)} instead.")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    fmask = bmask = None
    if attn_mask is not None:
        if attn_mask.dtype is torch.bool:
            bmask = attn_mask
        elif attn_mask.dtype is query.dtype:
            fmask = attn_mask
        else:
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                f"attn_mask.dtype: {_cname(attn_mask)} and  query.dtype: {_cname(query)} "
                "instead.")
    flash = _flash(qs, vs, fmask, dropout_p)
    if is_causal and attn_mask is not None and not flash:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    groups = 1
    if len(qs) >= 3 and len(ks) >= 3 and ks[-3] != qs[-3]:
        if not enable_gqa:
            raise RuntimeError(
                f"The size of tensor a ({qs[-3]}) must match the size of tensor b "
                f"({ks[-3]}) at non-singleton dimension {len(qs) - 3}")
        hq, hk = qs[-3], ks[-3]
        if hq % hk != 0 or vs[-3] != hk:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in ")
        groups = hq // hk
    if scale is None:
        scale = 1.0 / math.sqrt(qs[-1])
    if not flash:  # PyTorch's math fallback, built as PyTorch builds it
        return nn_attention.sdpa_math(query, key, value, fmask, bmask, bool(is_causal), scale,
                                      dropout_p, groups, _keep_mask(dropout_p))
    return nn_attention.sdpa(query, key, value, fmask, bmask, bool(is_causal), scale, dropout_p,
                             groups, _keep_mask(dropout_p), _sdpa_name(qs, flash))


def _cname(t: Tensor) -> str:
    """The C type name PyTorch's messages print for a dtype (``float``, ``double``, ...)."""
    return t.dtype.c_name


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type, other_name: str,
                    target_type) -> Tensor | None:
    """A bool mask (True = masked out) becomes a float mask of ``-inf``; float masks pass."""
    if mask is None:
        return None
    is_bool = mask.dtype is torch.bool
    if other_type is not None and is_bool != (other_type is torch.bool):
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=3)
    if is_bool:
        return torch.zeros(mask.shape, dtype=target_type).masked_fill_(mask, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    return mask


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
    bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
    out_proj_bias: Tensor | None, training: bool = True, key_padding_mask: Tensor | None = None,
    need_weights: bool = True, attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None, static_v: Tensor | None = None,
    average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on sequence-first inputs ``(L, N, E)`` (or unbatched ``(L, E)``).

    Returns ``(attn_output, attn_weights)``; the weights are averaged over heads when
    ``average_attn_weights`` and are None unless ``need_weights``. Boolean masks mark with True
    the positions that may NOT be attended to; float masks are added to the scores.

    >>> import retrograd as torch
    >>> F = torch.nn.functional
    >>> x = torch.ones(3, 2, 4)
    >>> out, w = F.multi_head_attention_forward(
    ...     x, x, x, 4, 2, torch.ones(12, 4), torch.zeros(12), None, None, False, 0.0,
    ...     torch.ones(4, 4), torch.zeros(4))
    >>> out.shape, w.shape
    (retrograd.Size([3, 2, 4]), retrograd.Size([2, 3, 3]))
    """
    is_batched = _check_batched(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query = query.unsqueeze(1)
        key = key.unsqueeze(1)
        value = value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    qdt = query.dtype
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype,
                                       "attn_mask", qdt)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
            "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", qdt)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")

    # -- input projections -------------------------------------------------------------------
    E = embed_dim
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        b_q = b_k = b_v = None
        if key is value and query is key:
            qkv = _linear(query, in_proj_weight, in_proj_bias)
            q, k, v = qkv[..., :E], qkv[..., E:2 * E], qkv[..., 2 * E:]
        else:
            w_q, w_k, w_v = in_proj_weight[:E], in_proj_weight[E:2 * E], in_proj_weight[2 * E:]
            if in_proj_bias is not None:
                b_q, b_k, b_v = in_proj_bias[:E], in_proj_bias[E:2 * E], in_proj_bias[2 * E:]
            q = _linear(query, w_q, b_q)
            if key is value:
                kv = _linear(key, in_proj_weight[E:], None if in_proj_bias is None
                             else in_proj_bias[E:])
                k, v = kv[..., :E], kv[..., E:]
            else:
                k = _linear(key, w_k, b_k)
                v = _linear(value, w_v, b_v)
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight, "
                                 "k_proj_weight or v_proj_weight is None")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias[:E], in_proj_bias[E:2 * E], in_proj_bias[2 * E:]
        q = _linear(query, q_proj_weight, b_q)
        k = _linear(key, k_proj_weight, b_k)
        v = _linear(value, v_proj_weight, b_v)

    # -- masks -------------------------------------------------------------------------------
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = torch.cat([k, bias_k.repeat(1, bsz, 1)])
        v = torch.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # (L, N, E) -> (N * H, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        k = static_k
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        v = static_v

    if add_zero_attn:
        zshape = (bsz * num_heads, 1, head_dim)
        k = torch.cat([k, torch.zeros(zshape, dtype=k.dtype)], dim=1)
        v = torch.cat([v, torch.zeros(zshape, dtype=v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)

    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = (q * math.sqrt(1.0 / head_dim)).matmul(k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = weights.matmul(v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out = out.squeeze(1)
            weights = weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not is_batched:
        out = out.squeeze(1)
    return out, None


def _pad_last(mask: Tensor) -> Tensor:
    """Append one zero column along the last dim (an extra key that is never masked)."""
    zeros = torch.zeros(tuple(mask.shape[:-1]) + (1,), dtype=mask.dtype)
    return torch.cat([mask, zeros], dim=-1)


def _check_batched(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """Whether the inputs are batched (3-D) or not (2-D), checking the other shapes agree."""
    qd = query.dim()
    if qd == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead")
        return True
    if qd == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                    f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(
                        f"Expected `attn_mask` shape to be {expected} but got "
                        f"{tuple(attn_mask.shape)}")
        return False
    raise AssertionError(
        f"query should be unbatched 2D or batched 3D tensor but received {qd}-D query tensor")
