"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their one-step ``*Cell`` forms.

Parameters, names, shapes, gate order (LSTM: i, f, g, o; GRU: r, z, n) and default
initialisation (every weight and bias ``U(-1/sqrt(hidden), 1/sqrt(hidden))``) follow PyTorch,
so a PyTorch state dict loads unchanged.

The layers are composites of retrograd ops, so every order of derivative comes for free. For
speed, each layer and direction projects the input of all timesteps in one matmul (biases
folded in), and each step then needs a single ``addmm`` for all gates.
"""

from __future__ import annotations

import math
import numbers
import warnings

import retrograd as torch
from retrograd import Tensor
from retrograd.ops import nn_attention

from .. import init
from ..functional.norm import dropout as _dropout
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _pack, pad_packed_sequence, pad_sequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _rnn_layer(x_steps: list, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, act,
               reverse: bool) -> tuple:
    """Elman steps: ``h = act(linear(h, W_hh, b_hh) + x_t)`` (``x_t`` holds the input projection
    and ``b_ih``), summed in PyTorch's order, which shows in float16/bfloat16 (each sum rounded);
    ``linear`` of the weight itself, so that autocast casts it once (its cache) and the steps'
    gradients meet in its cast, as in PyTorch. Returns (outputs in time order, last state)."""
    T = len(x_steps)
    outs = [None] * T
    order = range(T - 1, -1, -1) if reverse else range(T)
    for t in order:
        h = act(torch.nn.functional.linear(h, w_hh, b_hh) + x_steps[t])
        outs[t] = h
    return outs, h


def _lstm_layer(x_steps: list, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None,
                w_hr_t: Tensor | None, hidden: int, reverse: bool) -> tuple:
    """LSTM steps; ``x_steps[t]`` is ``x_t @ W_ih.T + b_ih`` (gates i, f, g, o), added to
    ``linear(h, W_hh, b_hh)`` as PyTorch's cell does (its roundings in float16/bfloat16)."""
    T = len(x_steps)
    outs = [None] * T
    order = range(T - 1, -1, -1) if reverse else range(T)
    H2, H3 = 2 * hidden, 3 * hidden
    for t in order:
        gates = torch.nn.functional.linear(h, w_hh, b_hh) + x_steps[t]
        i, f, _, o = torch.sigmoid(gates).chunk(4, 1)
        g = torch.tanh(gates[:, H2:H3])
        c = f * c + i * g
        h = o * torch.tanh(c)
        if w_hr_t is not None:
            h = h.matmul(w_hr_t)
        outs[t] = h
    return outs, h, c


def _gru_layer(xrz_steps: list, xn_steps: list, h: Tensor, w_hh: Tensor, b_hh: Tensor | None,
               hidden: int, reverse: bool) -> tuple:
    """GRU steps; ``xrz_steps[t]``/``xn_steps[t]`` hold ``x_t @ W_ih.T + b_ih`` split into the
    r, z gates and the n gate. ``n = tanh(x_n + r * (h @ W_hn.T + b_hn))`` (``linear`` of the
    weight itself, as ``_rnn_layer``)."""
    T = len(xrz_steps)
    outs = [None] * T
    order = range(T - 1, -1, -1) if reverse else range(T)
    H2 = 2 * hidden
    for t in order:
        gh = torch.nn.functional.linear(h, w_hh, b_hh)
        gh_rz, gh_n = gh.split([H2, hidden], 1)
        r, z = torch.sigmoid(xrz_steps[t] + gh_rz).chunk(2, 1)
        n = torch.tanh(xn_steps[t] + r * gh_n)
        h = n + z * (h - n)
        outs[t] = h
    return outs, h


class RNNBase(Module):
    """The shared machinery of ``RNN``, ``LSTM`` and ``GRU``: parameters, checks and layers.

    >>> import retrograd as torch
    >>> torch.nn.RNNBase("LSTM", 3, 4, 2).weight_hh_l1.shape
    retrograd.Size([16, 4])
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        if device is not None:
            torch.device(device)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(hidden_size, int):
            raise TypeError(
                f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")

        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list = []
        self._all_weights: list = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                params = [
                    (f"weight_ih_l{layer}{suffix}", (gate_size, layer_input)),
                    (f"weight_hh_l{layer}{suffix}", (gate_size, real_hidden)),
                ]
                if bias:
                    params += [(f"bias_ih_l{layer}{suffix}", (gate_size,)),
                               (f"bias_hh_l{layer}{suffix}", (gate_size,))]
                if proj_size > 0:
                    params.append((f"weight_hr_l{layer}{suffix}", (proj_size, hidden_size)))
                for name, shape in params:
                    setattr(self, name, Parameter(torch.empty(shape, dtype=dtype)))
                names = [n for n, _ in params]
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every weight and bias from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op kept for compatibility (PyTorch compacts weights for cuDNN here)."""

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """The parameters as one list per layer and direction."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- checks ----------------------------------------------------------------------------------
    def _check_input(self, input: Tensor) -> None:  # noqa: A002
        wdt = self._flat_weights[0].dtype
        if input.dtype != wdt:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({wdt}). Convert input: input.to({wdt}), or convert model: "
                             f"model.to({input.dtype})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _expected_hidden(self, batch: int, proj: bool = True) -> tuple:
        size = self.proj_size if (proj and self.proj_size > 0) else self.hidden_size
        return (self.num_layers * (2 if self.bidirectional else 1), batch, size)

    @staticmethod
    def _check_size(hx: Tensor, expected: tuple, msg: str = "Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    # -- the layers ------------------------------------------------------------------------------
    @staticmethod
    def _project(x: Tensor, w_ih: Tensor, bias: Tensor | None) -> Tensor:
        """``x @ W_ih.T + bias`` for every timestep in one matmul."""
        s0, s1, feat = x.shape
        flat = x.reshape(s0 * s1, feat)
        out = flat.matmul(w_ih.t()) if bias is None else torch.addmm(bias, flat, w_ih.t())
        return out.reshape(s0, s1, -1)

    def _run(self, x: Tensor, hx, time_dim: int) -> tuple:
        """All layers on ``x`` (time along ``time_dim``, batch the other leading dim)."""
        mode = self.mode
        num_dirs = 2 if self.bidirectional else 1
        H = self.hidden_size
        h0, c0 = hx if mode == "LSTM" else (hx, None)
        h_n, c_n = [], []
        # float16/bfloat16: PyTorch's cell step by step, its roundings included (the fused LSTM
        # layer computes in one precision)
        stepwise = x.dtype in (torch.float16, torch.bfloat16)
        for layer in range(self.num_layers):
            dir_outs = []
            for d in range(num_dirs):
                names = self._all_weights[layer * num_dirs + d]
                w_ih = getattr(self, names[0])
                w_hh = getattr(self, names[1])
                b_ih = getattr(self, names[2]) if self.bias else None
                b_hh = getattr(self, names[3]) if self.bias else None
                idx = layer * num_dirs + d
                h = h0[idx]
                reverse = d == 1
                if mode == "GRU":
                    # linear as PyTorch's cell calls it (for batch_first, on a transposed view:
                    # the bias added after the product, two roundings in float16/bfloat16)
                    xproj = torch.nn.functional.linear(x, w_ih, b_ih)
                    xrz, xn = xproj.split([2 * H, H], 2)
                    outs, h = _gru_layer(xrz.unbind(time_dim), xn.unbind(time_dim), h, w_hh,
                                         b_hh, H, reverse)
                    out = torch.stack(outs, time_dim)
                elif mode == "LSTM" and self.proj_size == 0 and not stepwise:
                    xproj = self._project(x, w_ih, None if b_ih is None else b_ih + b_hh)
                    if time_dim == 1:
                        xproj = xproj.transpose(0, 1)
                    out, h, c = nn_attention.lstm_layer(xproj, h, c0[idx], w_hh, reverse)
                    if time_dim == 1:
                        out = out.transpose(0, 1)
                    c_n.append(c)
                else:
                    xproj = torch.nn.functional.linear(x, w_ih, b_ih)
                    steps = xproj.unbind(time_dim)
                    if mode == "LSTM":
                        w_hr_t = getattr(self, names[-1]).t() if self.proj_size else None
                        outs, h, c = _lstm_layer(steps, h, c0[idx], w_hh, b_hh, w_hr_t, H,
                                                 reverse)
                        c_n.append(c)
                    else:
                        act = torch.tanh if mode == "RNN_TANH" else torch.relu
                        outs, h = _rnn_layer(steps, h, w_hh, b_hh, act, reverse)
                    out = torch.stack(outs, time_dim)
                h_n.append(h)
                dir_outs.append(out)
            x = dir_outs[0] if num_dirs == 1 else torch.cat(dir_outs, 2)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = _dropout(x, self.dropout, True)
        h_n = torch.stack(h_n, 0)
        if mode == "LSTM":
            return x, (h_n, torch.stack(c_n, 0))
        return x, h_n

    def _forward_packed(self, packed: PackedSequence, hx) -> tuple:
        """A ``PackedSequence`` input: each sequence runs on its own steps only (reverse
        directions start at its own end), and the output is packed the same way."""
        padded, lengths = pad_packed_sequence(packed)
        self._check_input(padded)
        batch = padded.shape[1]
        is_lstm = self.mode == "LSTM"
        if hx is None:
            h0 = torch.zeros(self._expected_hidden(batch), dtype=padded.dtype)
            hx = (h0, torch.zeros(self._expected_hidden(batch, False), dtype=padded.dtype)) \
                if is_lstm else h0
        elif is_lstm:
            self._check_size(hx[0], self._expected_hidden(batch),
                             "Expected hidden[0] size {}, got {}")
            self._check_size(hx[1], self._expected_hidden(batch, False),
                             "Expected hidden[1] size {}, got {}")
        else:
            self._check_size(hx, self._expected_hidden(batch))
        outs, hs, cs = [], [], []
        for b, n in enumerate(lengths.tolist()):
            h_b = (hx[0][:, b:b + 1], hx[1][:, b:b + 1]) if is_lstm else hx[:, b:b + 1]
            out, hid = self._run(padded[:n, b:b + 1], h_b, 0)
            outs.append(out[:, 0])
            hs.append(hid[0] if is_lstm else hid)
            if is_lstm:
                cs.append(hid[1])
        sizes = [int(v) for v in packed.batch_sizes.tolist()]
        data = _pack(pad_sequence(outs), sizes, packed.sorted_indices)
        output = PackedSequence(data, packed.batch_sizes, packed.sorted_indices,
                                packed.unsorted_indices)
        h_n = torch.cat(hs, 1)
        return output, ((h_n, torch.cat(cs, 1)) if is_lstm else h_n)

    def forward(self, input: Tensor, hx=None):  # noqa: A002
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        dim = input.dim()
        if dim not in (2, 3):
            extra = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {dim}D{extra} instead")
        batched = dim == 3
        self._check_input(input)
        if not batched:
            input = input.unsqueeze(1)  # noqa: A001
            time_dim = 0
        else:
            time_dim = 1 if self.batch_first else 0
        batch = input.shape[1 - time_dim]
        is_lstm = self.mode == "LSTM"
        if hx is None:
            h0 = torch.zeros(self._expected_hidden(batch), dtype=input.dtype)
            hx = (h0, torch.zeros(self._expected_hidden(batch, False), dtype=input.dtype)) \
                if is_lstm else h0
        elif is_lstm:
            h, c = hx
            if batched and (h.dim() != 3 or c.dim() != 3):
                raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                   f"({h.dim()}-D, {c.dim()}-D) tensors")
            if not batched and (h.dim() != 2 or c.dim() != 2):
                raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but "
                                   f"got ({h.dim()}-D, {c.dim()}-D) tensors")
            if not batched:
                h, c = h.unsqueeze(1), c.unsqueeze(1)
            self._check_size(h, self._expected_hidden(batch), "Expected hidden[0] size {}, got {}")
            self._check_size(c, self._expected_hidden(batch, False),
                             "Expected hidden[1] size {}, got {}")
            hx = (h, c)
        else:
            if batched and hx.dim() != 3:
                raise RuntimeError(
                    f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if not batched and hx.dim() != 2:
                raise RuntimeError(
                    f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            if not batched:
                hx = hx.unsqueeze(1)
            self._check_size(hx, self._expected_hidden(batch))
        if time_dim == 1:
            # PyTorch runs time-major and transposes the output back: a view left strided,
            # recorded by LSTM as TransposeBackward0 and by GRU/RNN (transpose_) as ...1
            out, hidden = self._run(input.transpose(0, 1), hx, 0)
            out = out.transpose(0, 1) if is_lstm else out.transpose_(0, 1)
        else:
            out, hidden = self._run(input, hx, time_dim)
        if not batched:
            out = out.squeeze(1)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1)) if is_lstm \
                else hidden.squeeze(1)
        return out, hidden


class RNN(RNNBase):
    """A multi-layer Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``.

    ``nonlinearity`` is ``'tanh'`` or ``'relu'``. Returns ``(output, h_n)``.

    >>> import retrograd as torch
    >>> rnn = torch.nn.RNN(3, 4, num_layers=2)
    >>> out, h = rnn(torch.ones(5, 2, 3))
    >>> out.shape, h.shape
    (retrograd.Size([5, 2, 4]), retrograd.Size([2, 2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None, dtype=None,
                 **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        self.nonlinearity = nonlinearity
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    """A multi-layer LSTM (gates i, f, g, o, as PyTorch orders them), optionally projected.

    Returns ``(output, (h_n, c_n))``.

    >>> import retrograd as torch
    >>> lstm = torch.nn.LSTM(3, 4, batch_first=True, bidirectional=True)
    >>> out, (h, c) = lstm(torch.ones(2, 5, 3))
    >>> out.shape, h.shape, c.shape
    (retrograd.Size([2, 5, 8]), retrograd.Size([2, 2, 4]), retrograd.Size([2, 2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """A multi-layer GRU (gates r, z, n; ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``).

    Returns ``(output, h_n)``.

    >>> import retrograd as torch
    >>> gru = torch.nn.GRU(3, 4)
    >>> out, h = gru(torch.ones(5, 3))
    >>> out.shape, h.shape
    (retrograd.Size([5, 4]), retrograd.Size([1, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


# -- cells -------------------------------------------------------------------------------------


class RNNCellBase(Module):
    """The parameters shared by the cells: ``weight_ih``, ``weight_hh``, ``bias_ih``,
    ``bias_hh`` with ``num_chunks`` gates.

    >>> import retrograd as torch
    >>> torch.nn.RNNCellBase(3, 4, True, 4).weight_ih.shape
    retrograd.Size([16, 3])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        if device is not None:
            torch.device(device)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(torch.empty((num_chunks * hidden_size, input_size),
                                               dtype=dtype))
        self.weight_hh = Parameter(torch.empty((num_chunks * hidden_size, hidden_size),
                                               dtype=dtype))
        if bias:
            self.bias_ih = Parameter(torch.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(torch.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every weight and bias from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nl = getattr(self, "nonlinearity", "tanh")
        if nl != "tanh":
            s += f", nonlinearity={nl}"
        return s

    def _prepare(self, name: str, input: Tensor, hx) -> tuple:  # noqa: A002
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and not isinstance(hx, tuple) and hx.dim() not in (1, 2):
            raise ValueError(
                f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)  # noqa: A001
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        return input, batched

    def _check_hidden(self, input: Tensor, hx: Tensor, nr: str = "") -> None:  # noqa: A002
        if input.shape[0] != hx.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{nr} "
                               f"batch size {hx.shape[0]}")
        if hx.shape[1] != self.hidden_size:
            raise RuntimeError(f"hidden{nr} has inconsistent hidden_size: got {hx.shape[1]}, "
                               f"expected {self.hidden_size}")

    def _gates(self, x: Tensor, h: Tensor) -> Tensor:
        """``linear(x, W_ih, b_ih) + linear(h, W_hh, b_hh)``, as PyTorch's cells (so that under
        autocast the gates come out in its dtype, biases included)."""
        gi, gh = self._linear_pair(x, h)
        return gi + gh

    def _linear_pair(self, x: Tensor, h: Tensor) -> tuple:
        linear = torch.nn.functional.linear
        return linear(x, self.weight_ih, self.bias_ih), linear(h, self.weight_hh, self.bias_hh)


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu).

    >>> import retrograd as torch
    >>> torch.nn.RNNCell(3, 4, nonlinearity="relu")(torch.ones(2, 3)).shape
    retrograd.Size([2, 4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, batched = self._prepare("RNNCell", input, hx)
        if hx is None:
            hx = torch.zeros((x.shape[0], self.hidden_size), dtype=x.dtype)
        elif not batched:
            hx = hx.unsqueeze(0)
        self._check_hidden(x, hx, "0")
        pre = self._gates(x, hx)
        if self.nonlinearity == "tanh":
            h = torch.tanh(pre)
        elif self.nonlinearity == "relu":
            h = torch.relu(pre)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``. Gates i, f, g, o as in PyTorch.

    >>> import retrograd as torch
    >>> h, c = torch.nn.LSTMCell(3, 4)(torch.ones(2, 3))
    >>> h.shape, c.shape
    (retrograd.Size([2, 4]), retrograd.Size([2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple:  # noqa: A002
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        if hx is not None:
            for t in hx:
                if t.dim() not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[0] to be 1D or 2D, got {t.dim()}D instead")
        x, batched = self._prepare("LSTMCell", input, None)
        if hx is None:
            z = torch.zeros((x.shape[0], self.hidden_size), dtype=x.dtype)
            h, c = z, z
        else:
            h, c = hx
            if not batched:
                h, c = h.unsqueeze(0), c.unsqueeze(0)
        self._check_hidden(x, h, "0")
        self._check_hidden(x, c, "1")
        gates = self._gates(x, h)
        i, f, _, o = torch.sigmoid(gates).chunk(4, 1)
        H = self.hidden_size
        g = torch.tanh(gates[:, 2 * H:3 * H])
        c = f * c + i * g
        h = o * torch.tanh(c)
        if not batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n; ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``).

    >>> import retrograd as torch
    >>> torch.nn.GRUCell(3, 4)(torch.ones(3)).shape
    retrograd.Size([4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, batched = self._prepare("GRUCell", input, hx)
        if hx is None:
            hx = torch.zeros((x.shape[0], self.hidden_size), dtype=x.dtype)
        elif not batched:
            hx = hx.unsqueeze(0)
        self._check_hidden(x, hx, "0")
        H = self.hidden_size
        gi, gh = self._linear_pair(x, hx)
        gi_rz, gi_n = gi.split([2 * H, H], 1)
        gh_rz, gh_n = gh.split([2 * H, H], 1)
        r, z = torch.sigmoid(gi_rz + gh_rz).chunk(2, 1)
        n = torch.tanh(gi_n + r * gh_n)
        h = n + z * (hx - n)
        return h if batched else h.squeeze(0)
