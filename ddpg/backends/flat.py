"""One flat tensor per kind of state, shared with the agent's own objects: the fast learner's storage.

The fast learner steps all of an update's parameters with a handful of tensor operations, so it
needs each kind of state in one contiguous tensor. It keeps no copy: the networks' parameters are
views of the flat parameters (``flatten_parameters``), and Adam's moments and step counts are views
installed as the agent's own ``torch.optim.Adam`` state (``FlatAdam``). A direct ``agent.learn``,
a save, a load or a switch of learner reads and writes the very numbers the fast learner steps.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


def flatten_parameters(modules: list[nn.Module], with_grad: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Move the parameters of ``modules`` into one contiguous tensor (the layers keep views).

    With ``with_grad`` each parameter's ``.grad`` is a view of one flat gradient tensor too.
    Returns (flat parameters, flat gradient or None).
    """
    params = [p for m in modules for p in m.parameters()]
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    grad = torch.zeros_like(flat) if with_grad else None
    offset = 0
    for p in params:
        n = p.numel()
        p.data = flat[offset:offset + n].view_as(p)
        if grad is not None:
            p.grad = grad[offset:offset + n].view_as(p)
        offset += n
    return flat, grad


class FlatAdam:
    """``torch.optim.Adam``'s step (fused, L2 weight decay added by the caller) on one flat tensor, whose
    moments and step counts are the optimisers' own state: each parameter's ``exp_avg``,
    ``exp_avg_sq`` and ``step`` in ``optimizer.state`` are views of ``exp_avg``, ``exp_avg_sq`` and
    ``steps`` here.

    Its settings are the optimisers' ``param_groups``, read by ``read_settings`` at each entry of the
    learner: a scheduler's or a hand-set lr, betas and eps all take effect. ``bind`` installs the
    views, taking the numbers an optimiser holds (after a load, or the readable learner's steps
    into a replaced state) into the flat tensors first.
    """

    def __init__(self, params: torch.Tensor, grad: torch.Tensor, optimizers: tuple[torch.optim.Optimizer, ...]) -> None:
        self.params, self.grad, self.optimizers = params, grad, optimizers
        self.members = [list(opt.param_groups[0]["params"]) for opt in optimizers]
        self.exp_avg, self.exp_avg_sq = torch.zeros_like(params), torch.zeros_like(params)
        self.steps = torch.zeros(sum(len(m) for m in self.members))  # float32, as fused Adam counts
        self._steps = self.steps.numpy()
        self.lr = torch.empty_like(params)  # per element: each optimiser's lr over its slice
        self._tmp = torch.empty_like(params)
        self.spans: list[tuple[int, int]] = []
        self._views: list[list[dict[str, torch.Tensor]]] = []
        offset, index = 0, 0
        for members in self.members:
            start, views = offset, []
            for p in members:
                n = p.numel()
                views.append({"step": self.steps[index], "exp_avg": self.exp_avg[offset:offset + n].view_as(p),
                              "exp_avg_sq": self.exp_avg_sq[offset:offset + n].view_as(p)})
                offset, index = offset + n, index + 1
            self.spans.append((start, offset))
            self._views.append(views)
        self._installed = [(opt, p, (mine["exp_avg"], mine["exp_avg_sq"], mine["step"]))
                           for opt, members, views in zip(optimizers, self.members, self._views, strict=True)
                           for p, mine in zip(members, views, strict=True)]
        self._lrs: list[float | None] = [None] * len(optimizers)
        self._t, self.beta1, self.beta2, self.eps = 0, 0.9, 0.999, 1e-8
        self.bind()

    def bound(self) -> bool:
        """Whether every parameter's state in the optimisers is still this one's views."""
        for opt, p, (m, v, step) in self._installed:
            now = opt.state.get(p)  # read each time: load_state_dict replaces the optimiser's state dict
            if now is None or now.get("exp_avg") is not m or now.get("exp_avg_sq") is not v or now.get("step") is not step:
                return False
        return True

    def bind(self) -> None:
        """Take the optimisers' state (zero where they have none) into the flat tensors, then make it views of them."""
        with torch.no_grad():
            for opt, members, views in zip(self.optimizers, self.members, self._views, strict=True):
                for p, mine in zip(members, views, strict=True):
                    now = opt.state.get(p) or {}
                    for key in ("exp_avg", "exp_avg_sq"):
                        value = now.get(key)
                        if value is not mine[key]:
                            mine[key].copy_(value.reshape(mine[key].shape) if value is not None else 0.0)
                    if now.get("step") is not mine["step"]:
                        mine["step"].fill_(float(now["step"]) if "step" in now else 0.0)
                    opt.state[p] = {**now, **mine}

    def read_settings(self) -> str | None:
        """Take each optimiser's lr, betas and eps and the step count, or say why one step cannot serve both."""
        if not self.bound():
            self.bind()
        groups = [opt.param_groups[0] for opt in self.optimizers]
        betas, eps = {tuple(map(float, g["betas"])) for g in groups}, {float(g["eps"]) for g in groups}
        if len(betas) > 1 or len(eps) > 1:
            return "the actor's and the critic's optimisers have different betas or eps"
        steps = self._steps
        if steps.min() != steps.max():
            return "the actor's and the critic's optimisers have taken different numbers of steps"
        (self.beta1, self.beta2), self.eps, self._t = betas.pop(), eps.pop(), int(steps[0])
        for i, (group, (lo, hi)) in enumerate(zip(groups, self.spans, strict=True)):
            lr = float(group["lr"])
            if lr != self._lrs[i]:
                self.lr[lo:hi] = lr
                self._lrs[i] = lr
        return None

    @property
    def t(self) -> int:
        """The steps taken: the optimisers' own count (``read_settings`` checks that all agree)."""
        return int(self.steps[0])

    def weight_decay(self, i: int) -> float:
        """The L2 weight decay of optimiser ``i`` (Adam adds it to the gradient)."""
        return float(self.optimizers[i].param_groups[0]["weight_decay"])

    def step(self) -> None:
        """One Adam step from the current contents of ``grad``."""
        self._t += 1  # the optimisers' step counts follow at the end of the learning step (sync_steps)
        bc1 = 1.0 - self.beta1 ** self._t
        sqrt_bc2 = (1.0 - self.beta2 ** self._t) ** 0.5
        g, tmp = self.grad, self._tmp
        self.exp_avg.lerp_(g, 1.0 - self.beta1)
        self.exp_avg_sq.mul_(self.beta2).addcmul_(g, g, value=1.0 - self.beta2)
        # p -= lr * (m / bc1) / (sqrt(v / bc2) + eps), rearranged to use one buffer. numpy's
        # square root is IEEE-exact on every CPU; torch.sqrt goes through MKL, which rounds it
        # differently on AMD and Intel CPUs.
        np.sqrt(self.exp_avg_sq.numpy(), out=tmp.numpy())
        tmp.add_(self.eps * sqrt_bc2)
        torch.div(self.exp_avg, tmp, out=tmp)
        tmp.mul_(self.lr)
        self.params.sub_(tmp, alpha=sqrt_bc2 / bc1)

    def sync_steps(self) -> None:
        """Write the steps taken into the optimisers' own step counts (views), as their own steps would have,
        before anything else reads them: at the end of every learning step, also one cut short."""
        if int(self._steps[0]) != self._t:
            self.steps.fill_(float(self._t))
            for opt in self.optimizers:  # as an lr scheduler's wrapper of step() marks it
                if "step" in opt.__dict__:
                    opt._opt_called = True  # type: ignore[attr-defined]


__all__ = ["FlatAdam", "flatten_parameters"]
