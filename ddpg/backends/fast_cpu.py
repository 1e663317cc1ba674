"""The hand-written CPU back-end: ``ddpg_agent.Agent.learn``'s update, by hand, on flat parameters, over two threads.

``FastCPU(agent)`` plugs into an agent (``agent.backend``): the agent keeps its networks,
optimisers, buffer, noise, n-step returns and schedule, and its ``learn_many`` and ``policy``
run here. On a small CPU the update is made of small matrix products, and PyTorch's
per-operation overhead (autograd graph, ``nn.Module`` calls, one Adam pass per tensor) costs as
much as the arithmetic. So here:

* each network's parameters live in one contiguous tensor, and the optimisers' Adam state in
  others (``flat``: the layers and ``optimizer.state`` hold views), so Adam, gradient clipping
  and the soft target update are a handful of tensor operations for all four networks;
* the forward and backward passes are written out (``passes``), into preallocated buffers;
* one update runs in one order (``_helper_side`` and ``_caller_side``, meeting twice): on two
  threads a helper computes the TD target and the critic's gradients while the calling thread
  runs the critic's forward pass and the actor's update. Matrix products release the GIL, so
  both cores work at once, and each pass sees exactly the inputs it sees on one thread: two
  threads give bitwise the results of one (tested);
* with ``learn_many`` the next batch is drawn, into a preallocated tensor, while the
  current update finishes.

It keeps no copy of the agent's state and reads every setting where the readable code reads it,
at each entry (``_enter``): the config's ``tau`` and ``grad_clip``, each optimiser's lr, betas, eps
and weight decay. So a scheduler, a hand-set lr, a direct ``agent.learn`` between its updates, a
save at any moment or a switch of learner each continues exactly. What it cannot follow (another
optimiser, buffer or config object, a patched part or library function: ``guard``) makes it step
aside for the readable learner, from that update, with one line.

It serves the networks of ``model.py`` (three layers each, of the widths built, layer norm in the
critic or not) on the CPU, with no variant; ``ddpg.backends.choose`` admits it only for the exact
code it restates (``admission``, against ``fast_cpu_restates.json``, which also holds a hash of
this file: change it with the code it restates, then remake the record, which checks it first)
and after ``proof.fast_cpu_differs``'s numerical check. ``tests/test_fast_agent.py`` proves it
equal to ``Agent.learn`` one update at a time: from the same weights, targets, Adam moments and
batch, both gradients lie within float32's rounding bound of the exact (float64) one, and the
weights, targets and moments follow.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from torch import nn

from common.cpus import available_cpus  # the one count of usable CPUs, the environment's too
from ddpg.backends.flat import FlatAdam, flatten_parameters
from ddpg.backends.guard import Guard, aside_line
from ddpg.backends.helper_thread import HelperThread
from ddpg.backends.passes import ActorForward, Passes, Views
from ddpg.backends.restated import UPDATE
from ddpg.variants import registry
from ddpg.variants.config import variants_of
from ddpg_agent import Agent


class FastCPU(Passes):
    """The update of ``Agent.learn`` written by hand, on two threads when two CPUs are free.

    ``FastCPU(agent, threads=2)`` attaches itself (``agent.backend``). ``threads=1`` runs
    everything on the calling thread (same numbers; faster when another job keeps the second
    core busy). Each operation runs on one core, so it sets PyTorch's thread count to 1 for
    the process. The networks' parameters become views of flat tensors and the optimisers' Adam
    state views of ``FlatAdam``'s (the agent keeps the same ``Parameter`` and optimiser objects).
    """

    name = "fast"  # run.json's "learner"

    def __init__(self, agent: Agent, threads: int = 2) -> None:
        if threads not in (1, 2):
            raise ValueError(f"threads must be 1 or 2, got {threads!r}")
        if agent.device.type != "cpu":
            raise ValueError(f"the fast learner runs on the CPU; this agent's networks are on {agent.device}")
        if agent.backend is not None:
            raise ValueError(f"the agent already has the {agent.backend.name} back-end")
        if not supports(agent):
            raise ValueError("the fast learner needs the 3-layer Actor and Critic of model.py and no variant")
        self.agent, self.action_size = agent, agent.action_size
        nets = [agent.actor_local, agent.critic_local]
        shapes = [p.shape for m in nets for p in m.parameters()]
        self.layer_norm = isinstance(getattr(agent.critic_local, "ln1", None), nn.LayerNorm)
        torch.set_num_threads(1)
        # Batches go into two preallocated tensors used in turn, so the next batch can be drawn
        # while the previous one is still in use (``_sample``); one pair per batch size and row width.
        self._batches: dict[tuple[int, int], list[tuple[torch.Tensor, torch.Tensor]]] = {}
        self._turn = 0
        self.flat, grad = flatten_parameters(nets, with_grad=True)
        self.target_flat, _ = flatten_parameters([agent.actor_target, agent.critic_target], with_grad=False)
        assert grad is not None
        self.grad = grad
        self.n_actor = sum(p.numel() for p in agent.actor_local.parameters())
        self.critic_grad = grad[self.n_actor:]
        self.optimizer = FlatAdam(self.flat, grad, (agent.actor_optimizer, agent.critic_optimizer))
        self._p, self._t, self._g = (Views(x, shapes) for x in (self.flat, self.target_flat, grad))
        self._work: dict[int, dict[str, torch.Tensor]] = {}
        p = self._p
        self._acting = ActorForward(p.w1, p.b1, p.w2, p.b2, p.w3, p.b3)
        self._helper: HelperThread | None = None  # started by the first two-thread update
        self.threads = threads
        self.two_threads = threads == 2 and available_cpus() >= 2
        self._tau, self._clip, self._decay = 0.0, 0.0, (0.0, 0.0)  # read at each entry (_enter)
        # The training loop's act and step (fast_steps.FastSteps), set by ddpg.backends.attach where admitted.
        self.decisions: Any = None
        self.guard = Guard(agent)  # what it was admitted for, checked at every entry
        agent.backend = self

    @property
    def config(self) -> Any:
        return self.agent.config  # read live: a replaced config is the guard's to catch

    # ------------------------------------------------------------ entries
    def _enter(self) -> bool:
        """At each entry of the update: the guard, then every setting where the readable code reads it
        (the config's tau and grad_clip, the optimisers' lr, betas, eps and weight decay). False when
        it stepped aside for the readable learner."""
        memory = self.agent.memory
        why = self.guard.problem(UPDATE) or self.optimizer.read_settings()
        if why is None and (memory.data.dtype is not torch.float32 or memory.data.dim() != 2):
            why = f"the replay buffer's rows are {memory.data.dtype} of {memory.data.dim()} dimensions"
        if why:
            self.step_aside(why)
            return False
        cfg = self.agent.config
        self._tau, self._clip = float(cfg.tau), float(cfg.grad_clip)
        self._decay = (self.optimizer.weight_decay(0), self.optimizer.weight_decay(1))
        return True

    def step_aside(self, why: str) -> None:
        """From now on the readable learner runs this agent's updates (and acting), on the same state:
        nothing to hand over. One line says from which update, and why."""
        self.settle()
        agent = self.agent
        if agent.backend is self:
            agent.backend = None
            print(aside_line(UPDATE, agent.n_updates + 1, why), flush=True)

    def policy(self, states: np.ndarray) -> np.ndarray:
        """``Agent.policy`` written out (``ActorForward``, on the flat parameters' views)."""
        why = self.guard.problem("acting")
        if why:
            self.step_aside(why)
            return self.agent.policy(states)
        return self._acting(states)

    def learn(self, experiences: tuple[torch.Tensor, ...]) -> None:
        """One update on ``experiences``: the same as ``Agent.learn``."""
        if not self._enter():
            return self.agent.learn(experiences)
        self.settle()
        try:
            self._update(experiences, prefetch=False)
            self.agent.n_updates += 1
        finally:
            self.optimizer.sync_steps()
        return None

    def learn_many(self, n_updates: int) -> None:
        """``n_updates`` updates on fresh batches, as ``learn(memory.sample())`` in a loop.

        On two threads each next batch is drawn while the previous update finishes; nothing
        is added to the buffer in between and the draws come in the same order, so the
        numbers are the same.
        """
        if not self._enter():
            return self.agent.learn_many(n_updates)
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
        finally:
            self.optimizer.sync_steps()  # the optimisers' step counts, as their own steps would have left them
        return None

    def _sample(self) -> tuple[torch.Tensor, ...]:
        """``memory.sample()`` (the same random draws), as views into one of the two batch
        tensors: the call after next overwrites them."""
        memory = self.agent.memory
        if memory.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        key = (memory.batch_size, memory.data.shape[1])
        pair = self._batches.get(key)
        if pair is None:
            pair = self._batches[key] = [(torch.empty(key[0], dtype=torch.long), torch.empty(key)) for _ in range(2)]
        self._turn ^= 1
        index, rows = pair[self._turn]
        torch.randint(memory.size, (memory.batch_size,), generator=memory.generator, out=index)
        torch.index_select(memory.data, 0, index, out=rows)
        return memory.split(rows)

    # ------------------------------------------------------------ one update, in one order
    def _helper_side(self, ws: dict[str, torch.Tensor], batch: tuple[torch.Tensor, ...], prefetch: bool,
                     box: dict[str, Any]) -> Iterator[None]:
        """The helper's passes: each ``yield`` is where it meets the caller (``_caller_side``)."""
        s, _, r, ns, disc = batch
        y = self._td_target(ws, r, ns, disc)
        yield  # 1: it takes the critic's Q(s, a) from the caller
        self._critic_gradients(ws, box["q"], y, s)
        self._clip_critic_gradient()
        yield  # 2: the critic's gradients are the caller's to step
        if prefetch:  # after this update's random draws, into the other batch tensor
            box["next"] = self._sample()

    def _caller_side(self, ws: dict[str, torch.Tensor], batch: tuple[torch.Tensor, ...],
                     box: dict[str, Any]) -> Iterator[None]:
        """The calling thread's passes: each ``yield`` is where it meets the helper (``_helper_side``)."""
        s, a = batch[0], batch[1]
        box["q"] = self._critic_forward(ws, s, a)
        yield  # 1: Q(s, a) is the helper's to differentiate
        self._actor_gradients(ws, s)
        yield  # 2: it waits for the critic's gradients
        self._apply_gradients()

    def _update(self, batch: tuple[torch.Tensor, ...], prefetch: bool) -> tuple[torch.Tensor, ...] | None:
        """One update on ``batch`` (with ``prefetch``, returning the next batch): the two sides' passes,
        interleaved at their meeting points on one thread, or run at once on two. Each pass sees the
        same inputs either way, so two threads give bitwise the numbers of one."""
        ws = self._workspace(batch[0].shape[0])
        box: dict[str, Any] = {}
        helper_side, caller_side = self._helper_side(ws, batch, prefetch, box), self._caller_side(ws, batch, box)
        if not self.two_threads:
            for side in (helper_side, caller_side, helper_side, caller_side):
                next(side)
            for side in (caller_side, helper_side):
                next(side, None)
            return box.get("next")
        helper = self._helper
        if helper is None or helper.pid != os.getpid():
            helper = self._helper = HelperThread()
            weakref.finalize(self, helper.stop)
        q_ready, grads_ready = helper.to_helper, helper.to_caller

        def job() -> None:
            try:
                try:
                    next(helper_side)
                finally:
                    q_ready.acquire()
                if "q" not in box:  # the critic's forward pass failed; its error is raised by the caller
                    return
                next(helper_side)
                box["critic_done"] = True
            finally:
                grads_ready.release()
            next(helper_side, None)

        helper.submit(job)
        try:
            try:
                next(caller_side)
            finally:
                q_ready.release()
            next(caller_side)
            grads_ready.acquire()
            if box.get("critic_done"):  # else the helper failed: wait() raises its error, no step taken
                next(caller_side, None)
        finally:
            helper.wait()
        return box.get("next")

    def _clip_critic_gradient(self) -> None:
        """Replaces ``clip_grad_norm_(critic, grad_clip)`` and Adam's L2 weight decay term of the critic."""
        if self._clip > 0:
            norm = torch.linalg.vector_norm(self.critic_grad)
            self.critic_grad.mul_(torch.clamp(self._clip / (norm + 1e-6), max=1.0))
        if self._decay[1] > 0:
            self.critic_grad.add_(self.flat[self.n_actor:], alpha=self._decay[1])

    def _apply_gradients(self) -> None:
        """Replaces both ``optimizer.step()`` calls (the actor's L2 term first) and both ``soft_update`` calls."""
        if self._decay[0] > 0:
            self.grad[:self.n_actor].add_(self.flat[:self.n_actor], alpha=self._decay[0])
        self.optimizer.step()
        self.target_flat.lerp_(self.flat, self._tau)

    # ------------------------------------------------------------ the agent's state
    def settle(self) -> None:
        """Let a helper job left behind by Ctrl-C end before the buffer or the weights are
        touched again (it may still be drawing a batch)."""
        if self._helper is not None and self._helper.pending:
            self._helper.finish()

    def store_optimizers(self) -> None:
        """Nothing to hand over: the optimisers' state is the flat Adam's (views); bound again if replaced."""
        if not self.optimizer.bound():
            self.optimizer.bind()

    def weights_loaded(self) -> None:
        pass  # the networks' parameters are views of the flat tensors: nothing to follow

    def extra_state(self) -> None:
        return None  # nothing beyond the agent's own objects

    def loaded(self, extra: dict[str, Any] | None) -> None:
        """After the agent took back a training state: its optimisers' new state tensors become the flat
        Adam's views again."""
        self.optimizer.bind()


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


__all__ = ["ActorForward", "FastCPU", "FlatAdam", "supports"]
