"""DDPG agent for the multi-agent (20-arm) Reacher, tuned for speed on a small CPU.

One actor-critic pair is shared by all arms; every arm's transition goes into one replay
buffer. The learner is the bottleneck on a CPU, so the update is written to keep PyTorch's
per-operation overhead low:

* each network's parameters live in one contiguous tensor (the layers hold views into
  it), so Adam, gradient clipping, zeroing and the soft target update are one or two
  tensor operations instead of one per layer;
* the replay buffer is a single preallocated float32 tensor with one row per transition,
  so drawing a batch is one ``randint`` plus one ``index_select`` into a preallocated
  batch tensor;
* the actor's backward pass is restricted to the actor's parameters, so no critic weight
  gradients are computed for the policy update;
* with ``learner_threads=2`` (default) one update runs on two threads: a helper thread
  computes the TD target and the critic's gradients while the calling thread runs the
  critic forward pass and the actor's update. Matrix products release the GIL, so both
  cores work at once, and every op sees the same inputs as in the one-thread order: the
  results are bitwise identical to ``learner_threads=1`` (tested).

Episodes that end by the time limit are *not* terminal: by default (``bootstrap_on_done``)
a ``done`` is stored with discount ``gamma`` (i.e. ``done = 0``) so the target bootstraps
through the cut. Reacher never has a true terminal state; its only ``done`` is the
1000-decision time limit.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from model import Actor, Critic


@dataclass
class DDPGConfig:
    """Every hyperparameter of the agent; the defaults are the tuned values.

    Learning happens every ``learn_every`` calls of ``Agent.step`` (environment decisions)
    with ``learn_updates`` gradient updates each time, once the buffer holds ``warmup``
    transitions. With ``good_score`` > 0, once the agent's last finished episode scored at
    least that much (mean over agents, counted by the agent from the rewards it is given)
    it makes ``learn_updates_good`` updates instead: a good policy needs fewer updates to
    stay good, and the saved time is most of a run's second half.

    Noise: OU (or Gaussian) with ``noise_sigma``; its output is multiplied by a scale that
    starts at 1 and is multiplied by ``noise_decay`` at every episode start, never going
    below ``noise_min``. Off-by-default switches (ablated in
    benchmarks/results/tuning_log.md): ``n_step``, ``reward_scale``, ``obs_norm``,
    ``target_noise`` (TD3 smoothing), ``policy_delay``, ``critic_action_layer`` 1.

    Speed only, the numbers stay the same: ``learner_threads`` (2: each update split over
    two threads when the process may use two CPUs; 1: all on the calling thread, faster
    when another job keeps the second core busy; the 'autograd' learner always uses one)
    and ``torch_threads`` (PyTorch's own threads per op).
    """

    buffer_size: int = 1_000_000
    batch_size: int = 256
    gamma: float = 0.99
    tau: float = 1e-2
    lr_actor: float = 1e-3
    lr_critic: float = 1e-3
    weight_decay: float = 0.0
    actor_fc1: int = 128
    actor_fc2: int = 128
    critic_fc1: int = 128
    critic_fc2: int = 128
    critic_action_layer: int = 2
    learn_every: int = 20
    learn_updates: int = 20
    warmup: int = 2560
    grad_clip: float = 1.0
    noise: str = "ou"
    noise_sigma: float = 0.2
    noise_theta: float = 0.15
    noise_decay: float = 1.0
    noise_min: float = 0.05
    n_step: int = 1
    bootstrap_on_done: bool = True
    reward_scale: float = 1.0
    obs_norm: bool = False
    target_noise: float = 0.0
    target_noise_clip: float = 0.5
    policy_delay: int = 1
    good_score: float = 33.0
    learn_updates_good: int = 10
    torch_threads: int = 1
    learner: str = "manual"
    learner_threads: int = 2

    def __post_init__(self) -> None:
        problems = []
        for name in ("buffer_size", "batch_size", "learn_every", "n_step", "policy_delay", "actor_fc1",
                     "actor_fc2", "critic_fc1", "critic_fc2", "torch_threads"):
            if int(getattr(self, name)) < 1:
                problems.append(f"{name} must be >= 1")
        if self.learn_updates < 0 or self.warmup < 0 or self.learn_updates_good < 0:
            problems.append("learn_updates, learn_updates_good and warmup must be >= 0")
        if not 0.0 <= self.gamma <= 1.0:
            problems.append("gamma must be in [0, 1]")
        if not 0.0 < self.tau <= 1.0:
            problems.append("tau must be in (0, 1]")
        if self.noise not in ("ou", "gaussian", "none"):
            problems.append("noise must be 'ou', 'gaussian' or 'none'")
        if self.critic_action_layer not in (1, 2):
            problems.append("critic_action_layer must be 1 or 2")
        if self.learner not in ("manual", "autograd"):
            problems.append("learner must be 'manual' or 'autograd'")
        if self.learner_threads not in (1, 2):
            problems.append("learner_threads must be 1 or 2")
        if self.learner == "manual" and self.critic_action_layer != 2:
            problems.append("learner 'manual' needs critic_action_layer 2")
        if problems:
            raise ValueError("invalid DDPGConfig: " + "; ".join(problems))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-serialisable) of all hyperparameters."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> DDPGConfig:
        """Build a config from a dict; unknown keys raise a ValueError naming them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(
                f"unknown config key(s) {unknown}; valid keys: {sorted(known)}"
            )
        return cls(**values)


def _flatten_parameters(modules: list[nn.Module], with_grad: bool
                        ) -> tuple[torch.Tensor, torch.Tensor | None, list[nn.Parameter]]:
    """Move the parameters of ``modules`` into one contiguous tensor (layers keep views).

    Returns (flat, flat_grad, leaves): ``leaves[i]`` is a leaf Parameter viewing module i's
    slice of ``flat`` (what an optimizer steps). With ``with_grad`` each parameter's
    ``.grad`` is a view of ``flat_grad``; autograd accumulates in place into an existing
    ``.grad``, so a backward pass fills the flat gradient directly.
    """
    params = [list(m.parameters()) for m in modules]
    flat = torch.cat([p.detach().reshape(-1) for group in params for p in group])
    grad = torch.zeros_like(flat) if with_grad else None
    leaves = []
    offset = 0
    for group in params:
        start = offset
        for p in group:
            n = p.numel()
            p.data = flat[offset:offset + n].view_as(p)
            if grad is not None:
                p.grad = grad[offset:offset + n].view_as(p)
            offset += n
        leaf = nn.Parameter(flat[start:offset], requires_grad=with_grad)
        if grad is not None:
            leaf.grad = grad[start:offset]
        leaves.append(leaf)
    return flat, grad, leaves


# ReLU backward as one fused kernel writing into a preallocated buffer (a bool mask and
# a multiply cost ~7x more here).
_RELU_GRAD = torch.ops.aten.threshold_backward.grad_input
# relu(bias + x @ w) in one call (ATen runs addmm then relu_ in place: the same numbers).
_ADDMM_RELU = torch._addmm_activation


class FlatAdam:
    """Adam on one flat parameter tensor with a per-element learning rate.

    The actor and critic share one flat tensor, so a single pass of 7 tensor operations
    updates both (torch.optim.Adam spends ~70 us of Python per step on this CPU).
    Same update rule as torch.optim.Adam (bias-corrected, L2 weight decay off).
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
        """Apply one Adam step using the current contents of ``grad``."""
        self.t += 1
        bc1 = 1.0 - self.beta1 ** self.t
        sqrt_bc2 = (1.0 - self.beta2 ** self.t) ** 0.5
        g, tmp = self.grad, self._tmp
        self.exp_avg.lerp_(g, 1.0 - self.beta1)
        self.exp_avg_sq.mul_(self.beta2).addcmul_(g, g, value=1.0 - self.beta2)
        # p -= lr * (m / bc1) / (sqrt(v / bc2) + eps), rearranged to use one buffer.
        torch.sqrt(self.exp_avg_sq, out=tmp)
        tmp.add_(self.eps * sqrt_bc2)
        torch.div(self.exp_avg, tmp, out=tmp)
        tmp.mul_(self.lr)
        self.params.sub_(tmp, alpha=sqrt_bc2 / bc1)


def _available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class _HelperThread:
    """A second thread that runs one job per learner update (handed over with locks).

    Inside a job the caller and the helper meet at two points: ``to_helper`` (released by
    the caller, awaited by the job) and ``to_caller`` (released by the job, awaited by
    the caller); both are held between jobs. An exception in the job is re-raised by
    ``wait`` in the calling thread.

    Ctrl-C (KeyboardInterrupt) can stop the caller anywhere, even between a hand-over and
    the ``try`` meant to follow it, leaving a job running or waiting for the caller.
    ``finish`` settles such a job; ``submit`` calls it first, so a later update never
    overlaps an interrupted one.
    """

    def __init__(self, torch_threads: int) -> None:
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
        self._thread = threading.Thread(target=self._run, args=(torch_threads,),
                                        name="ddpg-learner-helper", daemon=True)
        self._thread.start()

    def _run(self, torch_threads: int) -> None:
        torch.set_num_threads(torch_threads)  # per-thread under OpenMP
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


class ReplayBuffer:
    """Fixed-size ring buffer of transitions in one preallocated float32 tensor.

    Each row is ``[state, action, reward, next_state, discount]`` where ``discount`` is the
    factor applied to the bootstrap value (``gamma**k`` for a k-step return, 0 at a true
    terminal). All agents' transitions are added with one vectorised call; sampling is
    uniform with replacement.
    """

    def __init__(self, state_size: int, action_size: int, buffer_size: int,
                 batch_size: int, seed: int) -> None:
        self.state_size = state_size
        self.action_size = action_size
        self.capacity = int(buffer_size)
        self.batch_size = int(batch_size)
        s, a = state_size, action_size
        self._cols = {
            "states": slice(0, s),
            "actions": slice(s, s + a),
            "rewards": slice(s + a, s + a + 1),
            "next_states": slice(s + a + 1, 2 * s + a + 1),
            "discounts": slice(2 * s + a + 1, 2 * s + a + 2),
        }
        self.width = 2 * s + a + 2
        self.data = torch.zeros(self.capacity, self.width, dtype=torch.float32)
        self._np = self.data.numpy()  # shares memory: numpy writes land in the tensor
        self.pos = 0
        self.size = 0
        self.generator = torch.Generator().manual_seed(int(seed))
        # Two batch tensors used in turn, so a batch can be drawn while the previous one
        # is still in use.
        self._idx = [torch.empty(self.batch_size, dtype=torch.long) for _ in range(2)]
        self._batch = [torch.empty(self.batch_size, self.width, dtype=torch.float32)
                       for _ in range(2)]
        self._turn = 0

    def __len__(self) -> int:
        return self.size

    def add(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
            next_states: np.ndarray, discounts: np.ndarray | float) -> None:
        """Append n transitions (one per agent) at once, wrapping around when full."""
        states = np.asarray(states)
        n = states.shape[0]
        if n > self.capacity:
            raise ValueError(f"cannot add {n} transitions to a buffer of {self.capacity}")
        end = self.pos + n
        rows = np.arange(self.pos, end) % self.capacity if end > self.capacity else slice(self.pos, end)
        block = self._np
        c = self._cols
        block[rows, c["states"]] = states
        block[rows, c["actions"]] = actions
        block[rows, c["rewards"]] = np.asarray(rewards, dtype=np.float32).reshape(n, 1)
        block[rows, c["next_states"]] = next_states
        block[rows, c["discounts"]] = np.broadcast_to(
            np.asarray(discounts, dtype=np.float32).reshape(-1, 1), (n, 1))
        self.pos = end % self.capacity
        self.size = min(self.size + n, self.capacity)

    def sample(self) -> tuple[torch.Tensor, ...]:
        """Draw ``batch_size`` rows uniformly with replacement.

        Returns views (states, actions, rewards, next_states, discounts) into one of two
        reused batch tensors: they are overwritten by the call after next.
        """
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        self._turn ^= 1
        idx, b = self._idx[self._turn], self._batch[self._turn]
        torch.randint(self.size, (self.batch_size,), generator=self.generator, out=idx)
        torch.index_select(self.data, 0, idx, out=b)
        c = self._cols
        return (b[:, c["states"]], b[:, c["actions"]], b[:, c["rewards"]],
                b[:, c["next_states"]], b[:, c["discounts"]])


class OUNoise:
    """Ornstein-Uhlenbeck process per agent, with zero-mean Gaussian increments.

    ``sample(n)`` returns an (n, action_size) array; the process state is re-created if the
    number of agents changes. ``scale`` multiplies the output and decays by ``decay`` at
    every ``reset()`` (one per episode) down to ``scale_min``. ``kind='gaussian'`` gives
    independent N(0, sigma^2) noise with the same schedule.
    """

    def __init__(self, action_size: int, seed: int, mu: float = 0.0, theta: float = 0.15,
                 sigma: float = 0.2, decay: float = 1.0, scale_min: float = 0.0,
                 kind: str = "ou") -> None:
        self.action_size = action_size
        self.mu = mu
        self.theta = theta
        self.sigma = sigma
        self.decay = decay
        self.scale_min = scale_min
        self.kind = kind
        self.scale = 1.0
        self.rng = np.random.default_rng(seed)
        self.state = np.full((1, action_size), mu)

    def reset(self) -> None:
        """Restart the process at its mean and decay the noise scale one step."""
        self.state[...] = self.mu
        self.scale = max(self.scale_min, self.scale * self.decay)

    def sample(self, n: int = 1) -> np.ndarray:
        """Return noise for n agents, shape (n, action_size)."""
        if self.state.shape[0] != n:
            self.state = np.full((n, self.action_size), self.mu)
        eps = self.rng.standard_normal(self.state.shape)
        if self.kind == "gaussian":
            return self.scale * self.sigma * eps
        self.state += self.theta * (self.mu - self.state) + self.sigma * eps
        return self.scale * self.state


class _ParamViews:
    """Plain (autograd-free) views of an actor+critic flat tensor, by layer name.

    Names: actor w1 b1 w2 b2 w3 b3; critic v1 c1 v2 c2 v3 c3 (v2s / v2a are fc2's state
    and action columns).
    """

    def __init__(self, flat: torch.Tensor, modules: list[nn.Module]) -> None:
        shapes = [p.shape for m in modules for p in m.parameters()]
        names = ["w1", "b1", "w2", "b2", "w3", "b3", "v1", "c1", "v2", "c2", "v3", "c3"]
        if len(shapes) != len(names):
            raise ValueError("expected 3-layer actor and critic")
        offset = 0
        for name, shape in zip(names, shapes, strict=True):
            n = int(np.prod(shape))
            setattr(self, name, flat[offset:offset + n].view(shape))
            offset += n
        hidden = self.v1.shape[0]
        self.v2s = self.v2[:, :hidden]
        self.v2a = self.v2[:, hidden:]
        # Transposed views built once (saves a dispatcher call per matmul).
        for name in ("w1", "w2", "w3", "v1", "v2s", "v2a", "v3"):
            setattr(self, name + "T", getattr(self, name).t())


class Agent:
    """DDPG agent shared by all arms (course interface: act / step / learn / reset).

    ``Agent(state_size, action_size, random_seed, **overrides)``: overrides are
    ``DDPGConfig`` fields (or ``config=DDPGConfig(...)``).
    """

    def __init__(self, state_size: int, action_size: int, random_seed: int,
                 config: DDPGConfig | None = None, **overrides: Any) -> None:
        base = (config or DDPGConfig()).to_dict()
        base.update(overrides)
        self.config = DDPGConfig.from_dict(base)
        cfg = self.config
        torch.set_num_threads(cfg.torch_threads)
        self.state_size = state_size
        self.action_size = action_size
        self.seed = int(random_seed)

        self.actor_local = Actor(state_size, action_size, self.seed, cfg.actor_fc1, cfg.actor_fc2)
        self.actor_target = Actor(state_size, action_size, self.seed, cfg.actor_fc1, cfg.actor_fc2)
        self.critic_local = Critic(state_size, action_size, self.seed, cfg.critic_fc1,
                                   cfg.critic_fc2, cfg.critic_action_layer)
        self.critic_target = Critic(state_size, action_size, self.seed, cfg.critic_fc1,
                                    cfg.critic_fc2, cfg.critic_action_layer)
        for target in (self.actor_target, self.critic_target):
            target.requires_grad_(False)
        # Flat storage: [actor | critic] for the local nets and the same layout for the
        # targets, so one lerp_ soft-updates both targets.
        self._local_flat, grad, (actor_leaf, _) = _flatten_parameters(
            [self.actor_local, self.critic_local], with_grad=True)
        self._target_flat, _, _ = _flatten_parameters(
            [self.actor_target, self.critic_target], with_grad=False)
        assert grad is not None
        self._grad = grad
        self._critic_grad = grad[actor_leaf.numel():]
        self._actor_grad = grad[:actor_leaf.numel()]
        self._update_actor = True
        self.hard_update()

        n_actor = actor_leaf.numel()
        self._n_actor = n_actor
        lr = torch.full_like(self._local_flat, cfg.lr_critic)
        lr[:n_actor] = cfg.lr_actor
        self.optimizer = FlatAdam(self._local_flat, self._grad, lr)
        if cfg.policy_delay > 1:  # separate step counts: the actor steps less often
            self.optimizer_critic = FlatAdam(self._local_flat[n_actor:], self._grad[n_actor:],
                                             lr[n_actor:])
            self.optimizer_actor = FlatAdam(self._local_flat[:n_actor], self._grad[:n_actor],
                                            lr[:n_actor])
        self._views = _ParamViews(self._local_flat, [self.actor_local, self.critic_local])
        self._target_views = _ParamViews(self._target_flat, [self.actor_target,
                                                             self.critic_target])
        self._grad_views = _ParamViews(self._grad, [self.actor_local, self.critic_local])
        self._work: dict[int, dict[str, torch.Tensor]] = {}
        self._helper: _HelperThread | None = None  # started by the first two-thread update
        # Speed only (the numbers are the same): a helper thread needs a second CPU.
        self._two_threads = (cfg.learner == "manual" and cfg.learner_threads == 2
                             and _available_cpus() >= 2)

        self.noise = OUNoise(action_size, self.seed, theta=cfg.noise_theta, sigma=cfg.noise_sigma,
                             decay=cfg.noise_decay, scale_min=cfg.noise_min,
                             kind="gaussian" if cfg.noise == "gaussian" else "ou")
        self.memory = ReplayBuffer(state_size, action_size, cfg.buffer_size, cfg.batch_size,
                                   self.seed)
        self._window: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._last_next_states = np.zeros((0, state_size))
        self.t_step = 0
        self.n_updates = 0
        self._norm_set = False
        self._episode_return: np.ndarray | None = None
        self.last_episode_score = 0.0  # mean over agents of the last finished episode
        self.last_critic_loss: torch.Tensor | None = None
        self.last_actor_loss: torch.Tensor | None = None

    # ------------------------------------------------------------------ acting
    def act(self, states: np.ndarray, add_noise: bool = True) -> np.ndarray:
        """Return actions (n, action_size) in [-1, 1] for a batch of states (n, state_size)."""
        states = np.asarray(states, dtype=np.float32)
        single = states.ndim == 1
        s = torch.from_numpy(states.reshape(-1, self.state_size))
        with torch.no_grad():
            actions = self.actor_local(s).numpy().astype(np.float64)
        if add_noise and self.config.noise != "none":
            actions += self.noise.sample(actions.shape[0])
        np.clip(actions, -1.0, 1.0, out=actions)
        return actions[0] if single else actions

    def reset(self) -> None:
        """Start a new episode: flush any pending n-step window, reset/decay the noise and
        close the bookkeeping of the episode's return (mean over agents)."""
        self._flush_window()
        self.noise.reset()
        if self._episode_return is not None:
            self.last_episode_score = float(self._episode_return.mean())
            self._episode_return = None

    # ---------------------------------------------------------------- learning
    def step(self, states: np.ndarray, actions: np.ndarray, rewards: Any,
             next_states: np.ndarray, dones: Any) -> None:
        """Store every agent's transition, then learn if the schedule says so.

        With ``bootstrap_on_done`` (default) a done is treated as a time-limit cut: the
        transition keeps discount gamma (done = 0). With ``n_step`` > 1, transitions are
        stored as n-step returns; windows cut by an episode end are stored with the
        shorter horizon and the matching discount.
        """
        self._settle_helper()
        cfg = self.config
        rewards = np.asarray(rewards, dtype=np.float64)
        if self._episode_return is None:
            self._episode_return = np.zeros_like(rewards)
        self._episode_return += rewards
        rewards = rewards * cfg.reward_scale
        dones = np.asarray(dones, dtype=bool)
        terminal = np.zeros_like(dones) if cfg.bootstrap_on_done else dones
        if cfg.n_step == 1:
            disc = cfg.gamma * (~terminal)
            self.memory.add(states, actions, rewards, next_states, disc)
        else:
            self._window.append((np.asarray(states), np.asarray(actions), rewards))
            self._last_next_states = np.asarray(next_states)
            if len(self._window) == cfg.n_step:
                self._add_window_head(next_states, terminal)
            if dones.any():
                self._flush_window(next_states, terminal)
        self.t_step += 1
        if cfg.obs_norm and not self._norm_set and len(self.memory) >= max(cfg.warmup, 1):
            self.set_obs_normalisation()
        n_updates = cfg.learn_updates
        if cfg.good_score > 0 and self.last_episode_score >= cfg.good_score:
            n_updates = cfg.learn_updates_good
        if (n_updates > 0 and self.t_step % cfg.learn_every == 0
                and len(self.memory) >= max(cfg.warmup, 1)):
            self.learn_many(n_updates)

    def set_obs_normalisation(self, mean: np.ndarray | None = None,
                              std: np.ndarray | None = None) -> None:
        """Fix every network's input normalisation to (state - mean) / std.

        By default mean and std come from the states in the replay buffer (called once,
        when the buffer first holds ``warmup`` transitions). Unnormalised Reacher
        observations range from +-1 (quaternions) to ~50 (velocities); scaling them keeps
        one Adam step from moving the first layer's pre-activations by very different
        amounts per feature.
        """
        if mean is None or std is None:
            states = self.memory.data[: len(self.memory), : self.state_size].double()
            mean = states.mean(0).numpy()
            std = states.std(0).numpy()
        scale = 1.0 / np.maximum(np.asarray(std, dtype=np.float64), 1e-2)
        bias = -np.asarray(mean, dtype=np.float64) * scale
        with torch.no_grad():
            for net in (self.actor_local, self.actor_target, self.critic_local,
                        self.critic_target):
                net.obs_scale.copy_(torch.from_numpy(scale))
                net.obs_bias.copy_(torch.from_numpy(bias))
        self._norm_set = bool(np.any(scale != 1.0) or np.any(bias != 0.0))

    def _add_window_head(self, next_states: np.ndarray, terminal: np.ndarray) -> None:
        """Store the oldest window entry as a k-step transition ending at next_states."""
        g = self.config.gamma
        s0, a0, _ = self._window[0]
        ret = np.zeros_like(self._window[0][2])
        for k, (_, _, r) in enumerate(self._window):
            ret += (g ** k) * r
        disc = (g ** len(self._window)) * (~terminal)
        self.memory.add(s0, a0, ret, next_states, disc)
        self._window.pop(0)

    def _flush_window(self, next_states: np.ndarray | None = None,
                      terminal: np.ndarray | None = None) -> None:
        """Store every pending window entry with its (shorter) horizon, then clear it."""
        if not self._window:
            return
        if next_states is None:
            # reset() without a done (episode cut short by the caller): bootstrap from
            # the last next state seen, which is where the cut happened.
            next_states = self._last_next_states
        if terminal is None:
            terminal = np.zeros(len(next_states), dtype=bool)
        while self._window:
            self._add_window_head(next_states, terminal)

    def learn(self, experiences: tuple[torch.Tensor, ...] | None = None,
              gamma: float | None = None) -> None:
        """One DDPG update of critic, actor and both targets.

        ``experiences`` is (states, actions, rewards, next_states, discounts) as float32
        tensors (rewards and discounts of shape (B, 1)); by default a batch is sampled from
        the buffer. ``gamma`` is accepted for course compatibility and ignored: the
        per-transition discount already holds it. The actor's loss uses the critic as it
        was before this update (both gradients come from one pass).
        """
        del gamma
        self._settle_helper()
        self._update(experiences if experiences is not None else self.memory.sample(),
                     prefetch=False)

    def learn_many(self, n_updates: int) -> None:
        """``n_updates`` updates on fresh batches, as ``learn()`` in a loop but faster.

        This is what ``step`` runs on its schedule. The two-thread learner draws each next
        batch while this thread applies the previous update: nothing is added to the
        buffer in between, and the random draws come in the same order, so the numbers
        are the same.
        """
        if n_updates < 0:
            raise ValueError(f"n_updates must be >= 0, got {n_updates}")
        self._settle_helper()
        batch = self.memory.sample() if n_updates > 0 else None
        for i in range(n_updates):
            assert batch is not None  # drawn before the loop or by the previous update
            batch = self._update(batch, prefetch=i + 1 < n_updates)

    def _update(self, batch: tuple[torch.Tensor, ...], prefetch: bool
                ) -> tuple[torch.Tensor, ...] | None:
        """One update on ``batch``; with ``prefetch`` return the next batch, drawn after
        this update's random draws (the buffer must not change in between)."""
        cfg = self.config
        self._update_actor = self.n_updates % cfg.policy_delay == 0
        if self._two_threads:
            next_batch = self._update_two_threads(batch, prefetch)
        else:
            if cfg.learner == "manual":
                self._gradients_manual(*batch)
            else:
                self._gradients_autograd(*batch)
            self._clip_critic_gradient()
            self._apply_gradients()
            next_batch = self.memory.sample() if prefetch else None
        self.n_updates += 1
        return next_batch

    def _settle_helper(self) -> None:
        """Let a helper job left behind by Ctrl-C end before the buffer or the weights are
        touched again (it may still be drawing a batch)."""
        if self._helper is not None and self._helper.pending:
            self._helper.finish()

    def _clip_critic_gradient(self) -> None:
        """Scale the critic's gradient to norm <= grad_clip; add L2 weight decay."""
        cfg = self.config
        if cfg.grad_clip > 0:
            norm = torch.linalg.vector_norm(self._critic_grad)
            self._critic_grad.mul_(torch.clamp(cfg.grad_clip / (norm + 1e-6), max=1.0))
        if cfg.weight_decay > 0:
            self._critic_grad.add_(self._local_flat[self._n_actor:], alpha=cfg.weight_decay)

    def _apply_gradients(self) -> None:
        """Take the Adam steps and soft-update the targets."""
        cfg = self.config
        if cfg.policy_delay == 1:
            self.optimizer.step()
            self._target_flat.lerp_(self._local_flat, cfg.tau)
        else:
            self.optimizer_critic.step()
            if self._update_actor:
                self.optimizer_actor.step()
                # TD3 style: targets follow only when the actor has moved.
                self._target_flat.lerp_(self._local_flat, cfg.tau)

    def _workspace(self, b: int) -> dict[str, torch.Tensor]:
        """Preallocated activations for batch size b (allocated once per size)."""
        ws = self._work.get(b)
        if ws is None:
            cfg = self.config
            h1, h2, c1, c2 = cfg.actor_fc1, cfg.actor_fc2, cfg.critic_fc1, cfg.critic_fc2
            e = torch.empty
            ws = {"t_h1": e(b, h1), "t_h2": e(b, h2), "t_mu": e(b, self.action_size),
                  "t_x": e(b, c1), "t_z": e(b, c2), "q_next": e(b, 1), "y": e(b, 1),
                  "xa": e(b, c1 + self.action_size), "z": e(b, c2), "h": e(b, c2),
                  "q": e(b, 1), "dq": e(b, 1), "dh": e(b, c2), "dx": e(b, c1),
                  "h1": e(b, h1), "h2": e(b, h2), "mu": e(b, self.action_size),
                  "hp": e(b, c2), "dhp": e(b, c2), "dmu": e(b, self.action_size),
                  "dh2": e(b, h2), "dh1": e(b, h1), "v3s": e(1, c2),
                  "s_n": e(b, self.state_size), "ns_n": e(b, self.state_size)}
            self._work[b] = ws
        return ws

    def _gradients_manual(self, s: torch.Tensor, a: torch.Tensor, r: torch.Tensor,
                          ns: torch.Tensor, disc: torch.Tensor) -> None:
        """Fill the flat gradient with hand-written backprop (no autograd graph).

        Same maths as ``_gradients_autograd`` (checked in the tests) but ~70 direct tensor
        calls into preallocated buffers: on a small CPU the autograd and nn.Module
        overhead was as large as the arithmetic itself.

        This is the one-thread order; ``_update_two_threads`` runs the same four parts
        on two threads.
        """
        ws = self._workspace(s.shape[0])
        s = self._normalised_states(ws, s)
        y = self._td_target(ws, r, ns, disc)
        q = self._critic_forward(ws, s, a)
        self._critic_gradients(ws, q, y, s)
        self._actor_gradients(ws, s)

    def _normalised_states(self, ws: dict[str, torch.Tensor], s: torch.Tensor) -> torch.Tensor:
        """States through the fixed input normalisation shared by all four networks."""
        if not self._norm_set:
            return s
        return torch.addcmul(self.actor_local.obs_bias, s, self.actor_local.obs_scale,
                             out=ws["s_n"])

    def _update_two_threads(self, batch: tuple[torch.Tensor, ...], prefetch: bool
                            ) -> tuple[torch.Tensor, ...] | None:
        """``_update`` on two threads, with bitwise the same results as on one.

        helper thread: TD target; (once q is ready) the critic's gradients and their
        clipping; with ``prefetch``, the next batch.
        this thread: critic forward pass; the actor's forward and backward passes; (once
        the critic's gradients are ready) the Adam steps and target updates.

        Each op gets exactly the inputs it gets in the one-thread order and runs
        single-threaded, so the results are identical; the matrix products (three
        quarters of an update) release the GIL and run on both cores at once.
        """
        s, a, r, ns, disc = batch
        ws = self._workspace(s.shape[0])
        s = self._normalised_states(ws, s)
        helper = self._helper
        if helper is None or helper.pid != os.getpid():
            helper = self._helper = _HelperThread(self.config.torch_threads)
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
                if not q_box:  # the critic forward pass failed; its error is raised below
                    return
                self._critic_gradients(ws, q_box[0], y, s)
                self._clip_critic_gradient()
                critic_done.append(True)
            finally:
                grads_ready.release()
            if prefetch:  # after this update's random draws, into the other batch tensor
                next_box.append(self.memory.sample())

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

    def _td_target(self, ws: dict[str, torch.Tensor], r: torch.Tensor, ns: torch.Tensor,
                   disc: torch.Tensor) -> torch.Tensor:
        """y = r + discount * Q'(s', mu'(s')) through the target networks."""
        t, addmm = self._target_views, torch.addmm
        if self._norm_set:
            ns = torch.addcmul(self.actor_local.obs_bias, ns, self.actor_local.obs_scale,
                               out=ws["ns_n"])
        _ADDMM_RELU(t.b1, ns, t.w1T, out=ws["t_h1"])
        _ADDMM_RELU(t.b2, ws["t_h1"], t.w2T, out=ws["t_h2"])
        addmm(t.b3, ws["t_h2"], t.w3T, out=ws["t_mu"]).tanh_()
        if self.config.target_noise > 0:
            self._smooth_target_actions(ws["t_mu"])
        _ADDMM_RELU(t.c1, ns, t.v1T, out=ws["t_x"])
        addmm(t.c2, ws["t_x"], t.v2sT, out=ws["t_z"])
        _ADDMM_RELU(ws["t_z"], ws["t_mu"], t.v2aT, out=ws["t_z"])
        addmm(t.c3, ws["t_z"], t.v3T, out=ws["q_next"])
        return torch.addcmul(r, disc, ws["q_next"], out=ws["y"])

    def _critic_forward(self, ws: dict[str, torch.Tensor], s: torch.Tensor,
                        a: torch.Tensor) -> torch.Tensor:
        """Q(s, a), keeping xa = [relu(fcs1(s)) | a] (fc2's input), z and h in ``ws``."""
        p, addmm = self._views, torch.addmm
        n_hidden = p.v1.shape[0]
        xa = ws["xa"]
        x = xa[:, :n_hidden]
        _ADDMM_RELU(p.c1, s, p.v1T, out=x)
        xa[:, n_hidden:].copy_(a)
        z = addmm(p.c2, x, p.v2sT, out=ws["z"])
        h = _ADDMM_RELU(z, a, p.v2aT, out=ws["h"])
        return addmm(p.c3, h, p.v3T, out=ws["q"])

    def _critic_gradients(self, ws: dict[str, torch.Tensor], q: torch.Tensor, y: torch.Tensor,
                          s: torch.Tensor) -> None:
        """Critic weight gradients of mean((q - y)^2), by hand through its 3 layers.

        Writes only critic gradients and its own buffers, so ``ws["z"]`` still holds the
        critic trunk the actor's update goes through.
        """
        p, g, mm = self._views, self._grad_views, torch.mm
        relu_grad = _RELU_GRAD  # relu_grad(grad, out, 0.0, grad_input=dst): dst = grad * (out > 0)
        b = q.shape[0]
        dq = torch.sub(q, y, out=ws["dq"])
        self.last_critic_loss = torch.dot(dq.view(-1), dq.view(-1)) / b
        dq.mul_(2.0 / b)
        h, xa = ws["h"], ws["xa"]
        x = xa[:, :p.v1.shape[0]]
        mm(dq.t(), h, out=g.v3)
        torch.sum(dq, 0, out=g.c3)
        dh = relu_grad(mm(dq, p.v3, out=ws["dh"]), h, 0.0, grad_input=ws["dh"])
        mm(dh.t(), xa, out=g.v2)
        torch.sum(dh, 0, out=g.c2)
        dx = relu_grad(mm(dh, p.v2s, out=ws["dx"]), x, 0.0, grad_input=ws["dx"])
        mm(dx.t(), s, out=g.v1)
        torch.sum(dx, 0, out=g.c1)

    def _actor_gradients(self, ws: dict[str, torch.Tensor], s: torch.Tensor) -> None:
        """Actor gradients of -mean(Q(s, mu(s))) with the critic held fixed.

        Q(s, mu(s)) reuses the critic trunk z = fc2_s(relu(fcs1(s))) of the critic
        forward pass; with a delayed policy update the actor gradient is zeroed instead.
        """
        self.last_actor_loss = None
        if not self._update_actor:
            self._actor_grad.zero_()
            return
        p, g, mm, addmm = self._views, self._grad_views, torch.mm, torch.addmm
        relu_grad = _RELU_GRAD
        b = s.shape[0]
        h1 = _ADDMM_RELU(p.b1, s, p.w1T, out=ws["h1"])
        h2 = _ADDMM_RELU(p.b2, h1, p.w2T, out=ws["h2"])
        mu = addmm(p.b3, h2, p.w3T, out=ws["mu"]).tanh_()
        hp = _ADDMM_RELU(ws["z"], mu, p.v2aT, out=ws["hp"])
        v3s = torch.mul(p.v3, -1.0 / b, out=ws["v3s"]).expand(b, -1)
        dhp = relu_grad(v3s, hp, 0.0, grad_input=ws["dhp"])
        dmu = mm(dhp, p.v2a, out=ws["dmu"])
        dmu.addcmul_(dmu, mu * mu, value=-1.0)  # tanh' = 1 - mu^2
        mm(dmu.t(), h2, out=g.w3)
        torch.sum(dmu, 0, out=g.b3)
        dh2 = relu_grad(mm(dmu, p.w3, out=ws["dh2"]), h2, 0.0, grad_input=ws["dh2"])
        mm(dh2.t(), h1, out=g.w2)
        torch.sum(dh2, 0, out=g.b2)
        dh1 = relu_grad(mm(dh2, p.w2, out=ws["dh1"]), h1, 0.0, grad_input=ws["dh1"])
        mm(dh1.t(), s, out=g.w1)
        torch.sum(dh1, 0, out=g.b1)

    def _smooth_target_actions(self, actions: torch.Tensor) -> None:
        """TD3 target policy smoothing: add clipped Gaussian noise, clip to [-1, 1]."""
        cfg = self.config
        noise = torch.randn(actions.shape, generator=self.memory.generator)
        noise.mul_(cfg.target_noise).clamp_(-cfg.target_noise_clip, cfg.target_noise_clip)
        actions.add_(noise).clamp_(-1.0, 1.0)

    def _gradients_autograd(self, s: torch.Tensor, a: torch.Tensor, r: torch.Tensor,
                            ns: torch.Tensor, disc: torch.Tensor) -> None:
        """Reference path: the same gradients via autograd (any critic layout)."""
        with torch.no_grad():
            a_next = self.actor_target(ns)
            if self.config.target_noise > 0:
                self._smooth_target_actions(a_next)
            q_next = self.critic_target(ns, a_next)
            y = torch.addcmul(r, disc, q_next)
        critic_loss = F.mse_loss(self.critic_local(s, a), y)
        if not self._update_actor:
            self._grad.zero_()
            critic_loss.backward()
            self.last_critic_loss = critic_loss.detach()
            self.last_actor_loss = None
            return
        q_pi = torch.func.functional_call(
            self.critic_local,
            {k: v.detach() for k, v in self.critic_local.named_parameters()},
            (s, self.actor_local(s)))
        actor_loss = -q_pi.mean()
        self._grad.zero_()
        (critic_loss + actor_loss).backward()
        self.last_critic_loss = critic_loss.detach()
        self.last_actor_loss = actor_loss.detach()

    @staticmethod
    def soft_update(local_model: nn.Module, target_model: nn.Module, tau: float) -> None:
        """theta_target = tau * theta_local + (1 - tau) * theta_target, for any two models."""
        with torch.no_grad():
            for t, lp in zip(target_model.parameters(), local_model.parameters(), strict=True):
                t.lerp_(lp, tau)

    def hard_update(self) -> None:
        """Copy local weights into the targets (used at start and after loading)."""
        with torch.no_grad():
            self._target_flat.copy_(self._local_flat)


def _atomic_save(obj: Any, path: str | os.PathLike[str]) -> None:
    """torch.save to a temporary file in the same folder, then rename over ``path``."""
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _state_dict_copy(module: nn.Module) -> dict[str, torch.Tensor]:
    """State dict with compact copies (the live tensors are views of one flat buffer)."""
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def save_checkpoints(agent: Agent, actor_path: str | os.PathLike[str],
                     critic_path: str | os.PathLike[str]) -> None:
    """Write the local actor and critic state_dicts atomically (course file format)."""
    _atomic_save(_state_dict_copy(agent.actor_local), actor_path)
    _atomic_save(_state_dict_copy(agent.critic_local), critic_path)


def load_checkpoints(agent: Agent, actor_path: str | os.PathLike[str],
                     critic_path: str | os.PathLike[str] | None = None) -> Agent:
    """Load state_dicts into the agent's local and target networks.

    Raises FileNotFoundError for a missing file and ValueError (naming the file) for a file
    that is not a readable state_dict or does not match the agent's architecture.
    """
    pairs = [(actor_path, agent.actor_local)]
    if critic_path is not None:
        pairs.append((critic_path, agent.critic_local))
    for path, module in pairs:
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"checkpoint not found: {path}")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises several types for corrupt files
            raise ValueError(f"cannot read checkpoint {path}: not a valid torch file "
                             f"({type(exc).__name__}: {exc})") from exc
        if not isinstance(state, dict):
            raise ValueError(f"checkpoint {path} holds a {type(state).__name__}, "
                             "expected a state_dict")
        try:
            module.load_state_dict(state)
        except RuntimeError as exc:
            raise ValueError(f"checkpoint {path} does not match the network "
                             f"architecture: {exc}") from exc
    with torch.no_grad():
        for local, target in ((agent.actor_local, agent.actor_target),
                              (agent.critic_local, agent.critic_target)):
            target.load_state_dict(local.state_dict())
    # The critic file (if any) must agree: use the actor's normalisation everywhere.
    agent.set_obs_normalisation(
        mean=(-agent.actor_local.obs_bias / agent.actor_local.obs_scale).numpy(),
        std=(1.0 / agent.actor_local.obs_scale).numpy())
    return agent


def count_parameters(module: nn.Module) -> int:
    """Number of parameters (for logs)."""
    return sum(p.numel() for p in module.parameters())


__all__ = [
    "Agent",
    "DDPGConfig",
    "OUNoise",
    "ReplayBuffer",
    "count_parameters",
    "load_checkpoints",
    "save_checkpoints",
]
