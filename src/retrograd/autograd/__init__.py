"""retrograd.autograd: the engine's fronts, Function, grad modes and gradcheck."""

import sys as _sys

from . import (  # noqa: F401
    anomaly_mode,
    function,
    functional,
    grad_mode,
    gradcheck_jacobians,
    graph,
    modes_extra,
    multi_hook,
    saved_attrs,
    saved_hooks,
    saved_mutation,
    saved_raw,
)
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .api import _is_checkpoint_valid, backward, grad  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .modes_extra import (
    NestedIOFunction,
    _force_original_view_tracking,
    is_multithreading_enabled,
    is_view_replay_enabled,
    set_multithreading_enabled,
)
from .variable import Variable

# torch.autograd.graph's saved-tensor hooks live in saved_hooks.py (graph.py is in the core).
for _name in ("saved_tensors_hooks", "disable_saved_tensors_hooks", "save_on_cpu"):
    setattr(graph, _name, getattr(saved_hooks, _name))
graph.register_multi_grad_hook = multi_hook.register_multi_grad_hook
graph.allow_mutation_on_saved_tensors = saved_mutation.allow_mutation_on_saved_tensors
graph.region_activation_memory_budget = modes_extra.region_activation_memory_budget
for _name in ("InplaceFunction", "NestedIOFunction", "FunctionMeta"):
    setattr(function, _name, getattr(modes_extra, _name))
grad_mode.set_multithreading_enabled = set_multithreading_enabled
for _name in gradcheck_jacobians.__all__:  # (the module: ``gradcheck`` here is the function)
    setattr(_sys.modules[__name__ + ".gradcheck"], _name, getattr(gradcheck_jacobians, _name))

__all__ = [
    "backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
    "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "is_inference_mode_enabled", "gradcheck", "gradgradcheck", "GradcheckError", "graph",
    "functional", "anomaly_mode", "detect_anomaly", "set_detect_anomaly", "Variable",
    "NestedIOFunction", "set_multithreading_enabled", "is_multithreading_enabled",
    "is_view_replay_enabled",
]
