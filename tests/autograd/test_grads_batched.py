"""``autograd.grad(..., is_grads_batched=True)`` against torch: dim 0 of each grad_output is a
batch of cotangents, each result a stack of VJPs; shape checks, errors and ``materialize_grads``.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from ..oracle import compare, compare_error

A = np.array([1.0, 2.0, -0.5])


def _x(lib):
    return lib.tensor(A, requires_grad=True)


def test_batched_vjps_match_torch(torch):
    def run(lib):
        x = _x(lib)
        y = lib.tensor([0.5, -1.0], requires_grad=True)
        out = (x * x).sin()
        (jac,) = lib.autograd.grad(out, x, lib.eye(3, dtype=lib.float64), retain_graph=True,
                                   is_grads_batched=True)
        # several outputs (a scalar one batched as (B,)), an unused input
        two = lib.autograd.grad((out, (x * 2).sum()), (x, y),
                                (lib.eye(3, dtype=lib.float64) * 2,
                                 lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)),
                                is_grads_batched=True, allow_unused=True)
        # a dtype other than the output's is cast; a matrix product
        mat = lib.autograd.grad(lib.ones(2, 3, dtype=lib.float64) @ x,
                                x, lib.eye(2, dtype=lib.float32), is_grads_batched=True)
        return jac, two, mat

    compare(run)


def test_create_graph_and_materialize(torch):
    def run(lib):
        x = _x(lib)
        y = lib.tensor(1.0, requires_grad=True)
        jac, gy = lib.autograd.grad(x ** 3, (x, y), lib.eye(3, dtype=lib.float64),
                                    create_graph=True, is_grads_batched=True,
                                    materialize_grads=True)
        (h,) = lib.autograd.grad(jac.sum(), x)  # differentiable: the Hessian's row sums
        return jac, jac.requires_grad, gy, gy.requires_grad, h

    compare(run)


def test_graph_is_freed_after_the_batch(torch):
    def run(lib):
        x = _x(lib)
        z = x * x
        lib.autograd.grad(z, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True)
        lib.autograd.grad(z, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True)

    compare_error(run)


ERRORS = [
    # remaining dims must match the output (PyTorch prints grad_output's shape one dim short)
    lambda lib: lib.autograd.grad(_x(lib) * 2, _x(lib), lib.ones(2, 2, 5), is_grads_batched=True),
    lambda lib: lib.autograd.grad(_x(lib) * 2, _x(lib), lib.ones(3), is_grads_batched=True),
    # no batch dim to index
    lambda lib: lib.autograd.grad(_x(lib).sum(), _x(lib), lib.tensor(1.0),
                                  is_grads_batched=True),
    lambda lib: lib.autograd.grad(_x(lib) * 2, _x(lib), lib.ones(0, 3), is_grads_batched=True),
    # an implicit gradient is batched over its dim 0 too: none left for a 0-d output, one
    # short of the output's shape otherwise
    lambda lib: lib.autograd.grad(_x(lib).sum(), _x(lib), is_grads_batched=True),
    lambda lib: lib.autograd.grad(_x(lib).sum().reshape(1, 1), _x(lib), is_grads_batched=True),
    # batch sizes differ
    lambda lib: (lambda x: lib.autograd.grad((x * x, x * 3), x, (lib.eye(3), lib.ones(2, 3)),
                                             is_grads_batched=True))(_x(lib).float()),
    # an input the outputs do not reach
    lambda lib: lib.autograd.grad(_x(lib) * 2, (_x(lib), lib.tensor(1.0, requires_grad=True)),
                                  lib.eye(3), is_grads_batched=True),
    lambda lib: lib.autograd.grad(_x(lib) * 2, _x(lib), [1.0], is_grads_batched=True),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(torch, i):
    compare_error(ERRORS[i])


def test_without_torch_by_hand():
    # The batched result is the stack of the per-row VJPs, here of a known Jacobian.
    x = retrograd.tensor(A, requires_grad=True)
    (jac,) = retrograd.autograd.grad(x ** 2, x, retrograd.eye(3, dtype=retrograd.float64),
                                     is_grads_batched=True)
    np.testing.assert_allclose(jac.numpy(), np.diag(2 * A))
