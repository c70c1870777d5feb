"""Op table entries for the nn primitives: convolutions, pooling, normalisation, attention, the
LSTM layer, the losses and embedding, called through ``nn.functional`` (the LSTM through a small
module wrapper that takes its weights as inputs), so that each gets gradcheck, gradgradcheck and
the torch comparisons of ``test_op_table.py``.

Shapes are tiny: the finite-difference checks cost one forward per input element. Integer
arguments (class targets, indices) and constants (running statistics, masks) are built inside
the entry, so that only the floating inputs are differentiated.
"""

from __future__ import annotations

import numpy as np

from .op_table import OpInfo, _sh

_WN_GG = ("torch's second order of WeightNormInterfaceBackward0 is wrong (its own gradgradcheck "
          "fails); retrograd's is checked by finite differences in tests/nn/test_parametrize.py")


def F(lib):
    return lib.nn.functional


def _const(lib, shape, seed=0, low=-1.0, high=1.0):
    """A fixed (non-differentiable) float64 tensor, the same in both libraries."""
    return lib.tensor(np.random.default_rng(seed).uniform(low, high, shape))


def _long(lib, data):
    return lib.tensor(data, dtype=lib.int64)


def _like(a, t):
    """``t`` in ``a``'s dtype: the float32 comparisons run the whole entry in float32."""
    return t.to(a.dtype)


_LSTM_NAMES = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")


def _lstm(lib, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
    """One LSTM layer (``nn.LSTM``) with its weights taken from the inputs: the parameters are
    replaced by the given tensors, so gradients reach them as they reach ``x``."""
    m = lib.nn.LSTM(x.shape[-1], h0.shape[-1]).to(x.dtype)
    for name, w in zip(_LSTM_NAMES, (w_ih, w_hh, b_ih, b_hh)):
        delattr(m, name)
        setattr(m, name, w)
    out, (h, c) = m(x, (h0, c0))
    return lib.cat([out.reshape(-1), h.reshape(-1) * 0.5, c.reshape(-1)])


_SDPA = [((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)), ((3, 2), (4, 2), (4, 3))]
_PAIR = [((3, 4), (3, 4)), ((5,), (5,)), ((2, 3, 2), (2, 3, 2))]
_TARGET = [1, 0, 4]  # class targets for logits of shape (3, 5)

OPS = [
    # convolutions
    OpInfo("conv1d", lambda lib, x, w, b: F(lib).conv1d(x, w, b, stride=2, padding=1),
           [((2, 2, 5), (3, 2, 3), (3,))]),
    OpInfo("conv1d_groups_same", lambda lib, x, w: F(lib).conv1d(x, w, padding="same", groups=2,
                                                                 dilation=2),
           [((1, 4, 5), (4, 2, 2))]),
    OpInfo("conv2d", lambda lib, x, w, b: F(lib).conv2d(x, w, b, stride=2, padding=1),
           [((1, 2, 4, 4), (3, 2, 2, 2), (3,)), ((2, 4, 3), (2, 2, 2, 2), (2,))]),
    OpInfo("conv2d_groups_dilation",
           lambda lib, x, w: F(lib).conv2d(x, w, groups=2, dilation=(1, 2), padding=(1, 0)),
           [((1, 4, 3, 4), (4, 2, 2, 2))]),
    # stride 1, one group: the wide-column paths (a one-GEMM transposed convolution)
    OpInfo("conv2d_stride1",
           lambda lib, x, w, b: F(lib).conv2d(x, w, b, padding=(1, 0), dilation=(1, 2)),
           [((2, 2, 4, 5), (3, 2, 2, 2), (3,)), ((2, 3, 4), (2, 2, 2, 2), (2,))]),
    OpInfo("conv1d_stride1", lambda lib, x, w, b: F(lib).conv1d(x, w, b, padding=1),
           [((2, 2, 5), (3, 2, 3), (3,))]),
    OpInfo("conv_transpose2d_stride1",
           lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, padding=(0, 1),
                                                        output_padding=(1, 0), dilation=(2, 1)),
           [((2, 2, 3, 3), (2, 3, 2, 2), (3,))]),
    OpInfo("conv_transpose1d",
           lambda lib, x, w, b: F(lib).conv_transpose1d(x, w, b, stride=2, dilation=2),
           [((1, 2, 3), (2, 3, 2), (3,))]),
    OpInfo("conv_transpose2d",
           lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, stride=2, padding=1,
                                                        output_padding=1),
           [((1, 2, 3, 3), (2, 2, 2, 2), (2,))]),
    OpInfo("conv_transpose2d_groups",
           lambda lib, x, w: F(lib).conv_transpose2d(x, w, groups=2, stride=(1, 2)),
           [((1, 4, 2, 3), (4, 1, 2, 2))]),
    # pooling (random inputs: no ties in a window)
    OpInfo("max_pool1d", lambda lib, x: F(lib).max_pool1d(x, 3, stride=2, padding=1),
           [((2, 2, 6),)]),
    OpInfo("max_pool2d_2x2", lambda lib, x: F(lib).max_pool2d(x, 2), [((1, 2, 4, 4),)]),
    OpInfo("max_pool2d", lambda lib, x: F(lib).max_pool2d(x, 3, stride=2, padding=1,
                                                          ceil_mode=True),
           [((1, 2, 5, 4),), ((2, 4, 4),)]),
    OpInfo("max_pool2d_indices",
           lambda lib, x: F(lib).max_pool2d(x, (2, 3), dilation=(1, 2), return_indices=True)[0],
           [((1, 2, 4, 6),)]),
    OpInfo("avg_pool1d", lambda lib, x: F(lib).avg_pool1d(x, 3, stride=2, padding=1),
           [((2, 2, 6),)]),
    OpInfo("avg_pool2d", lambda lib, x: F(lib).avg_pool2d(x, 3, stride=2, padding=1,
                                                          ceil_mode=True,
                                                          count_include_pad=False),
           [((1, 2, 5, 4),)]),
    OpInfo("adaptive_avg_pool2d", lambda lib, x: F(lib).adaptive_avg_pool2d(x, (2, 3)),
           [((1, 2, 5, 4),)]),
    OpInfo("adaptive_max_pool2d", lambda lib, x: F(lib).adaptive_max_pool2d(x, 2),
           [((1, 2, 5, 4),), ((2, 3, 5),)]),
    # normalisation (functional, with weight and bias)
    OpInfo("batch_norm_train", lambda lib, x, w, b: F(lib).batch_norm(x, None, None, w, b, True),
           [((4, 3), (3,), (3,)), ((2, 3, 2), (3,), (3,))]),
    OpInfo("batch_norm_eval",
           lambda lib, x, w, b: F(lib).batch_norm(
               x, _like(x, _const(lib, (3,))), _like(x, _const(lib, (3,), 1, 0.5, 2.0)), w, b,
               False, eps=1e-3),
           [((2, 3, 2), (3,), (3,))]),
    # weight normalisation: one node for the first or last dim, PyTorch's composite otherwise
    OpInfo("weight_norm_dim0", lambda lib, v, g: lib._weight_norm(v, g, 0),
           _sh(((3, 4, 2), (3, 1, 1))), no_gradgrad=_WN_GG),
    OpInfo("weight_norm_dimlast", lambda lib, v, g: lib._weight_norm(v, g, 2),
           _sh(((3, 4, 2), (1, 1, 2))), no_gradgrad=_WN_GG),
    OpInfo("weight_norm_dim1", lambda lib, v, g: lib._weight_norm(v, g, 1),
           _sh(((3, 4, 2), (1, 4, 1)))),
    OpInfo("weight_norm_all", lambda lib, v, g: lib._weight_norm(v, g, -1), _sh(((3, 4), ()))),
    OpInfo("layer_norm", lambda lib, x, w, b: F(lib).layer_norm(x, (4,), w, b),
           [((3, 4), (4,), (4,))]),
    OpInfo("layer_norm_2d", lambda lib, x, w: F(lib).layer_norm(x, (2, 3), w, eps=1e-3),
           [((2, 2, 3), (2, 3))]),
    OpInfo("group_norm", lambda lib, x, w, b: F(lib).group_norm(x, 2, w, b),
           [((2, 4, 3), (4,), (4,))]),
    OpInfo("instance_norm", lambda lib, x, w, b: F(lib).instance_norm(x, weight=w, bias=b),
           [((2, 3, 4), (3,), (3,))]),
    OpInfo("rms_norm", lambda lib, x, w: F(lib).rms_norm(x, (4,), w, eps=1e-5),
           [((3, 4), (4,))]),
    # attention
    OpInfo("_safe_softmax", lambda lib, a: lib._safe_softmax(a, -1), [((3, 4),), ((2, 3, 4),)]),
    OpInfo("sdpa", lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v), _SDPA),
    OpInfo("sdpa_causal_scale",
           lambda lib, q, k, v: F(lib).scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                    scale=0.4),
           [((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3))]),
    OpInfo("sdpa_float_mask",
           lambda lib, q, k, v, m: F(lib).scaled_dot_product_attention(q, k, v, attn_mask=m),
           [((1, 3, 4), (1, 5, 4), (1, 5, 2), (3, 5))]),
    OpInfo("sdpa_bool_mask",
           lambda lib, q, k, v: F(lib).scaled_dot_product_attention(
               q, k, v, attn_mask=lib.tensor([[True, False, True, True],
                                              [False, True, True, False]])),
           [((2, 2, 3), (2, 4, 3), (2, 4, 2))]),
    # recurrent
    OpInfo("lstm", _lstm, [((3, 2, 2), (1, 2, 3), (1, 2, 3), (12, 2), (12, 3), (12,), (12,))],
           low=-1.0, high=1.0),
    # losses
    OpInfo("mse_loss", lambda lib, a, b: F(lib).mse_loss(a, b), _PAIR),
    OpInfo("mse_loss_none", lambda lib, a, b: F(lib).mse_loss(a, b, reduction="none"),
           [((3, 4), (3, 4))]),
    OpInfo("l1_loss", lambda lib, a, b: F(lib).l1_loss(a, b, reduction="sum"), _PAIR),
    OpInfo("smooth_l1_loss", lambda lib, a, b: F(lib).smooth_l1_loss(a, b, beta=0.5), _PAIR),
    OpInfo("huber_loss", lambda lib, a, b: F(lib).huber_loss(a, b, delta=0.7,
                                                             reduction="none"), _PAIR),
    OpInfo("cross_entropy", lambda lib, x: F(lib).cross_entropy(x, _long(lib, _TARGET)),
           [((3, 5),)]),
    # class weights are constants: torch's nll_loss and binary_cross_entropy refuse a weight
    # (and binary_cross_entropy_with_logits a pos_weight) that requires grad
    OpInfo("cross_entropy_weight_smoothing",
           lambda lib, x: F(lib).cross_entropy(x, _long(lib, _TARGET),
                                               weight=_like(x, _const(lib, (5,), 2, 0.5, 2.0)),
                                               label_smoothing=0.2),
           [((3, 5),)]),
    OpInfo("cross_entropy_probs",
           lambda lib, x, p: F(lib).cross_entropy(x, p.softmax(-1), reduction="sum"),
           [((3, 5), (3, 5)), ((2, 3, 2), (2, 3, 2))]),
    OpInfo("cross_entropy_ignore_index",
           lambda lib, x: F(lib).cross_entropy(x, _long(lib, [[1, 2], [0, 1]]), ignore_index=0),
           [((2, 3, 2),)]),
    OpInfo("nll_loss", lambda lib, x: F(lib).nll_loss(x, _long(lib, _TARGET)), [((3, 5),)]),
    OpInfo("nll_loss_weight_none",
           lambda lib, x: F(lib).nll_loss(x, _long(lib, _TARGET),
                                          weight=_like(x, _const(lib, (5,), 3, 0.5, 2.0)),
                                          reduction="none"),
           [((3, 5),)]),
    OpInfo("binary_cross_entropy", lambda lib, x, y: F(lib).binary_cross_entropy(x, y),
           _PAIR, low=0.05, high=0.95),
    OpInfo("binary_cross_entropy_weight",
           lambda lib, x, y: F(lib).binary_cross_entropy(
               x, y, weight=_like(x, _const(lib, (4,), 4, 0.5, 2.0)), reduction="sum"),
           [((3, 4), (3, 4))], low=0.05, high=0.95),
    OpInfo("bce_with_logits", lambda lib, x, y: F(lib).binary_cross_entropy_with_logits(x, y),
           _PAIR),
    OpInfo("bce_with_logits_pos_weight",
           lambda lib, x, y: F(lib).binary_cross_entropy_with_logits(
               x, y.sigmoid(), pos_weight=_like(x, _const(lib, (4,), 6, 0.5, 2.0))),
           [((3, 4), (3, 4))]),
    OpInfo("kl_div", lambda lib, a, b: F(lib).kl_div(a.log_softmax(-1), b.softmax(-1),
                                                     reduction="batchmean"),
           [((3, 4), (3, 4))]),
    OpInfo("kl_div_log_target",
           lambda lib, a, b: F(lib).kl_div(a, b, reduction="none", log_target=True),
           [((3, 4), (3, 4))]),
    OpInfo("poisson_nll_loss", lambda lib, a, b: F(lib).poisson_nll_loss(a, b), _PAIR),
    OpInfo("gaussian_nll_loss", lambda lib, a, b, v: F(lib).gaussian_nll_loss(a, b, v.exp()),
           [((3, 4), (3, 4), (3, 4)), ((3, 4), (3, 4), (3, 1))]),
    # torch refuses a soft margin target that requires grad
    OpInfo("soft_margin_loss",
           lambda lib, a: F(lib).soft_margin_loss(a, _like(a, _const(lib, (3, 4), 5).sign())),
           [((3, 4),)]),
    OpInfo("margin_ranking_loss",
           lambda lib, a, b: F(lib).margin_ranking_loss(a, b, (a * 0 + 1).detach(), margin=-3.0),
           [((5,), (5,))]),
    OpInfo("cosine_embedding_loss",
           lambda lib, a, b: F(lib).cosine_embedding_loss(
               a, b, _long(lib, [1, -1, 1]), margin=-1.0), [((3, 4), (3, 4))]),
    # embedding
    OpInfo("embedding", lambda lib, w: F(lib).embedding(_long(lib, [[0, 2], [5, 2]]), w),
           [((6, 4),)]),
    OpInfo("embedding_padding_scale",
           lambda lib, w: F(lib).embedding(_long(lib, [1, 3, 1, 0, 3, 3]), w, padding_idx=0,
                                           scale_grad_by_freq=True),
           [((5, 3),)], no_gradcheck="padding_idx and scale_grad_by_freq change the gradient "
                                     "on purpose: it is not the derivative"),
    # rearrangements and local response normalisation
    OpInfo("pixel_shuffle", lambda lib, x: F(lib).pixel_shuffle(x, 2),
           [((1, 8, 2, 3),), ((2, 1, 4, 1, 2),)]),
    OpInfo("pixel_unshuffle", lambda lib, x: F(lib).pixel_unshuffle(x, 2),
           [((1, 2, 4, 2),), ((3, 2, 2),)]),
    OpInfo("channel_shuffle", lambda lib, x: F(lib).channel_shuffle(x, 3),
           [((2, 6, 2),), ((1, 3, 2, 1, 2),)]),
    OpInfo("local_response_norm",
           lambda lib, x: F(lib).local_response_norm(x, 3, alpha=0.5, beta=0.6, k=1.5),
           [((2, 4, 3),), ((1, 3, 2, 2),)]),
    # multi-class margin, triplet and CTC losses
    OpInfo("multi_margin_loss",
           lambda lib, x: F(lib).multi_margin_loss(x, _long(lib, [1, 0, 4])), [((3, 5),)],
           no_gradgrad="PyTorch's multi_margin_loss has no second derivative"),
    OpInfo("multi_margin_loss_p2_weight",
           lambda lib, x: F(lib).multi_margin_loss(
               x, _long(lib, [1, 0, 4]), p=2, margin=0.5,
               weight=_like(x, _const(lib, (5,), 7, 0.5, 2.0)), reduction="none"),
           [((3, 5),)],
           no_gradgrad="PyTorch's multi_margin_loss has no second derivative"),
    OpInfo("multilabel_margin_loss",
           lambda lib, x: F(lib).multilabel_margin_loss(
               x, _long(lib, [[1, 0, -1, 3], [3, -1, 0, 0], [2, 2, 1, 0]])), [((3, 4),)],
           no_gradgrad="PyTorch's multilabel_margin_loss has no second derivative"),
    OpInfo("multilabel_soft_margin_loss",
           lambda lib, x, y: F(lib).multilabel_soft_margin_loss(x, y.sigmoid()),
           [((3, 4), (3, 4))]),
    OpInfo("triplet_margin_loss",
           lambda lib, a, p, n: F(lib).triplet_margin_loss(a, p, n, margin=2.0, swap=True),
           [((3, 4), (3, 4), (3, 4))]),
    OpInfo("triplet_margin_with_distance_loss",
           lambda lib, a, p, n: F(lib).triplet_margin_with_distance_loss(a, p, n, margin=2.0,
                                                                         reduction="none"),
           [((3, 4), (3, 4), (3, 4))]),
    OpInfo("ctc_loss",
           lambda lib, x: F(lib).ctc_loss(x.log_softmax(2), _long(lib, [[1, 2, 2], [1, 1, 0]]),
                                          [5, 4], [3, 2], reduction="none"),
           [((5, 2, 3),)], no_gradgrad="PyTorch's CTC loss has no second derivative"),
    # 3-D convolution and pooling, unpooling, power-average and fractional pooling
    OpInfo("conv3d", lambda lib, x, w, b: F(lib).conv3d(x, w, b, stride=(1, 2, 1), padding=1,
                                                        groups=2),
           [((1, 2, 2, 3, 2), (2, 1, 2, 2, 1), (2,))]),
    OpInfo("conv_transpose3d",
           lambda lib, x, w: F(lib).conv_transpose3d(x, w, stride=(2, 1, 1), padding=(0, 1, 0),
                                                     output_padding=(1, 0, 0)),
           [((1, 2, 2, 2, 1), (2, 1, 2, 2, 2))]),
    OpInfo("max_pool3d", lambda lib, x: F(lib).max_pool3d(x, 2, stride=1, padding=1),
           [((1, 1, 2, 2, 3),)]),
    OpInfo("avg_pool3d", lambda lib, x: F(lib).avg_pool3d(x, 2, stride=1, padding=1,
                                                          count_include_pad=False),
           [((1, 1, 2, 2, 3),)]),
    OpInfo("adaptive_avg_pool3d", lambda lib, x: F(lib).adaptive_avg_pool3d(x, (1, 2, 2)),
           [((1, 2, 3, 3),)]),
    OpInfo("adaptive_max_pool3d", lambda lib, x: F(lib).adaptive_max_pool3d(x, (1, 2, 2)),
           [((1, 1, 2, 3, 3),)]),
    OpInfo("max_unpool2d",
           lambda lib, x: F(lib).max_unpool2d(x, _long(lib, [[[[0, 3], [9, 6]]]]), 2),
           [((1, 1, 2, 2),)]),
    OpInfo("lp_pool2d", lambda lib, x: F(lib).lp_pool2d(x, 2.0, 2, stride=1),
           [((1, 2, 3, 3),)], low=0.5, high=2.0),
    OpInfo("fractional_max_pool2d",
           lambda lib, x: F(lib).fractional_max_pool2d(
               x, 2, output_size=(2, 3), _random_samples=_like(x, _const(lib, (1, 2, 2), 9, 0,
                                                                         1))),
           [((1, 2, 4, 5),)]),
    # spatial transformer sampling
    OpInfo("affine_grid",
           lambda lib, t: F(lib).affine_grid(t, (2, 1, 2, 3), align_corners=False),
           [((2, 2, 3),)]),
    OpInfo("grid_sample",
           lambda lib, x, g: F(lib).grid_sample(x, g.tanh() * 1.2, padding_mode="reflection",
                                                align_corners=False),
           [((1, 1, 3, 3), (1, 1, 2, 2))]),
    # bags of embeddings and in-batch distances
    OpInfo("embedding_bag",
           lambda lib, w: F(lib).embedding_bag(_long(lib, [1, 2, 4, 0, 3]), w,
                                               _long(lib, [0, 2, 2]), mode="mean"),
           [((5, 2),)]),
    OpInfo("embedding_bag_max",
           lambda lib, w: F(lib).embedding_bag(_long(lib, [[1, 2], [4, 0]]), w, mode="max"),
           [((5, 2),)]),
    OpInfo("conv_tbc", lambda lib, x, w, b: F(lib).conv_tbc(x, w, b, 1),
           [((5, 2, 3), (2, 3, 4), (4,))]),
    OpInfo("rrelu_eval", lambda lib, x: F(lib).rrelu(x, 0.1, 0.3), [((3, 4),)], positive_gap=0.1),
    OpInfo("pdist", lambda lib, x: F(lib).pdist(x), [((4, 3),)],
           no_gradgrad="PyTorch's pdist has no second derivative"),
]
