"""``affine_grid`` and ``grid_sample`` against PyTorch: 2-D and 3-D, both align_corners, every
padding mode, bilinear/trilinear and nearest; values and gradients for input, grid and theta."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as rt

from ..oracle import compare_error, run_both

TOL = dict(rtol=1e-6, atol=1e-8)
R = np.random.default_rng(0)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 2, 4)])
def test_affine_grid_matches_torch(torch, size, align):
    theta = R.standard_normal((2, 2, 3) if len(size) == 4 else (2, 3, 4))
    fns = [lambda t, lib=lib: lib.nn.functional.affine_grid(t, size, align_corners=align)
           for lib in (rt, torch)]
    run_both(torch, fns[0], fns[1], [theta], tol=TOL, grad_fn=False)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("nd", [2, 3])
def test_grid_sample_matches_torch(torch, nd, align, padding_mode, mode):
    x = R.standard_normal((2, 3) + (4, 5, 3)[:nd])
    grid = R.uniform(-1.4, 1.4, (2,) + (3, 2, 4)[:nd] + (nd,))
    fns = [lambda a, g, lib=lib: lib.nn.functional.grid_sample(
        a, g, mode=mode, padding_mode=padding_mode, align_corners=align) for lib in (rt, torch)]
    run_both(torch, fns[0], fns[1], [x, grid], tol=TOL, grad_fn=False)


def test_spatial_transformer_end_to_end(torch):
    x = R.standard_normal((2, 3, 5, 6))
    theta = R.standard_normal((2, 2, 3)) * 0.5
    fns = [lambda a, t, lib=lib: lib.nn.functional.grid_sample(
        a, lib.nn.functional.affine_grid(t, (2, 3, 4, 4), align_corners=False),
        align_corners=False) for lib in (rt, torch)]
    run_both(torch, fns[0], fns[1], [x, theta], tol=TOL, grad_fn=False)


def test_sampling_warnings_and_errors_match_torch(torch):
    for lib in (torch, rt):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            g = lib.nn.functional.affine_grid(lib.zeros(1, 2, 3), (1, 1, 2, 2))
            lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), g)
        assert len(w) == 2 and "align_corners=False since 1.3.0" in str(w[0].message)
    cases = [
        lambda lib: lib.nn.functional.affine_grid(lib.ones(1, 2, 3), (1, 1, 2, 2, 2),
                                                  align_corners=False),
        lambda lib: lib.nn.functional.affine_grid(lib.ones(1, 3, 3), (1, 1, 2, 2),
                                                  align_corners=False),
        lambda lib: lib.nn.functional.affine_grid(lib.ones(1, 2, 3), (1, 1, 2, 2, 2, 2),
                                                  align_corners=False),
        lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.ones(1, 2, 2, 2),
                                                  mode="bad", align_corners=False),
        lambda lib: lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.ones(1, 2, 2, 2),
                                                  padding_mode="bad", align_corners=False),
    ]
    for case in cases:
        compare_error(case)
