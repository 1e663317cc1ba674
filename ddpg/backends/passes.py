"""The update's passes written out for ``fast_cpu.FastCPU``: ``model.Actor``, ``model.Critic`` and the
losses of ``ddpg_agent.Agent.learn``, forward and backward, into preallocated buffers.

Each pass names the line of the readable code it replaces. They are ATen's own kernels called
directly (``addmm`` with its fused ReLU, ``native_layer_norm`` and its backward, the ReLU's
``threshold_backward``), the ones the modules' calls reach, so each result rounds as the module's
does. ``Passes`` is a mixin: ``FastCPU`` holds the named views of its flat tensors (``_p``
parameters, ``_t`` targets, ``_g`` gradients) that the passes read and write.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

# relu(bias + x @ w) in one call (ATen runs addmm, then relu in place: the same numbers).
_ADDMM_RELU = torch._addmm_activation
# The ReLU's backward as one fused kernel writing into a preallocated buffer:
# _RELU_GRAD(grad, out, 0.0, grad_input=dst) sets dst = grad * (out > 0).
_RELU_GRAD = torch.ops.aten.threshold_backward.grad_input
LAYER_NORM_EPS = 1e-5  # nn.LayerNorm's default, which model.Critic's layer norm uses


# Layer norm by ATen's own kernels, the ones nn.LayerNorm runs, writing into preallocated
# buffers: the forward returns the output, and each row's mean and 1/std for the backward.
_LAYER_NORM = torch.ops.aten.native_layer_norm.out
_LAYER_NORM_GRAD = torch.ops.aten.native_layer_norm_backward.out


def _layer_norm_relu(pre: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, mean: torch.Tensor,
                     rstd: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """Replaces ``relu(layer_norm(pre))`` (``model.Critic`` with ``layer_norm``): into ``out``,
    keeping each row's mean and 1/std for the backward pass."""
    _LAYER_NORM(pre, [pre.shape[1]], weight, bias, LAYER_NORM_EPS, out0=out, out1=mean, out2=rstd)
    return out.relu_()


def _layer_norm_relu_backward(grad_out: torch.Tensor, out: torch.Tensor, pre: torch.Tensor, mean: torch.Tensor,
                              rstd: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, grad_relu: torch.Tensor,
                              grad_pre: torch.Tensor, grad_weight: torch.Tensor, grad_bias: torch.Tensor
                              ) -> torch.Tensor:
    """The backward pass of ``_layer_norm_relu``: past the ReLU into ``grad_relu`` (which may
    be ``grad_out`` itself), then through layer norm into ``grad_pre``, ``grad_weight`` and
    ``grad_bias``."""
    dy = _RELU_GRAD(grad_out, out, 0.0, grad_input=grad_relu)
    _LAYER_NORM_GRAD(dy, pre, [pre.shape[1]], mean, rstd, weight, bias, [True, True, True],
                     out0=grad_pre, out1=grad_weight, out2=grad_bias)
    return grad_pre



class Views:
    """Named views of the flat [actor | critic] tensor (parameters, targets or gradients).

    Actor: w1 b1 w2 b2 w3 b3; critic: v1 c1 v2 c2 v3 c3, with v2s and v2a the columns of the
    critic's second layer that take the first layer's output and the action, and with layer
    norm its weights and biases n1 m1 (first layer) n2 m2 (second). The ``...T`` names are
    transposed views, made once.
    """

    def __init__(self, flat: torch.Tensor, shapes: list[torch.Size]) -> None:
        names = ["w1", "b1", "w2", "b2", "w3", "b3", "v1", "c1", "v2", "c2", "v3", "c3", "n1", "m1", "n2", "m2"]
        names = names[:len(shapes)]
        offset = 0
        for name, shape in zip(names, shapes, strict=True):
            n = int(np.prod(shape))
            setattr(self, name, flat[offset:offset + n].view(shape))
            offset += n
        hidden = self.v1.shape[0]
        self.v2s, self.v2a = self.v2[:, :hidden], self.v2[:, hidden:]
        for name in ("w1", "w2", "w3", "v1", "v2s", "v2a", "v3"):
            setattr(self, name + "T", getattr(self, name).t())



class Passes:
    """The forward and backward passes of one update, on ``self._p``, ``self._t`` and ``self._g``
    (``Views``), with ``self.layer_norm`` and ``self.action_size``; ``self._work`` holds the buffers."""

    _p: Views
    _t: Views
    _g: Views
    _work: dict[int, dict[str, torch.Tensor]]
    layer_norm: bool
    action_size: int

    def _workspace(self, b: int) -> dict[str, torch.Tensor]:
        """Preallocated activations for batch size b (allocated once per size)."""
        ws = self._work.get(b)
        if ws is None:
            na = self.action_size
            p = self._p  # the widths of the networks built (model.py's own, or the config's)
            h1, h2, c1, c2 = p.w1.shape[0], p.w2.shape[0], p.v1.shape[0], p.v2.shape[0]
            e = torch.empty
            ws = {"t_h1": e(b, h1), "t_h2": e(b, h2), "t_mu": e(b, na), "t_x": e(b, c1),
                  "t_z": e(b, c2), "q_next": e(b, 1), "y": e(b, 1), "xa": e(b, c1 + na),
                  "z": e(b, c2), "h": e(b, c2), "q": e(b, 1), "dq": e(b, 1), "dh": e(b, c2),
                  "dx": e(b, c1), "h1": e(b, h1), "h2": e(b, h2), "mu": e(b, na),
                  "hp": e(b, c2), "dhp": e(b, c2), "dmu": e(b, na), "dh2": e(b, h2),
                  "dh1": e(b, h1), "v3s": e(1, c2)}
            if self.layer_norm:  # per pass: pre-activations, each row's mean and 1/std; gradients
                for pre, width in (("t_x", c1), ("t_z", c2), ("x", c1), ("z", c2), ("hp", c2)):
                    ws.update({pre + "_pre": e(b, width), pre + "_mean": e(b, 1), pre + "_rstd": e(b, 1)})
                ws.update({"dz_pre": e(b, c2), "dx_pre": e(b, c1), "dhp_pre": e(b, c2),
                           "hp_dn": e(c2), "hp_dm": e(c2)})  # the actor's pass: layer norm's own, unused
            self._work[b] = ws
        return ws

    def _td_target(self, ws: dict[str, torch.Tensor], r: torch.Tensor, ns: torch.Tensor,
                   disc: torch.Tensor) -> torch.Tensor:
        """Replaces ``y = rewards + discounts * critic_target(s', actor_target(s'))``."""
        t, addmm = self._t, torch.addmm
        _ADDMM_RELU(t.b1, ns, t.w1T, out=ws["t_h1"])
        _ADDMM_RELU(t.b2, ws["t_h1"], t.w2T, out=ws["t_h2"])
        addmm(t.b3, ws["t_h2"], t.w3T, out=ws["t_mu"]).tanh_()
        if self.layer_norm:
            pre = addmm(t.c1, ns, t.v1T, out=ws["t_x_pre"])
            _layer_norm_relu(pre, t.n1, t.m1, ws["t_x_mean"], ws["t_x_rstd"], out=ws["t_x"])
            addmm(t.c2, ws["t_x"], t.v2sT, out=ws["t_z_pre"])
            pre = addmm(ws["t_z_pre"], ws["t_mu"], t.v2aT, out=ws["t_z_pre"])
            _layer_norm_relu(pre, t.n2, t.m2, ws["t_z_mean"], ws["t_z_rstd"], out=ws["t_z"])
        else:
            _ADDMM_RELU(t.c1, ns, t.v1T, out=ws["t_x"])
            addmm(t.c2, ws["t_x"], t.v2sT, out=ws["t_z"])
            _ADDMM_RELU(ws["t_z"], ws["t_mu"], t.v2aT, out=ws["t_z"])
        addmm(t.c3, ws["t_z"], t.v3T, out=ws["q_next"])
        return torch.addcmul(r, disc, ws["q_next"], out=ws["y"])

    def _critic_forward(self, ws: dict[str, torch.Tensor], s: torch.Tensor,
                        a: torch.Tensor) -> torch.Tensor:
        """Replaces ``critic_local(states, actions)``, keeping xa = [relu(fcs1(s)) | a] (fc2's
        input), z (fc2's state part plus bias) and h = relu(fc2(xa)) for the backward passes
        (with layer norm, the normalised values and 1/std of both layers too)."""
        p = self._p
        hidden = p.v1.shape[0]
        xa = ws["xa"]
        x = xa[:, :hidden]
        if self.layer_norm:
            pre = torch.addmm(p.c1, s, p.v1T, out=ws["x_pre"])
            _layer_norm_relu(pre, p.n1, p.m1, ws["x_mean"], ws["x_rstd"], out=x)
        else:
            _ADDMM_RELU(p.c1, s, p.v1T, out=x)
        xa[:, hidden:].copy_(a)
        z = torch.addmm(p.c2, x, p.v2sT, out=ws["z"])
        if self.layer_norm:
            pre = torch.addmm(z, a, p.v2aT, out=ws["z_pre"])
            h = _layer_norm_relu(pre, p.n2, p.m2, ws["z_mean"], ws["z_rstd"], out=ws["h"])
        else:
            h = _ADDMM_RELU(z, a, p.v2aT, out=ws["h"])
        return torch.addmm(p.c3, h, p.v3T, out=ws["q"])

    def _critic_gradients(self, ws: dict[str, torch.Tensor], q: torch.Tensor, y: torch.Tensor,
                          s: torch.Tensor) -> None:
        """Replaces ``mse_loss(q, y).backward()`` for the critic's weights (through its 3 layers).

        Writes only the critic's gradients and its own buffers, so ``ws["z"]`` still holds the
        critic trunk that the actor's pass goes through.
        """
        p, g, mm = self._p, self._g, torch.mm
        b = q.shape[0]
        dq = torch.sub(q, y, out=ws["dq"]).mul_(2.0 / b)
        h, xa = ws["h"], ws["xa"]
        x = xa[:, :p.v1.shape[0]]
        mm(dq.t(), h, out=g.v3)
        torch.sum(dq, 0, out=g.c3)
        dh = mm(dq, p.v3, out=ws["dh"])
        if self.layer_norm:
            dh = _layer_norm_relu_backward(dh, h, ws["z_pre"], ws["z_mean"], ws["z_rstd"], p.n2, p.m2, dh,
                                           ws["dz_pre"], g.n2, g.m2)
        else:
            dh = _RELU_GRAD(dh, h, 0.0, grad_input=dh)
        mm(dh.t(), xa, out=g.v2)
        torch.sum(dh, 0, out=g.c2)
        dx = mm(dh, p.v2s, out=ws["dx"])
        if self.layer_norm:
            dx = _layer_norm_relu_backward(dx, x, ws["x_pre"], ws["x_mean"], ws["x_rstd"], p.n1, p.m1, dx,
                                           ws["dx_pre"], g.n1, g.m1)
        else:
            dx = _RELU_GRAD(dx, x, 0.0, grad_input=dx)
        mm(dx.t(), s, out=g.v1)
        torch.sum(dx, 0, out=g.c1)

    def _actor_gradients(self, ws: dict[str, torch.Tensor], s: torch.Tensor) -> None:
        """Replaces ``(-critic_local(s, actor_local(s)).mean()).backward()`` for the actor's
        weights, with the critic held fixed. Q(s, mu(s)) reuses the critic trunk z of the
        critic's forward pass (the state part does not depend on the action)."""
        p, g, mm = self._p, self._g, torch.mm
        b = s.shape[0]
        h1 = _ADDMM_RELU(p.b1, s, p.w1T, out=ws["h1"])
        h2 = _ADDMM_RELU(p.b2, h1, p.w2T, out=ws["h2"])
        mu = torch.addmm(p.b3, h2, p.w3T, out=ws["mu"]).tanh_()
        v3s = torch.mul(p.v3, -1.0 / b, out=ws["v3s"]).expand(b, -1)
        if self.layer_norm:
            pre = torch.addmm(ws["z"], mu, p.v2aT, out=ws["hp_pre"])
            hp = _layer_norm_relu(pre, p.n2, p.m2, ws["hp_mean"], ws["hp_rstd"], out=ws["hp"])
            dhp = _layer_norm_relu_backward(v3s, hp, pre, ws["hp_mean"], ws["hp_rstd"], p.n2, p.m2, ws["dhp"],
                                            ws["dhp_pre"], ws["hp_dn"], ws["hp_dm"])
        else:
            hp = _ADDMM_RELU(ws["z"], mu, p.v2aT, out=ws["hp"])
            dhp = _RELU_GRAD(v3s, hp, 0.0, grad_input=ws["dhp"])
        dmu = mm(dhp, p.v2a, out=ws["dmu"])
        dmu.addcmul_(dmu, mu * mu, value=-1.0)  # tanh' = 1 - mu^2
        mm(dmu.t(), h2, out=g.w3)
        torch.sum(dmu, 0, out=g.b3)
        dh2 = _RELU_GRAD(mm(dmu, p.w3, out=ws["dh2"]), h2, 0.0, grad_input=ws["dh2"])
        mm(dh2.t(), h1, out=g.w2)
        torch.sum(dh2, 0, out=g.b2)
        dh1 = _RELU_GRAD(mm(dh2, p.w2, out=ws["dh1"]), h1, 0.0, grad_input=ws["dh1"])
        mm(dh1.t(), s, out=g.w1)
        torch.sum(dh1, 0, out=g.b1)



class ActorForward:
    """``model.Actor``'s forward pass on a CPU, written out into preallocated buffers: bitwise
    the actions of the module's call, without the nn.Module calls, which cost more than the
    three small products. It holds views of the weights, so it follows them as they learn."""

    def __init__(self, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, b2: torch.Tensor, w3: torch.Tensor,
                 b3: torch.Tensor) -> None:
        self.w1T, self.w2T, self.w3T = w1.detach().t(), w2.detach().t(), w3.detach().t()
        self.b1, self.b2, self.b3 = b1.detach(), b2.detach(), b3.detach()
        self._buffers: dict[int, dict[str, torch.Tensor]] = {}  # by batch size

    @classmethod
    def of(cls, actor: nn.Module) -> ActorForward:
        """The written-out pass of a ``model.Actor`` on the CPU."""
        return cls(actor.fc1.weight, actor.fc1.bias, actor.fc2.weight, actor.fc2.bias, actor.fc3.weight,
                   actor.fc3.bias)

    def __call__(self, states: np.ndarray) -> np.ndarray:
        """mu(s) for a float32 batch (n, state_size); the array is overwritten by the next call
        with as many states (``Agent.act`` copies it at once)."""
        n = len(states)
        ws = self._buffers.get(n)
        if ws is None:
            ws = self._buffers[n] = {"s": torch.empty(n, self.w1T.shape[0]), "h1": torch.empty(n, self.w1T.shape[1]),
                                     "h2": torch.empty(n, self.w2T.shape[1]), "mu": torch.empty(n, self.w3T.shape[1])}
        ws["s"].numpy()[...] = states
        h1 = _ADDMM_RELU(self.b1, ws["s"], self.w1T, out=ws["h1"])
        h2 = _ADDMM_RELU(self.b2, h1, self.w2T, out=ws["h2"])
        return torch.addmm(self.b3, h2, self.w3T, out=ws["mu"]).tanh_().numpy()



__all__ = ["LAYER_NORM_EPS", "ActorForward", "Passes", "Views"]
