"""Admitting a hand-written back-end: proof, at attach time, that it computes the loaded code.

The fast CPU learner (``fast_cpu.FastCPU``) restates ``model.Actor``, ``model.Critic`` and
``Agent.learn`` by hand. ``admission`` admits it only for the exact code it was written from, with
each library function that code calls PyTorch's own object (``guard``). This second check is for
what neither sees: the same PyTorch functions with other semantics (another PyTorch version, a
build whose kernels differ), a module alias the networks use pointed elsewhere (model.py's ``F``
rebound to another module), or an object replaced by one of PyTorch's own with the same name.
``fast_cpu_differs`` runs the agent's own code and the fast learner side by side on copies, from
the same state and batch, and compares what each leaves behind. Where they differ, the readable
update runs (``ddpg.backends.choose``). It compares one update at one synthetic point, so alone it
would admit edits that act only on real data or late in a run: it is the last check, never the only
one. ``trajectory_differs`` is the long form, 200 updates from the committed checkpoints on real
transitions, which ``admission --write`` runs before it records the code as restated.

What is compared, after two updates of each (``learn_many``, each drawing its batch from a small
copy of the agent's buffer) from the agent's weights, its target networks nudged off its own so
that a target written with the wrong network shows:

* the actions for a batch of states (``Agent.policy``), which the fast learner computes too;
* the weights, the target weights and both Adam moments of actor and critic, the number of
  updates made and the buffer's random draws.

A first update, the readable one's alone, gives the Adam second moments a scale, so the compared
updates are a smooth function of their gradients. (From empty moments Adam's first
step is about ``lr * sign(g)``, which turns a rounding difference in a near-zero gradient into a
full step, and hides a scaled loss.)

Both run in float32 and sum in different orders, so they agree to rounding, not bitwise. The
tolerance is float32's bound on any summation order of the longest chain of multiply-adds in an
update (``rounding_bound``), the bound ``tests/test_fast_agent.py`` proves the fast learner's
gradients within; an edit of the update moves the compared values by far more.

The check leaves the agent as it found it: it works on deep copies (the replay buffer's rows are
not copied: the copies' small buffers are filled from the check's own generator), and the
global random streams (PyTorch's, NumPy's, Python's) and PyTorch's thread count are put back.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

from ddpg_agent import Agent

# Float32's unit roundoff: a stored float32 result is the exact one times (1 + d), |d| <= U.
U = 2.0 ** -24
PROBE_SEED = 0x5EED  # the check's own generator: the run's streams are not touched


def gamma_n(n: int) -> float:
    """gamma_n = nU / (1 - nU): the bound on the relative error, against the same sum of absolute
    values, of n float32 multiply-adds evaluated in any order (Higham, "Accuracy and Stability of
    Numerical Algorithms", section 3.1). No CPU, BLAS kernel or SIMD width exceeds it."""
    return n * U / (1 - n * U)


def chain_length(config: Any, state_size: int, action_size: int) -> int:
    """How many roundings can stack up in one gradient element of an update: the summed lengths of
    the dot products along its longest dependency chain, counted generously. The actor's first-layer
    gradient passes through the actor's three layers, the critic's second and third, back through
    all five and a sum over the batch: every hidden width twice. Layer norm adds, per critic layer,
    the sums over its units of its mean and variance and the two means of its backward pass."""
    widths = config.actor_fc1 + config.actor_fc2 + config.critic_fc1 + config.critic_fc2
    norm_sums = 4 * (config.critic_fc1 + config.critic_fc2) if config.critic_layer_norm else 0
    return config.batch_size + state_size + 2 * widths + 2 * action_size + 1 + norm_sums


def rounding_bound(agent: Agent) -> float:
    """The largest relative difference two float32 evaluations of the agent's update may show."""
    return gamma_n(chain_length(agent.config, agent.state_size, agent.action_size))


@contextmanager
def _streams_kept() -> Iterator[None]:
    """Put back the global random streams and PyTorch's thread count, whatever runs inside."""
    # NumPy's legacy global stream is the one an edit calling np.random.* draws from.
    numpy_state = np.random.get_state()  # noqa: NPY002
    torch_state, python_state = torch.get_rng_state(), random.getstate()
    threads = torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_rng_state(torch_state)
        np.random.set_state(numpy_state)  # noqa: NPY002
        random.setstate(python_state)
        torch.set_num_threads(threads)


def _probe_batch(agent: Agent, generator: torch.Generator, rows: int = 0) -> tuple[torch.Tensor, ...]:
    """A batch (of the agent's batch size, or ``rows``) from the check's own generator: states
    around the unit scale, actions in [-1, 1], small rewards, discounts bootstrapping and terminal."""
    b, s, a = rows or agent.config.batch_size, agent.state_size, agent.action_size
    states = torch.randn(b, s, generator=generator)
    actions = torch.rand(b, a, generator=generator) * 2 - 1
    rewards = torch.rand(b, 1, generator=generator) * 0.1
    next_states = torch.randn(b, s, generator=generator)
    discounts = (torch.rand(b, 1, generator=generator) < 0.9).float() * agent.config.gamma ** agent.config.n_step
    return states, actions, rewards, next_states, discounts


def _probe_memory(agent: Agent, generator: torch.Generator) -> Any:
    """The agent's replay buffer made small (four batches of rows from the check's generator, its
    own draws seeded anew), so the check samples batches as training does without copying the
    agent's rows: its ``sample`` and the fast learner's draw from the same state."""
    b = agent.config.batch_size
    small = copy.copy(agent.memory)
    small.data, small.capacity, small.pos, small.size = torch.zeros(4 * b, agent.memory.data.shape[1]), 4 * b, 0, 0
    small.generator = torch.Generator().manual_seed(PROBE_SEED)
    states, actions, rewards, next_states, discounts = _probe_batch(agent, generator, 4 * b)
    small.add(states.numpy(), actions.numpy(), rewards.numpy(), next_states.numpy(), discounts.numpy())
    return small


def _copy(agent: Agent, memory: Any = None) -> Agent:
    """A deep copy of the agent, with ``memory`` in place of its replay buffer when given."""
    twin = copy.deepcopy(agent, memo={id(agent.memory): memory} if memory is not None else {})
    twin.backend = None
    return twin


NETWORKS = ("actor_local", "critic_local", "actor_target", "critic_target")
OPTIMIZERS = {"actor_optimizer": "actor_local", "critic_optimizer": "critic_local"}


def _flat(tensors: Iterator[torch.Tensor] | list[torch.Tensor]) -> torch.Tensor:
    parts = [t.detach().reshape(-1).double() for t in tensors]
    return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.float64)


def _moments(agent: Agent, optimizer: str, key: str) -> torch.Tensor:
    opt, net = getattr(agent, optimizer), getattr(agent, OPTIMIZERS[optimizer])
    return _flat([opt.state[p][key] if key in opt.state.get(p, {}) else torch.zeros_like(p)
                  for p in net.parameters()])


def _state(agent: Agent) -> dict[str, torch.Tensor]:
    """What an update leaves behind, by name: each network's weights and each Adam moment."""
    state = {name: _flat(list(getattr(agent, name).parameters())) for name in NETWORKS}
    for optimizer in OPTIMIZERS:
        for key in ("exp_avg", "exp_avg_sq"):
            state[f"{optimizer}.{key}"] = _moments(agent, optimizer, key)
    return state


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    scale = float(torch.linalg.vector_norm(b))
    gap = float(torch.linalg.vector_norm(a - b))
    return gap / scale if scale > 0 else gap


def _give_moments_a_scale(agent: Agent) -> None:
    """Add each optimiser's mean second moment to every element's, so that Adam's next step is
    a smooth function of the gradient (see the module's docstring)."""
    for optimizer in OPTIMIZERS:
        for state in getattr(agent, optimizer).state.values():
            if "exp_avg_sq" in state:
                state["exp_avg_sq"].add_(state["exp_avg_sq"].mean())


def fast_cpu_differs(agent: Agent, make_backend: Callable[[Agent], Any] | None = None) -> str | None:
    """None when the fast CPU learner computes this agent's acting and update; else what differs,
    in a few words (for the line that says the readable learner runs instead)."""
    if make_backend is None:
        from ddpg.backends.fast_cpu import FastCPU

        def make_backend(twin: Agent) -> Any:
            return FastCPU(twin, threads=1)

    with _streams_kept(), torch.no_grad():
        generator = torch.Generator().manual_seed(PROBE_SEED)
        base = _copy(agent, _probe_memory(agent, generator))
        for local, target in (("actor_local", "actor_target"), ("critic_local", "critic_target")):
            for p_local, p_target in zip(getattr(base, local).parameters(), getattr(base, target).parameters(),
                                         strict=True):
                nudge = torch.randn(p_target.shape, generator=generator) * 1e-2 * (p_local.abs().mean() + 1e-3)
                p_target.copy_(p_local + nudge)
        first = _probe_batch(agent, generator)
        states = torch.randn(agent.config.batch_size, agent.state_size, generator=generator).numpy()

        readable, fast = _copy(base), _copy(base)
        bound = rounding_bound(agent)
        wanted_actions = readable.policy(states)
        try:
            make_backend(fast)
            actions = fast.policy(states)
        except (ValueError, RuntimeError, AttributeError) as exc:  # shapes the fast learner cannot take
            return f"its networks ({exc})"
        if _relative(torch.from_numpy(actions), torch.from_numpy(wanted_actions)) > bound:
            return "its acting (Actor.forward or Agent.policy)"

        with torch.enable_grad():
            readable.learn(first)  # the readable update alone: it gives the second moments a scale
        _give_moments_a_scale(readable)
        _sync(fast, readable)
        with torch.enable_grad():  # two updates through learn_many, each drawing its batch
            readable.learn_many(2)
        fast.backend.learn_many(2)  # what it runs in place of Agent.learn_many
        fast.backend.settle()
        fast.backend.store_optimizers()
        got, want = _state(fast), _state(readable)
        differ = [name for name in want if _relative(got[name], want[name]) > bound]
        if fast.n_updates != readable.n_updates or not torch.equal(fast.memory.generator.get_state(),
                                                                   readable.memory.generator.get_state()):
            differ.insert(0, "schedule")
    if differ:
        return "its update (" + ", ".join(_PARTS.get(name, name) for name in differ[:3]) + \
            (", ..." if len(differ) > 3 else "") + ")"
    return None


def trajectory_differs(updates: int = 200, decisions: int = 60, seed: int = 0) -> str | None:
    """None when the fast learner follows the readable update over ``updates`` updates from a trained
    agent's state (the committed checkpoints) on real transitions (``decisions`` steps of the 20-arm
    Reacher under the trained policy and its noise); else what parts, in a few words.

    Over hundreds of updates both learners drift from the exact (float64) trajectory by float32
    rounding, amplified by the dynamics. So the bound is measured, not assumed: the fast learner
    must stay within 4 times the readable float32 learner's distance from a float64 copy run on
    the same batches (and within float32's unit roundoff when that distance is smaller). An edit of
    the update moves it by orders of magnitude more. ``admission --write`` runs it before recording."""
    from ddpg.backends.fast_cpu import FastCPU
    from ddpg.playing import load_agent
    from ddpg_agent import ReplayBuffer
    from reacher import ReacherEnvironment

    with _streams_kept():
        base = load_agent(seed=seed)
        cfg = base.config
        base.memory = ReplayBuffer(base.state_size, base.action_size, decisions * 20, cfg.batch_size, seed)
        with ReacherEnvironment(num_agents=20, seed=seed, verbose=False) as env:
            states = env.reset(train_mode=True)["ReacherBrain"].vector_observations
            for _ in range(decisions):
                actions = base.act(states)
                info = env.step(actions)["ReacherBrain"]
                base.memory.add(states, actions, np.asarray(info.rewards), info.vector_observations, cfg.gamma)
                states = info.vector_observations
        exact, readable, fast = _copy(base), _copy(base), _copy(base)
        for net in NETWORKS:
            getattr(exact, net).double()
        exact.memory.data = exact.memory.data.double()
        backend = FastCPU(fast, threads=1)
        with torch.enable_grad():
            exact.learn_many(updates)
            readable.learn_many(updates)
        fast.learn_many(updates)
        if fast.backend is not backend:
            return "the fast learner stepped aside"
        got, ours, want = _state(fast), _state(readable), _state(exact)
    differ = [name for name in want if _relative(got[name], want[name]) > max(4 * _relative(ours[name], want[name]), U)]
    if differ:
        return ", ".join(_PARTS.get(name, name) for name in differ[:3]) + (", ..." if len(differ) > 3 else "")
    return None


_PARTS = {"schedule": "its updates or their batches (learn_many, the buffer's sample)",
          "actor_local": "the actor's weights", "critic_local": "the critic's weights",
          "actor_target": "the actor's target", "critic_target": "the critic's target",
          "actor_optimizer.exp_avg": "the actor's gradient", "critic_optimizer.exp_avg": "the critic's gradient",
          "actor_optimizer.exp_avg_sq": "the actor's squared gradient",
          "critic_optimizer.exp_avg_sq": "the critic's squared gradient"}


def _sync(fast: Agent, readable: Agent) -> None:
    """Give the fast copy the readable copy's weights, targets, Adam moments and step count."""
    for name in NETWORKS:
        for p_fast, p_readable in zip(getattr(fast, name).parameters(), getattr(readable, name).parameters(),
                                      strict=True):
            p_fast.copy_(p_readable)
    for optimizer in OPTIMIZERS:
        opt_fast, opt_readable = getattr(fast, optimizer), getattr(readable, optimizer)
        params_fast = list(getattr(fast, OPTIMIZERS[optimizer]).parameters())
        params_readable = list(getattr(readable, OPTIMIZERS[optimizer]).parameters())
        opt_fast.state.clear()
        for p_fast, p_readable in zip(params_fast, params_readable, strict=True):
            if p_readable in opt_readable.state:
                opt_fast.state[p_fast] = {k: v.clone() for k, v in opt_readable.state[p_readable].items()}
    fast.n_updates = readable.n_updates
    fast.backend.loaded(None)


__all__ = ["chain_length", "fast_cpu_differs", "gamma_n", "rounding_bound", "trajectory_differs"]
