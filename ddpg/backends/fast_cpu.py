"""The hand-written CPU back-end: ``ddpg_agent.Agent.learn``'s update, by hand, on flat parameters, over two threads.

``FastCPU(agent)`` plugs into an agent (``agent.backend``): the agent keeps its networks,
buffer, noise, n-step returns and schedule, and its ``learn_many`` and ``policy`` run here.
On a small CPU the update is made of small matrix products, and PyTorch's per-operation
overhead (autograd graph, ``nn.Module`` calls, one Adam pass per tensor) costs as much as the
arithmetic. So here:

* each network's parameters live in one contiguous tensor (the layers hold views into it),
  so Adam, gradient clipping and the soft target update are a handful of tensor operations
  for all four networks (``FlatAdam``);
* the forward and backward passes are written out (``_td_target``, ``_critic_forward``,
  ``_critic_gradients``, ``_actor_gradients``), each writing into preallocated buffers;
* one update runs on two threads: a helper thread computes the TD target and the critic's
  gradients while the calling thread runs the critic's forward pass and the actor's
  update. Matrix products release the GIL, so both cores work at once, and each operation
  sees exactly the inputs it sees on one thread: two threads give bitwise the results of
  one (tested);
* with ``learn_many`` the next batch is drawn, into a preallocated tensor, while the
  current update finishes.

It serves the networks of ``model.py`` (three layers each, of the widths built, layer norm in the
critic or not) on the CPU, with no variant; ``ddpg.backends.choose`` admits it only for the exact
code it restates (``admission``, against ``fast_cpu_restates.json``: change this file with the code
it restates, then remake the record) and after ``proof.fast_cpu_differs``'s numerical check.
``tests/test_fast_agent.py`` proves it equal to ``Agent.learn`` one update at a time: from the
same weights, targets, Adam moments and batch, both gradients lie within float32's rounding
bound of the exact (float64) one, and the weights, targets and moments follow.

Its Adam moments live in one flat tensor while it trains; ``optimizer_state`` hands them to the
agent's own ``torch.optim.Adam`` objects, so a training state saved here resumes on any
back-end and device, and back.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from ddpg.agent_state import adam_states_from_flat
from ddpg.variants import registry
from ddpg.variants.config import variants_of
from ddpg_agent import Agent
from reacher.physics import available_cpus  # the one count of usable CPUs, the environment's too

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


def _flatten_parameters(modules: list[nn.Module], with_grad: bool
                        ) -> tuple[torch.Tensor, torch.Tensor | None]:
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
    """``torch.optim.Adam`` (bias-corrected; L2 weight decay added by the caller) on one flat
    tensor with a per-element learning rate, in 7 tensor operations per step.

    Replaces ``actor_optimizer.step()`` and ``critic_optimizer.step()`` of ``Agent.learn``:
    the actor and the critic share the flat tensor, so one pass steps both.
    """

    def __init__(self, params: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        self.params, self.grad, self.lr = params, grad, lr
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.exp_avg = torch.zeros_like(params)
        self.exp_avg_sq = torch.zeros_like(params)
        self._tmp = torch.empty_like(params)
        self.t = 0

    def step(self) -> None:
        """One Adam step from the current contents of ``grad``."""
        self.t += 1
        bc1 = 1.0 - self.beta1 ** self.t
        sqrt_bc2 = (1.0 - self.beta2 ** self.t) ** 0.5
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


class _HelperThread:
    """A second thread that runs one job per update (handed over with locks).

    Inside a job the caller and the helper meet at two points: ``to_helper`` (released by
    the caller, awaited by the job) and ``to_caller`` (released by the job, awaited by the
    caller); both are held between jobs. An exception in the job is re-raised by ``wait``
    in the calling thread.

    Ctrl-C (KeyboardInterrupt) can stop the caller anywhere, even between a hand-over and
    the ``try`` meant to follow it, leaving a job running or waiting for the caller.
    ``finish`` settles such a job; ``submit`` calls it first, so a later update never
    overlaps an interrupted one.
    """

    def __init__(self) -> None:
        self.pid = os.getpid()  # a forked child has no copy of the thread
        self._go = threading.Lock()
        self._done = threading.Lock()
        self.to_helper = threading.Lock()
        self.to_caller = threading.Lock()
        for lock in (self._go, self._done, self.to_helper, self.to_caller):
            lock.acquire()
        self.pending = False  # a job was (or was about to be) handed over, not yet collected
        self._idle = True  # the helper is waiting for a job
        self._job: Callable[[], Any] | None = None
        self._error: BaseException | None = None
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="ddpg-learner-helper", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        torch.set_num_threads(1)  # per thread under OpenMP: each op on one core
        while True:
            self._idle = True
            self._go.acquire()
            self._idle = False
            if self._stopping:
                return
            try:
                assert self._job is not None
                self._job()
            except BaseException as exc:  # handed to the caller by wait()
                self._error = exc
            self._job = None  # drop the reference to the agent's closure
            self._done.release()

    def submit(self, job: Callable[[], Any]) -> None:
        """Start ``job`` on the helper thread (after settling an interrupted one)."""
        if self.pending:
            self.finish()
        self.pending = True  # before the hand-over: an interrupt in between is settled
        self._job = job
        self._go.release()

    def wait(self) -> None:
        """Block until the submitted job has finished; re-raise its exception if any."""
        self._done.acquire()
        self._collect()
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def finish(self) -> None:
        """Settle a job whose caller was interrupted: let it run to its end (it may be
        waiting for the caller) and drop its error, which belongs to an aborted update."""
        if not self.pending:
            return
        if self.to_helper.locked():
            self.to_helper.release()
        idle_polls = 0
        while not self._done.acquire(timeout=0.05):
            # Interrupted before the hand-over: the helper keeps waiting for a job. Two
            # polls in a row, each after a failed wait, rule out the instant between the
            # helper taking a job and clearing its idle flag.
            idle_polls = idle_polls + 1 if self._idle and self._go.locked() else 0
            if idle_polls == 2:
                break
        self._collect()
        self._job = self._error = None

    def _collect(self) -> None:
        """Mark the job collected and hold both meeting points again."""
        self.pending = False
        for lock in (self.to_helper, self.to_caller):
            lock.acquire(blocking=False)

    def stop(self) -> None:
        """Let the thread exit (called when its agent is garbage-collected)."""
        self._stopping = True
        self._go.release()


class _Views:
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


class FastCPU:
    """The update of ``Agent.learn`` written by hand, on two threads when two CPUs are free.

    ``FastCPU(agent, threads=2)`` attaches itself (``agent.backend``). ``threads=1`` runs
    everything on the calling thread (same numbers; faster when another job keeps the second
    core busy). Each operation runs on one core, so it sets PyTorch's thread count to 1 for
    the process. The networks' parameters become views of flat tensors (the agent and its
    optimisers still hold the same ``Parameter`` objects), and one ``FlatAdam`` steps them.
    """

    name = "fast"  # run.json's "learner"
    # The parts of the loaded code it computes by hand instead of running them: admitted only where
    # proof.fast_cpu_differs shows that it computes what they compute.
    COMPUTES = ("Actor.forward", "Critic.forward", "Agent.policy", "Agent.learn_many", "ReplayBuffer.sample",
                "Agent.learn", "Agent.td_target", "Agent.critic_loss", "Agent.actor_loss", "Agent.optimise",
                "Agent.soft_update")

    def __init__(self, agent: Agent, threads: int = 2) -> None:
        if threads not in (1, 2):
            raise ValueError(f"threads must be 1 or 2, got {threads!r}")
        if agent.device.type != "cpu":
            raise ValueError(f"the fast learner runs on the CPU; this agent's networks are on {agent.device}")
        if agent.backend is not None:
            raise ValueError(f"the agent already has the {agent.backend.name} back-end")
        self.agent, cfg = agent, agent.config
        self.config, self.action_size = cfg, agent.action_size
        nets = [agent.actor_local, agent.critic_local]
        targets = [agent.actor_target, agent.critic_target]
        shapes = [p.shape for m in nets for p in m.parameters()]
        self.layer_norm = isinstance(getattr(agent.critic_local, "ln1", None), nn.LayerNorm)
        if not supports(agent):
            raise ValueError("the fast learner needs the 3-layer Actor and Critic of model.py and no variant")
        torch.set_num_threads(1)
        # Batches go into two preallocated tensors used in turn, so the next batch can be drawn
        # while the previous one is still in use (``_sample``).
        self._index = [torch.empty(cfg.batch_size, dtype=torch.long) for _ in range(2)]
        self._rows = [torch.empty(cfg.batch_size, agent.memory.data.shape[1]) for _ in range(2)]
        self._turn = 0
        self.flat, grad = _flatten_parameters(nets, with_grad=True)
        self.target_flat, _ = _flatten_parameters(targets, with_grad=False)
        assert grad is not None
        self.grad = grad
        self.n_actor = sum(p.numel() for p in agent.actor_local.parameters())
        self.critic_grad = grad[self.n_actor:]
        lr = torch.full_like(self.flat, cfg.lr_critic)
        lr[:self.n_actor] = cfg.lr_actor
        self.optimizer = FlatAdam(self.flat, grad, lr)
        self._p, self._t, self._g = (_Views(x, shapes) for x in (self.flat, self.target_flat, grad))
        self._work: dict[int, dict[str, torch.Tensor]] = {}
        p = self._p
        self._acting = ActorForward(p.w1, p.b1, p.w2, p.b2, p.w3, p.b3)
        self._helper: _HelperThread | None = None  # started by the first two-thread update
        self.threads = threads
        self.two_threads = threads == 2 and available_cpus() >= 2
        self.load_optimizers()  # the agent's Adam state, if it has any, becomes the flat one's
        # The training loop's act and step (fast_steps.FastSteps), set by ddpg.backends.attach where admitted.
        self.decisions: Any = None
        agent.backend = self

    def _sample(self) -> tuple[torch.Tensor, ...]:
        """``memory.sample()`` (the same random draws), as views into one of the two batch
        tensors: the call after next overwrites them."""
        memory = self.agent.memory
        if memory.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        self._turn ^= 1
        index, rows = self._index[self._turn], self._rows[self._turn]
        torch.randint(memory.size, (memory.batch_size,), generator=memory.generator, out=index)
        torch.index_select(memory.data, 0, index, out=rows)
        return memory.split(rows)

    # ------------------------------------------------------------ the schedule
    def learn(self, experiences: tuple[torch.Tensor, ...]) -> None:
        """One update on ``experiences``: the same as ``Agent.learn``."""
        self.settle()
        self._update(experiences, prefetch=False)
        self.agent.n_updates += 1

    def learn_many(self, n_updates: int) -> None:
        """``n_updates`` updates on fresh batches, as ``learn(memory.sample())`` in a loop.

        On two threads each next batch is drawn while the previous update finishes; nothing
        is added to the buffer in between and the draws come in the same order, so the
        numbers are the same.
        """
        self.settle()
        try:
            batch = self._sample() if n_updates > 0 else None
            for i in range(n_updates):
                assert batch is not None  # drawn before the loop or by the previous update
                batch = self._update(batch, prefetch=i + 1 < n_updates)
                self.agent.n_updates += 1
        except BaseException:  # Ctrl-C: no helper job may outlive the call (it may be drawing a batch)
            self.settle()
            raise

    def _update(self, batch: tuple[torch.Tensor, ...], prefetch: bool) -> tuple[torch.Tensor, ...] | None:
        """One update on ``batch``; with ``prefetch`` return the next batch."""
        if self.two_threads:
            next_batch = self._update_two_threads(batch, prefetch)
        else:
            s, a, r, ns, disc = batch
            ws = self._workspace(s.shape[0])
            y = self._td_target(ws, r, ns, disc)
            q = self._critic_forward(ws, s, a)
            self._critic_gradients(ws, q, y, s)
            self._actor_gradients(ws, s)
            self._clip_critic_gradient()
            self._apply_gradients()
            next_batch = self._sample() if prefetch else None
        return next_batch

    def _update_two_threads(self, batch: tuple[torch.Tensor, ...], prefetch: bool
                            ) -> tuple[torch.Tensor, ...] | None:
        """``_update`` on two threads, with bitwise the results of the one-thread order.

        helper thread: TD target; (once q is ready) the critic's gradients and their
        clipping; with ``prefetch``, the next batch.
        this thread: the critic's forward pass; the actor's forward and backward passes;
        (once the critic's gradients are ready) the Adam step and the target update.
        """
        s, a, r, ns, disc = batch
        ws = self._workspace(s.shape[0])
        helper = self._helper
        if helper is None or helper.pid != os.getpid():
            helper = self._helper = _HelperThread()
            weakref.finalize(self, helper.stop)
        q_ready, grads_ready = helper.to_helper, helper.to_caller
        q_box: list[torch.Tensor] = []
        critic_done: list[bool] = []
        next_box: list[tuple[torch.Tensor, ...]] = []

        def helper_part() -> None:
            try:
                try:
                    y = self._td_target(ws, r, ns, disc)
                finally:
                    q_ready.acquire()
                if not q_box:  # the critic's forward pass failed; its error is raised below
                    return
                self._critic_gradients(ws, q_box[0], y, s)
                self._clip_critic_gradient()
                critic_done.append(True)
            finally:
                grads_ready.release()
            if prefetch:  # after this update's random draws, into the other batch tensor
                next_box.append(self._sample())

        helper.submit(helper_part)
        try:
            try:
                q_box.append(self._critic_forward(ws, s, a))
            finally:
                q_ready.release()
            self._actor_gradients(ws, s)
            grads_ready.acquire()
            if critic_done:  # else the helper failed: wait() raises its error, no step taken
                self._apply_gradients()
        finally:
            helper.wait()
        return next_box[0] if next_box else None

    def settle(self) -> None:
        """Let a helper job left behind by Ctrl-C end before the buffer or the weights are
        touched again (it may still be drawing a batch)."""
        if self._helper is not None and self._helper.pending:
            self._helper.finish()

    def store_optimizers(self) -> None:
        """Hand the flat Adam's moments and step count to the agent's ``torch.optim.Adam``
        objects, per parameter, as their own steps would have left them (``ddpg.agent_state``
        saves those)."""
        flat = self.optimizer
        optimizers = (self.agent.actor_optimizer, self.agent.critic_optimizer)
        for opt, states in zip(optimizers, adam_states_from_flat(optimizers, flat.exp_avg, flat.exp_avg_sq, flat.t),
                               strict=True):
            opt.state.clear()
            opt.state.update(states)

    def weights_loaded(self) -> None:
        pass  # the networks' parameters are views of the flat tensors: nothing to follow

    def extra_state(self) -> None:
        return None  # nothing beyond the agent's own objects

    def loaded(self, extra: dict[str, Any] | None) -> None:
        """After the agent took back a training state: its Adam state becomes the flat one's."""
        self.load_optimizers()

    def load_optimizers(self) -> None:
        """Take the moments and step count from the agent's Adam objects (after a load)."""
        opt_state = self.optimizer
        opt_state.exp_avg.zero_()
        opt_state.exp_avg_sq.zero_()
        opt_state.t = 0
        offset = 0
        for opt in (self.agent.actor_optimizer, self.agent.critic_optimizer):
            for p in opt.param_groups[0]["params"]:
                n, state = p.numel(), opt.state.get(p)
                if state:
                    opt_state.exp_avg[offset:offset + n].copy_(state["exp_avg"].reshape(-1))
                    opt_state.exp_avg_sq[offset:offset + n].copy_(state["exp_avg_sq"].reshape(-1))
                    opt_state.t = int(state["step"])
                offset += n

    def policy(self, states: np.ndarray) -> np.ndarray:
        """``Agent.policy`` written out (``ActorForward``, on the flat parameters' views)."""
        return self._acting(states)

    # ------------------------------------------------------------- the passes
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

    def _clip_critic_gradient(self) -> None:
        """Replaces ``clip_grad_norm_(critic, grad_clip)`` and Adam's L2 weight decay term."""
        cfg = self.config
        if cfg.grad_clip > 0:
            norm = torch.linalg.vector_norm(self.critic_grad)
            self.critic_grad.mul_(torch.clamp(cfg.grad_clip / (norm + 1e-6), max=1.0))
        if cfg.weight_decay > 0:
            self.critic_grad.add_(self.flat[self.n_actor:], alpha=cfg.weight_decay)

    def _apply_gradients(self) -> None:
        """Replaces both ``optimizer.step()`` calls and both ``soft_update`` calls."""
        self.optimizer.step()
        self.target_flat.lerp_(self.flat, self.config.tau)


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


def supports(agent: Agent) -> bool:
    """Whether the fast learner can hold the agent's networks: three linear layers each, named and
    shaped as ``model.py``'s (layer norm in the critic or not), and no variant but those that only
    change what is stored (``variants.registry.data_only``). Whether it computes what they compute
    is not assumed from this: ``proof.fast_cpu_differs`` shows it when the learner is chosen."""
    actor, critic = agent.actor_local, agent.critic_local
    norm = nn.LayerNorm if agent.config.critic_layer_norm else nn.Identity
    layers = all(isinstance(getattr(actor, n, None), nn.Linear) for n in ("fc1", "fc2", "fc3")) and all(
        isinstance(getattr(critic, n, None), nn.Linear) for n in ("fcs1", "fc2", "fc3")) and all(
        isinstance(getattr(critic, n, None), norm) for n in ("ln1", "ln2"))
    n_critic = 10 if agent.config.critic_layer_norm else 6  # three layers, with layer norm two more
    return (layers and not set(variants_of(agent.config)) - registry.data_only()
            and len(list(actor.parameters())) == 6 and len(list(critic.parameters())) == n_critic)


__all__ = ["ActorForward", "FastCPU", "FlatAdam", "available_cpus", "supports"]
