"""Op-table entries for the differentiable factories: ``meshgrid`` and ``cartesian_prod``.

Their outputs are views (expand of a reshape) and stacks of their inputs, so gradients flow back
to the 1-D (or 0-D) tensors they are built from. ``meshgrid`` returns a tuple: each entry picks
one output, or combines them, so that every output's gradient is checked.
"""

from __future__ import annotations

from .op_table import OpInfo

GRID2 = [((3,), (2,)), ((1,), (4,)), ((), (3,)), ((0,), (2,))]
GRID3 = [((2,), (3,), (2,)), ((), (2,), ())]

OPS = [
    OpInfo("meshgrid_ij_0", lambda lib, a, b: lib.meshgrid(a, b, indexing="ij")[0], GRID2),
    OpInfo("meshgrid_ij_1", lambda lib, a, b: lib.meshgrid(a, b, indexing="ij")[1], GRID2),
    OpInfo("meshgrid_xy_0", lambda lib, a, b: lib.meshgrid(a, b, indexing="xy")[0], GRID2),
    OpInfo("meshgrid_xy_list", lambda lib, a, b: lib.meshgrid([a, b], indexing="xy")[1], GRID2),
    OpInfo("meshgrid_xy_product",
           lambda lib, a, b, c: (lambda g: g[0] * g[1] * g[2])(
               lib.meshgrid(a, b, c, indexing="xy")),
           GRID3),
    OpInfo("meshgrid_ij_combined",
           lambda lib, a, b, c: (lambda g: g[0] * g[1] - g[2] ** 2)(
               lib.meshgrid(a, b, c, indexing="ij")), GRID3),
    OpInfo("meshgrid_single", lambda lib, a: lib.meshgrid(a, indexing="ij")[0] * 2,
           [((3,),), ((),)]),
    OpInfo("cartesian_prod", lambda lib, a, b: lib.cartesian_prod(a, b),
           [((3,), (2,)), ((1,), (4,)), ((0,), (2,))]),
    OpInfo("cartesian_prod_3", lambda lib, a, b, c: lib.cartesian_prod(a, b, c) ** 2,
           [((2,), (3,), (2,))]),
    OpInfo("cartesian_prod_single", lambda lib, a: lib.cartesian_prod(a) * 1.5, [((4,),)]),
]
