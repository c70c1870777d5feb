"""Op table entries for the breadth ops (ops/composite.py, ops/counting.py): composites checked
for values and gradients to second order against torch, counting ops for values and dtypes.

Where PyTorch records one node for such an op, the composite is recorded as one node with that
name (``ops/fused.py``); where PyTorch composes, the composition ends in PyTorch's last op."""

from __future__ import annotations

from .op_table import OpInfo

OPS = [
    OpInfo("atleast_1d", lambda lib, a: lib.atleast_1d(a), [((),), ((3,),)]),
    OpInfo("atleast_2d", lambda lib, a: lib.atleast_2d(a) * 1, [((3,),), ((2, 3),)]),
    OpInfo("atleast_3d", lambda lib, a: lib.atleast_3d(a) * 1, [((3,),), ((2, 3),)]),
    OpInfo("block_diag", lambda lib, a, b: lib.block_diag(a, b), [((2, 2), (3,)), ((1, 3), ())]),
    OpInfo("cdist", lambda lib, a, b: lib.cdist(a, b), [((3, 2), (4, 2)), ((2, 3, 2), (2, 4, 2))],
           no_gradgrad="PyTorch's cdist has no second derivative"),
    OpInfo("cdist_p1", lambda lib, a, b: lib.cdist(a, b, p=1.0), [((3, 2), (4, 2))],
           positive_gap=0.1, no_gradgrad="PyTorch's cdist has no second derivative"),
    OpInfo("combinations", lambda lib, a: lib.combinations(a, 2), [((4,),)]),
    OpInfo("combinations_rep", lambda lib, a: lib.combinations(a, 3, with_replacement=True),
           [((3,),)]),
    OpInfo("cov", lambda lib, a: lib.cov(a), [((3, 5),)]),
    OpInfo("cov_1d", lambda lib, a: lib.cov(a), [((4,),)]),
    OpInfo("cov_weights", lambda lib, a, w: lib.cov(a, correction=0, aweights=w.abs() + 0.5),
           [((2, 5), (5,))]),
    OpInfo("corrcoef", lambda lib, a: lib.corrcoef(a), [((3, 5),)]),
    OpInfo("trapezoid", lambda lib, a: lib.trapezoid(a), [((3, 4),), ((5,),)]),
    OpInfo("trapezoid_x", lambda lib, a, x: lib.trapezoid(a, x, dim=0), [((4, 3), (4,))]),
    OpInfo("trapz_dx", lambda lib, a: lib.trapz(a, dx=0.5), [((3, 4),)]),
    OpInfo("cumulative_trapezoid", lambda lib, a: lib.cumulative_trapezoid(a, dim=0),
           [((4, 3),)]),
    # vander: tests/ops/test_breadth.py (PyTorch's cannot be differentiated with create_graph)
    OpInfo("diagflat", lambda lib, a: lib.diagflat(a, 1), [((2, 2),), ((3,),)]),
    OpInfo("dist", lambda lib, a, b: lib.dist(a, b), [((3, 4), (3, 4)), ((3, 4), (4,))]),
    OpInfo("dist_p3", lambda lib, a, b: lib.dist(a, b, 3), [((3, 4), (3, 4))]),
    OpInfo("renorm", lambda lib, a: lib.renorm(a, 2, 0, 1.0), [((3, 4),)]),
    OpInfo("copysign", lambda lib, a, b: lib.copysign(a, b), [((3, 4), (3, 4)), ((3, 4), (4,))],
           positive_gap=0.1),
    OpInfo("copysign_scalar", lambda lib, a: a.copysign(-1.0), [((3, 4),)], positive_gap=0.1),
    # non-negative powers: for a negative integer power PyTorch's gradient is 0 (see ldexp)
    OpInfo("ldexp", lambda lib, a: lib.ldexp(a, lib.tensor([1, 2, 3, 0])), [((3, 4),)]),
    OpInfo("msort", lambda lib, a: lib.msort(a), [((3, 4),)]),
    OpInfo("hsplit", lambda lib, a: lib.hsplit(a, 2)[1] * 1, [((3, 4),)]),
    OpInfo("vsplit", lambda lib, a: lib.vsplit(a, [1])[1] * 1, [((3, 4),)]),
    OpInfo("dsplit", lambda lib, a: lib.dsplit(a, 2)[0] * 1, [((2, 3, 4),)]),
    OpInfo("split_with_sizes", lambda lib, a: lib.split_with_sizes(a, [1, 3], 1)[1] * 1,
           [((3, 4),)]),
    OpInfo("select_scatter", lambda lib, a, b: lib.select_scatter(a, b, 1, 0), [((3, 4), (3,))]),
    OpInfo("slice_scatter", lambda lib, a, b: lib.slice_scatter(a, b, 1, 1, 3), [((3, 4), (3, 2))]),
    OpInfo("diagonal_scatter", lambda lib, a, b: lib.diagonal_scatter(a, b, 1),
           [((3, 4), (3,))]),
    OpInfo("quantile", lambda lib, a: lib.quantile(a, 0.3), [((3, 4),), ((5,),)]),
    OpInfo("quantile_dim", lambda lib, a: lib.quantile(a, lib.tensor([0.25, 0.8], dtype=a.dtype),
                                                         dim=1, keepdim=True), [((3, 4),)]),
    OpInfo("quantile_modes", lambda lib, a: lib.stack([
        lib.quantile(a, 0.4, dim=0, interpolation=m)
        for m in ("lower", "higher", "midpoint", "nearest")]), [((5, 3),)]),
    OpInfo("nanquantile", lambda lib, a: lib.nanquantile(a, 0.6, dim=-1), [((3, 4),)]),
    OpInfo("chain_matmul", lambda lib, a, b, c: lib.chain_matmul(a, b, c),
           [((2, 3), (3, 4), (4, 2))]),
    # torch.linalg composites (ops/linalg_composite.py)
    OpInfo("linalg_diagonal", lambda lib, a: lib.linalg.diagonal(a, offset=1), [((2, 3, 4),)]),
    OpInfo("multi_dot", lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]),
           [((3,), (3, 4), (4, 2)), ((2, 3), (3, 4), (4,))]),
    OpInfo("linalg_norm", lambda lib, a: lib.linalg.norm(a), [((3, 4),), ((5,),)]),
    OpInfo("linalg_norm_ord", lambda lib, a: lib.linalg.norm(a, 1, dim=(0, 1)), [((3, 4),)],
           positive_gap=0.1),
    OpInfo("cond", lambda lib, a: lib.linalg.cond(a), [((3, 3),)]),
    # cond with a matrix-norm p: PyTorch's own gradient fails under create_graph (see
    # test_breadth.py for its values)
    OpInfo("solve_ex", lambda lib, a, b: lib.linalg.solve_ex(a + 3 * lib.eye(3, dtype=a.dtype),
                                                            b).result,
           [((3, 3), (3, 2))]),
    OpInfo("solve_triangular", lambda lib, a, b: lib.linalg.solve_triangular(
        a + 3 * lib.eye(3, dtype=a.dtype), b, upper=True), [((3, 3), (3, 2))]),
    OpInfo("solve_triangular_unit", lambda lib, a, b: lib.linalg.solve_triangular(
        a, b, upper=False, left=False, unitriangular=True), [((3, 3), (2, 3))]),
    OpInfo("tensorinv", lambda lib, a: lib.linalg.tensorinv(
        (a + 3 * lib.eye(4, dtype=a.dtype)).reshape(4, 2, 2), ind=1), [((4, 4),)]),
    OpInfo("tensorsolve", lambda lib, a, b: lib.linalg.tensorsolve(
        (a + 3 * lib.eye(4, dtype=a.dtype)).reshape(2, 2, 4), b), [((4, 4), (2, 2))]),
    OpInfo("linalg_vander", lambda lib, a: lib.linalg.vander(a, N=4), [((3,),), ((2, 3),)]),
    OpInfo("matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a), [((3, 3),), ((2, 2, 2),)],
           low=-1.0, high=1.0),
    OpInfo("lstsq", lambda lib, a, b: lib.linalg.lstsq(a, b).solution, [((4, 3), (4, 2))]),
    OpInfo("lu_factor", lambda lib, a: lib.linalg.lu_factor(a).LU, [((3, 3),), ((2, 3, 3),)]),
    OpInfo("lu", lambda lib, a: lib.stack(lib.linalg.lu(a)[1:]), [((3, 3),)]),
    OpInfo("linalg_lu_L", lambda lib, a: lib.linalg.lu(a).L, [((3, 3),)]),
    OpInfo("linalg_lu_U", lambda lib, a: lib.linalg.lu(a).U, [((3, 3),), ((2, 3, 4),)]),
    OpInfo("lu_unpack", lambda lib, a: lib.lu_unpack(*lib.linalg.lu_factor(a)).U, [((3, 3),)]),
    OpInfo("triangular_solve", lambda lib, b, a: lib.triangular_solve(
        b, a.triu() + 3 * lib.eye(3, dtype=a.dtype)).solution, [((3, 2), (3, 3))]),
    OpInfo("lu_solve", lambda lib, a, b: lib.linalg.lu_solve(
        *lib.linalg.lu_factor(a + 3 * lib.eye(3, dtype=a.dtype)), b), [((3, 3), (3, 2))]),
    OpInfo("householder_product", lambda lib, a, t: lib.linalg.householder_product(a, t),
           [((4, 3), (2,)), ((2, 3, 3), (2, 3))]),
    OpInfo("ormqr", lambda lib, a, t, c: lib.ormqr(a, t, c, True, True), [((4, 3), (3,), (4, 2))]),
    OpInfo("geqrf", lambda lib, a: lib.geqrf(a)[0], [((4, 3),)], grad=False),
    # torch.special (ops/bessel.py): the differentiable ones
    OpInfo("i0", lambda lib, a: lib.i0(a), [((3, 4),), ((),)], low=-4, high=4),
    OpInfo("special_i0e", lambda lib, a: lib.special.i0e(a), [((3, 4),)], low=-4, high=4,
           positive_gap=0.1),
    # i1 and i1e in float64: PyTorch has no bfloat16/float16 backward for them
    OpInfo("special_i1", lambda lib, a: lib.special.i1(a.double()), [((3, 4),)], low=-4, high=4),
    OpInfo("special_i1e", lambda lib, a: lib.special.i1e(a.double()), [((3, 4),)], low=-4,
           high=4,
           positive_gap=0.1),
    OpInfo("special_erfcx", lambda lib, a: lib.special.erfcx(a), [((3, 4),)], low=-2, high=4),
    # the shape parameter a constant: PyTorch has no derivative in it
    OpInfo("special_gammainc", lambda lib, x: lib.special.gammainc(
        lib.linspace(0.5, 3.0, 12).to(x.dtype).reshape(3, 4), x.abs() + 0.1), [((3, 4),)],
        no_gradgrad="PyTorch has no second derivative of igamma"),
    OpInfo("igammac", lambda lib, x: lib.igammac(lib.linspace(0.5, 3.0, 4).to(x.dtype),
                                                 x.abs() + 0.1), [((3, 4),)],
           no_gradgrad="PyTorch has no second derivative of igammac"),
    # torch.special without a gradient (as in PyTorch): values against torch
    *[OpInfo(f"special_{n}", lambda lib, a, n=n: getattr(lib.special, n)(a * 4), [((3, 4),)],
             grad=False)
      for n in ("bessel_j0", "bessel_j1", "modified_bessel_i0", "modified_bessel_i1",
                "spherical_bessel_j0")],
    *[OpInfo(f"special_{n}", lambda lib, a, n=n: getattr(lib.special, n)(a.abs() * 4 + 0.1),
             [((3, 4),)], grad=False)
      for n in ("bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
                "scaled_modified_bessel_k0", "scaled_modified_bessel_k1")],
    *[OpInfo(f"special_{n}", lambda lib, a, n=n: getattr(lib.special, n)(a / 2, 5), [((3, 4),)],
             grad=False)
      for n in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")],
    OpInfo("special_zeta", lambda lib, a, q: lib.special.zeta(a.abs() + 1.5, q.abs() + 0.5),
           [((3, 4), (4,))], grad=False),
    OpInfo("special_multigammaln", lambda lib, a: lib.special.multigammaln(a.abs() + 2, 3),
           [((3, 4),)]),
    # counting and integer ops (no gradient): values and dtypes against torch
    OpInfo("bincount", lambda lib, a: lib.bincount((a.abs() * 3).long()), [((6,),)], grad=False),
    OpInfo("bincount_weights", lambda lib, a, w: lib.bincount((a.abs() * 3).long(), w, 8),
           [((6,), (6,))], grad=False),
    OpInfo("histc", lambda lib, a: lib.histc(a, bins=5, min=-1, max=1), [((3, 4),)], grad=False),
    OpInfo("histc_auto", lambda lib, a: lib.histc(a, bins=4), [((3, 4),)], grad=False),
    OpInfo("histogram", lambda lib, a: lib.histogram(a, bins=4).hist, [((3, 4),)], grad=False),
    OpInfo("histogram_edges", lambda lib, a: lib.histogram(a, bins=3, range=(-1.0, 1.0))[1],
           [((3, 4),)], grad=False),
    OpInfo("isin", lambda lib, a, b: lib.isin(a.round(), b.round()), [((3, 4), (5,))],
           grad=False),
    OpInfo("unique_consecutive", lambda lib, a: lib.unique_consecutive(a.round()),
           [((8,),)], grad=False),
    OpInfo("unique_consecutive_counts",
           lambda lib, a: lib.unique_consecutive(a.round(), return_counts=True)[1], [((8,),)],
           grad=False),
    OpInfo("gcd", lambda lib, a, b: lib.gcd((a * 9).long(), (b * 9).long()), [((3, 4), (4,))],
           grad=False),
    OpInfo("lcm", lambda lib, a, b: lib.lcm((a * 9).long(), (b * 9).long()), [((3, 4), (4,))],
           grad=False),
    OpInfo("heaviside", lambda lib, a, b: lib.heaviside(a.round(), b), [((3, 4), (4,))],
           grad=False),
    OpInfo("nextafter", lambda lib, a, b: lib.nextafter(a, b) - a, [((3, 4), (3, 4))],
           grad=False),
    OpInfo("frexp", lambda lib, a: lib.frexp(a).mantissa, [((3, 4),)], grad=False),
    OpInfo("isposinf", lambda lib, a: lib.isposinf(1 / a.round()), [((3, 4),)], grad=False),
    OpInfo("isneginf", lambda lib, a: lib.isneginf(1 / a.round()), [((3, 4),)], grad=False),
    OpInfo("isreal", lambda lib, a: lib.isreal(a), [((3, 4),)], grad=False),
]
