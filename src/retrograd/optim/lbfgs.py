"""``LBFGS``: limited-memory BFGS with an optional strong-Wolfe line search, as PyTorch's.

The parameters are treated as one flat vector. Each ``step(closure)`` runs up to ``max_iter``
iterations: the two-loop recursion turns the last ``history_size`` curvature pairs into a search
direction, then either a fixed step of ``lr`` or a strong-Wolfe line search moves along it.
Scalars are kept as PyTorch keeps them: the losses as Python floats, every dot product (and
what the recursion and the line search derive from them: ``ro``, ``H_diag``, the slopes, often
the step ``t``) as 0-dim tensors of the parameters' dtype, so that float32 problems round, branch
and count evaluations exactly as PyTorch's do.
"""

from __future__ import annotations

import retrograd as torch
from retrograd import Tensor

from .optimizer import Optimizer, _no_grad

__all__ = ["LBFGS"]


def _as_float(loss) -> float:
    # .item() rather than float(): a loss that requires grad is expected here, not warned about
    return loss.detach().item() if isinstance(loss, Tensor) else float(loss)


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through two points with their slopes (0-dim tensors),
    clipped to bounds: a float or a 0-dim tensor, as in PyTorch."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if not d2_square >= 0:
        return (lo + hi) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(pos, lo), hi)


def _strong_wolfe(obj, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search for a step ``t`` meeting the strong Wolfe conditions (bracket, then zoom).

    Returns ``(f_new, g_new, t, evaluations)``.
    """
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = obj(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # bracketing phase
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                          bounds=(min_step, max_step))
        f_prev, g_prev, gtd_prev = f_new, g_new.clone(), gtd_new
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    # zoom phase
    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1],
                               bracket_f[1], bracket_gtd[1])
        # keep t away from the bracket's ends unless progress stalls
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.clone(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.clone(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """L-BFGS, as PyTorch's; ``step`` needs a closure that recomputes the loss and its grads.

    >>> import retrograd as torch
    >>> x = torch.tensor([3.0, -2.0], requires_grad=True)
    >>> opt = torch.optim.LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((x - 1) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure); [round(v, 4) for v in x.tolist()]
    [1.0, 1.0]
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        return torch.cat([torch.zeros(p.numel(), dtype=p.dtype) if p.grad is None
                          else p.grad.reshape(-1) for p in self._params], 0)

    def _add_grad(self, step_size: float, update) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p), alpha=step_size)
            offset += n

    def _clone_param(self) -> list:
        return [p.clone() for p in self._params]

    def _set_param(self, values) -> None:
        for p, v in zip(self._params, values):
            p.copy_(v)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = _as_float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    @_no_grad
    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; returns the closure's first loss."""
        group = self.param_groups[0]
        lr = group["lr"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        def evaluate():
            with torch.enable_grad():
                return closure()

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = _as_float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")  # noqa: N806 - the textbook's name
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1  # noqa: N806
            else:
                # update the curvature pairs, skipping those with too little curvature
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)  # noqa: N806
                # two-loop recursion: d = -H @ grad
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = q.mul(H_diag)
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break  # not a descent direction

            ls_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj(x, t, d):
                    return self._directional_evaluate(evaluate, x, t, d)

                loss, flat_grad, t, ls_evals = _strong_wolfe(
                    obj, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = _as_float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_evals = 1
            current_evals += ls_evals
            state["func_evals"] += ls_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss
