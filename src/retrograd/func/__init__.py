"""``retrograd.func``: composable function transforms, as ``torch.func``.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``,
``linearize`` (see ``_transforms``), ``functional_call`` and ``stack_module_state``
(``_module``), and ``vmap`` (``_vmap``). They compose: ``vmap(grad(loss))`` gives per-sample
gradients, ``hessian`` is ``jacfwd(jacrev(f))``.

>>> import retrograd as torch
>>> from retrograd.func import grad, vmap
>>> vmap(grad(lambda x: (x ** 3).sum()))(torch.tensor([[1.0], [2.0]]))
tensor([[ 3.],
        [12.]])
"""

from ._functionalize import debug_unwrap, functionalize
from ._module import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ._rearrange import rearrange
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state", "linearize", "replace_all_batch_norm_modules_",
           "functionalize", "debug_unwrap", "rearrange"]
