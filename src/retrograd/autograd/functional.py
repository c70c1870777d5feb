"""``autograd.functional``: derivatives of whole functions (vjp, jvp, jacobian, hessian, hvp, vhp).

Each entry point takes a Python function of tensors and the point to differentiate at, runs the
function once on fresh copies of the inputs (detached, requiring grad) and differentiates its
outputs with ``autograd.grad``. Arguments, return structures (a tensor where PyTorch gives one,
tuples of tuples for several inputs and outputs) and errors (wrong ``v`` sizes, ``strict=True``
on an output independent of an input) are PyTorch 2.13's.

``jvp`` uses the double-backward trick: the VJP is linear in its cotangent ``u``, so
differentiating ``u -> J^T u`` with respect to ``u`` gives ``J v``. ``vhp`` differentiates the
gradient once more in reverse mode. ``hvp`` is reverse-over-forward: ``H v`` is the gradient of
the directional derivative ``<grad f(x), v>``, which forward mode computes from the graph
``func`` recorded (``v`` pushed through it as a tangent, each node's forward rule in turn:
``forward_ad.replay_tangent``); one backward pass over that program gives ``H v``.
Reverse-over-reverse would run a recording backward whose last product (the gradient itself,
``W^T g`` for ``f = sum(tanh(W x))``) nothing reads, then a second backward; PyTorch's
double-backward trick runs a third.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import FLOAT_CHARS
from .._tensor import Tensor, edge, make
from ..ops.join import stack
from . import forward_ad as fwAD
from .api import grad as _autograd_grad
from .engine import run_backward
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled, state

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _zeros(t: Tensor) -> Tensor:
    return make(np.zeros_like(t._data))


# -- argument handling ----------------------------------------------------------------------------


def _tupled(x, what: str, fn: str) -> tuple[bool, tuple]:
    """``(was a tuple, as a tuple)``, with PyTorch's TypeError for anything but tensors."""
    is_tuple = isinstance(x, tuple)
    tup = x if is_tuple else (x,)
    for i, el in enumerate(tup):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {what}"
            kind = str(type(el)).replace("retrograd.", "torch.")
            raise TypeError(
                f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but the "
                f"{where} has type {kind}."
            )
    return is_tuple, tup


def _untuple(res, is_tuple: bool):
    return res if is_tuple else res[0]


def _untuple2(res, outer: bool, inner: bool):
    """Nested results (per output, per input): unwrap the levels that were not tuples."""
    if not inner:
        res = tuple(r[0] for r in res)
    return res if outer else res[0]


def _prepare(inputs, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh tensors to differentiate at: under ``create_graph`` an input that requires grad
    stays connected (an alias), so that the result can be differentiated further."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(res, create_graph: bool):
    """Detach results unless the caller asked for a graph (nested tuples too)."""
    if isinstance(res[0], Tensor):
        return res if create_graph else tuple(t.detach() for t in res)
    return tuple(_finish(r, create_graph) for r in res)


def _size(shape) -> str:
    return f"torch.Size({list(shape)})"


def _check_v(v, ref, ref_is_tuple: bool) -> None:
    if len(v) != len(ref):
        if ref_is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(ref)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, ref)):
        if a._data.shape != b._data.shape:
            where = f"Entry {i} in " if ref_is_tuple else ""
            raise RuntimeError(
                f"{where}v has invalid size: should be {_size(b.shape)} but got {_size(a.shape)}."
            )


_NEEDS_GRAD = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input. This is not allowed in strict mode. You should ensure "
               "that your function is thrice differentiable and that the hessian depends on the "
               "inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
                   "user-provided function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The "
               "outputs must be computed in a differentiable manner from the input when running "
               "in strict mode.",
}


def _strict_check(tensors, kind: str, strict: bool) -> None:
    """In strict mode, every tensor must exist and depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode."
            )
        if not t.requires_grad:
            raise RuntimeError(_NEEDS_GRAD[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None) -> tuple:
    """``autograd.grad`` over the outputs that require grad; None where nothing flows."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    outs, gos = [], []
    for o, g in zip(outputs, grad_outputs):
        if o is not None and o.requires_grad:
            outs.append(o)
            gos.append(g)
    if not outs:
        return (None,) * len(inputs)
    return _autograd_grad(outs, inputs, gos, allow_unused=True, create_graph=create_graph,
                 retain_graph=retain_graph)


_MISSING = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _zeros_for_missing(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros where no gradient flowed (an error in strict mode)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i=i))
            g = _zeros(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This is "
                "not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _v_or_scalar(v, ref, ref_is_tuple: bool, fn: str, create_graph: bool, of: str):
    """Check ``v`` against ``ref``; None is allowed when ``ref`` is one single-element tensor."""
    if v is not None:
        _, v = _tupled(v, "v", fn)
        v = _prepare(v, create_graph, need_graph=False)
        _check_v(v, ref, ref_is_tuple)
    elif len(ref) != 1 or ref[0].numel() != 1:
        raise RuntimeError(
            f"The vector v can only be None if the {of} a single Tensor with a single element."
        )
    return v


# -- the entry points -----------------------------------------------------------------------------


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product of ``func`` at ``inputs``.

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import vjp
    >>> out, g = vjp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))
    >>> g
    tensor([2., 4.])
    """
    with enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", "vjp")
        _strict_check(outputs, "outputs", strict)
        v = _v_or_scalar(v, outputs, out_tuple, "vjp", create_graph,
                         "user-provided function returns")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        res = _grad(outputs, inputs, v, create_graph=create_graph)
        res = _zeros_for_missing(res, inputs, strict, create_graph, "back")
    return (_untuple(_finish(outputs, create_graph), out_tuple),
            _untuple(_finish(res, create_graph), in_tuple))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``: the Jacobian-vector product of ``func`` at ``inputs``.

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import jvp
    >>> out, t = jvp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.5]))
    >>> t
    tensor([2., 2.])
    """
    with enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_or_scalar(v, inputs, in_tuple, "jvp", create_graph,
                         "input to the user-provided function is")
        out_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", "jvp")
        _strict_check(outputs, "outputs", strict)
        # u -> J^T u is linear, so the value of u is irrelevant (zeros: no inf or nan).
        us = tuple(_zeros(o).requires_grad_() for o in outputs)
        grad_inputs = _grad(outputs, inputs, us, create_graph=True)
        _strict_check(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _grad(grad_inputs, us, v, create_graph=create_graph)
        res = _zeros_for_missing(res, outputs, strict, create_graph, "back_trick")
    return (_untuple(_finish(outputs, create_graph), out_tuple),
            _untuple(_finish(res, create_graph), out_tuple))


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output shape ``O`` and input shape ``I``, a
    tensor of shape ``O + I`` (tuples of them, per output then per input, for tuples).

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, torch.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function",
                                     "jacobian")
        _strict_check(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                "supported together. Please either set `strict=False` or `vectorize=False`."
            )
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.numel()):
                vj = _grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode."
                            )
                        g = _zeros(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(
                            f"The jacobian of the user-provided function is independent of "
                            f"input {i}. This is not allowed in strict mode when "
                            "create_graph=True."
                        )
                    rows[k].append(g)
            jac.append(tuple(
                _stack_rows(r, out.shape + inp.shape, inp) for r, inp in zip(rows, inputs)))
        return _untuple2(_finish(tuple(jac), create_graph), out_tuple, in_tuple)


def _stack_rows(rows, shape, inp):
    if not rows:  # an output with no elements
        return make(np.zeros(tuple(shape), inp._data.dtype))
    return stack(rows, 0).view(tuple(shape))


def _jacfwd(func, inputs, strict: bool, vectorize: bool):
    """The forward-mode Jacobian: one forward-mode pass per input element."""
    if strict:
        raise RuntimeError(
            'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
            "are not supported together (yet). Please either set `strict=False` or "
            '`strategy="reverse-mode"`.'
        )
    in_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`."
        )
    # One forward pass per input element, each pushing one basis tangent through the function
    # (PyTorch batches these passes with vmap; the columns are the same).
    cols = None
    out_tuple = False
    outputs = ()
    for k, inp in enumerate(inputs):
        for j in range(inp.numel()):
            with fwAD.dual_level():
                duals = []
                for m, x in enumerate(inputs):
                    tan = np.zeros(x.shape, x._data.dtype)
                    if m == k:
                        tan.reshape(-1)[j] = 1
                    duals.append(fwAD.make_dual(x, make(tan)))
                # PyTorch names no function here: "The outputs given to None must be ..."
                out_tuple, res = _tupled(func(*duals), "outputs", "None")
                unpacked = [fwAD.unpack_dual(o) for o in res]
                outputs = [u.primal for u in unpacked]
                if cols is None:
                    cols = [[[] for _ in inputs] for _ in outputs]
                for i, u in enumerate(unpacked):
                    tan = u.tangent if u.tangent is not None else _zeros(u.primal)
                    cols[i][k].append(tan)
    if cols is None:  # no input elements: one call to learn the outputs
        out_tuple, outputs = _tupled(func(*inputs), "outputs", "None")
        cols = [[[] for _ in inputs] for _ in outputs]
    # Lists, not tuples, and no detach: PyTorch's forward-mode jacobian returns its nested lists
    # as they are (tuple inputs give a list) and keeps the tangents' graph (forward-over-reverse
    # hessian results require grad).
    jac = [
        [_stack_cols(cols[i][k], out.shape + inp.shape, inp) for k, inp in enumerate(inputs)]
        for i, out in enumerate(outputs)]
    if not in_tuple:
        jac = tuple(r[0] for r in jac)
    return jac if out_tuple else jac[0]


def _stack_cols(cols, shape, inp):
    if not cols:  # an input with no elements
        return make(np.zeros(tuple(shape), inp._data.dtype))
    return stack(cols, -1).reshape(tuple(shape))


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar function: per pair of inputs, a tensor of shape ``I_i + I_j``.

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    in_tuple, inputs = _tupled(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        out = func(*inp)
        out_tuple, outs = _tupled(out, "outputs of the user-provided function", "hessian")
        _strict_check(outs, "outputs", strict)
        if out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _strict_check(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _untuple2(res, in_tuple, in_tuple)


def _second_order(func, inputs, v, create_graph: bool, strict: bool, fn: str):
    """The common start of vhp and hvp: the gradient of the scalar ``func`` with a graph."""
    in_tuple, inputs = _tupled(inputs, "inputs", fn)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    v = _v_or_scalar(v, inputs, in_tuple, fn, create_graph,
                     "input to the user-provided function is")
    out_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", fn)
    _strict_check(outputs, "outputs", strict)
    if out_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn} should contain a single element"
        )
    jac = _grad(outputs, inputs, create_graph=True)
    _strict_check(jac, "jacobian", strict)
    return in_tuple, inputs, v, out_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a scalar function ``func``.

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    with enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, jac = _second_order(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _grad(jac, inputs, v, create_graph=create_graph)
        res = _zeros_for_missing(res, inputs, strict, create_graph, "double_back")
    return (_untuple(_finish(outputs, create_graph), out_tuple),
            _untuple(_finish(res, create_graph), in_tuple))


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a scalar function ``func``.

    Reverse-over-forward (see the module docstring): ``func`` runs once, recorded, then ``v``
    is pushed through the recorded graph as a forward tangent (``forward_ad.replay_tangent``)
    and the output's tangent ``<grad f, v>`` is differentiated once. ``strict=True`` and a call
    inside a ``dual_level`` take the double-backward route (``H`` is symmetric, so
    ``H v = v^T H``), as does a graph with a node the replay has no rule for (a custom
    Function), on the graph already recorded.

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    if not strict and fwAD.tangent_level() is None:
        return _hvp_forward(func, inputs, v, create_graph)
    with enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, jac = _second_order(
            func, inputs, v, create_graph, strict, "hvp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _grad(jac, inputs, v, create_graph=create_graph)
        res = _zeros_for_missing(res, inputs, strict, create_graph, "double_back_trick")
    return (_untuple(_finish(outputs, create_graph), out_tuple),
            _untuple(_finish(res, create_graph), in_tuple))


def _hvp_forward(func, inputs, v, create_graph: bool):
    """``hvp`` as the gradient of the output's forward tangent; same checks, in the same order,
    as ``_second_order``. ``func`` runs as a plain recorded call (no forward-mode level, no op
    observed) and the tangent is pushed through its graph afterwards, one rule per node that
    leads to the inputs. Grad modes are set directly (not through their context managers) and
    the gradient is one engine pass: ``hvp`` is often called in a loop (conjugate gradients),
    on small problems where these fixed costs would dominate."""
    prev = state.grad_enabled
    state.grad_enabled = True
    try:
        if inputs.__class__ is Tensor and v.__class__ is Tensor and not create_graph and \
                v._data.shape == inputs._data.shape:
            # One tensor and its v (the common call): what _prepare and _v_or_scalar do.
            # (A v outside any graph is the tangent as it is: detaching it changes nothing.)
            in_tuple = False
            x = make(inputs._data)  # inputs.detach().requires_grad_(), inlined
            x._vc = inputs._vc
            x._inference = inp_inf = inputs._inference
            if x._data.dtype.char in FLOAT_CHARS and not inp_inf:
                x._rg = True
            else:
                x.requires_grad_()  # its errors
            inputs = (x,)
            v = (v.detach() if v.requires_grad else v,)
        else:
            in_tuple, inputs = _tupled(inputs, "inputs", "hvp")
            inputs = _prepare(inputs, create_graph, need_graph=True)
            v = _v_or_scalar(v, inputs, in_tuple, "hvp", create_graph,
                             "input to the user-provided function is")
            if v is None:  # one single-element input: v = 1
                v = (make(np.ones_like(inputs[0]._data)),)
        out = func(*inputs)
        if out.__class__ is not Tensor:
            out_tuple, outputs = _tupled(out, "outputs of the user-provided function", "hvp")
            if out_tuple or not isinstance(out, Tensor):
                raise RuntimeError("The function given to hvp should return a single Tensor")
        if out._data.size != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hvp should contain a single "
                "element"
            )
        tangent = None
        closed = False
        replay = True
        if out._grad_fn is not None or out._view is not None and out.requires_grad:
            seeds = {}
            for x, t in zip(inputs, v):
                if x._data.dtype.char in FLOAT_CHARS:
                    # The result takes the input's dtype, as PyTorch's (v is cast to it).
                    seeds[edge(x)[0]] = t if t._data.dtype == x._data.dtype else t.to(x.dtype)
            try:
                tangent, closed = fwAD.replay_tangent(out, seeds)
            except fwAD.NoReplay:
                replay = False  # a custom Function: the double-backward trick, on this graph
            except NotImplementedError as e:
                if "forward mode AD" not in str(e):
                    raise
                replay = False
        if not replay:
            jac = _grad((out,), inputs, create_graph=True)
    finally:
        state.grad_enabled = prev
    state.grad_enabled = True if create_graph else prev
    try:
        if not replay:
            res = _grad(jac, inputs, v, create_graph=create_graph)
        # <grad f, v> depends on x only where f is not linear: elsewhere H v is zero.
        elif tangent is None or not tangent.requires_grad:
            res = (None,) * len(inputs)
        else:
            # (The tangent has the output's single element and a floating dtype: its seed.)
            a = tangent._data
            seed = make(np.array(1, a.dtype) if a.ndim == 0 else np.ones_like(a))
            # Every path from the output ends at an input (closed): the pass needs no pruning.
            res = run_backward((tangent,), (seed,), create_graph, create_graph, inputs,
                               accumulate=False, prune=not closed or create_graph)
        if in_tuple or res[0] is None:
            res = _zeros_for_missing(res, inputs, False, create_graph, "double_back_trick")
    finally:
        state.grad_enabled = prev
    if not create_graph:  # out.detach(), inlined
        d = make(out._data)
        d._vc = out._vc
        d._inference = out._inference
        out = d
    # (Without create_graph the engine's results are fresh tensors outside any graph already.)
    return out, res if in_tuple else res[0]
