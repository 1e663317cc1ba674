"""DDPG (Lillicrap et al. 2016), the agent to read top to bottom.

One actor-critic pair acts for all arms of the multi-agent Reacher and learns from all
their experience, kept in one replay buffer. For a batch of transitions (s, a, r, s', d),
where d is the discount of the bootstrap (gamma, or 0 after a true terminal state):

    target    y   = r + d * Q'(s', mu'(s'))            Q', mu': the target networks
    critic    L_Q = mean (Q(s, a) - y)^2               one Adam step on the critic
    actor     L_mu = -mean Q(s, mu(s))                 one Adam step on the actor
    targets   theta' <- tau * theta + (1 - tau) * theta'   for both pairs of networks

n-step returns carry rewards n steps back; OU noise explores. What you edit here or in model.py runs: training
calls these methods and the agent's own networks and optimisers at every step (on a GPU the update is captured as a
CUDA graph and replayed, captured again when what it holds changes: ``ddpg/backends``); a variant
(``ddpg/variants``) replaces named parts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from model import Actor, Critic, built_widths, given


def setting(default: Any, check: str | tuple[str, ...], doc: str, network: bool = False, built: bool = False) -> Any:
    """A field declared once: its default, its check (ddpg.variants.settings), its meaning, whether checkpoints' shapes depend
    on it, and whether it is read only when the agent is built (``built``, as every ``network`` one): a change of such
    a field while training is refused (``Agent.follow_config``), every other one is read at its next use."""
    return field(default=default, metadata={"check": check, "doc": doc, "network": network, "built": built or network})


@dataclass
class DDPGConfig:
    """The hyperparameters, tuned for Reacher; each field's check and meaning are its metadata (``ddpg.variants.settings``)."""

    buffer_size: int = setting(1_000_000, "count", "replay buffer capacity, in transitions", built=True)
    batch_size: int = setting(256, "count", "transitions per update, drawn uniformly with replacement")
    gamma: float = setting(0.95, "fraction", "discount: a horizon of about 1 / (1 - gamma) decisions")
    tau: float = setting(1e-2, "rate", "soft update of the target networks, after each update")
    lr_actor: float = setting(1e-3, ">=0", "Adam's learning rate for the actor")
    lr_critic: float = setting(1e-3, ">=0", "Adam's learning rate for the critic")
    weight_decay: float = setting(0.0, ">=0", "L2 penalty on the critic's weights")
    actor_fc1: int | None = setting(None, "size", "actor: units of its first hidden layer (null: model.py's own)", network=True)
    actor_fc2: int | None = setting(None, "size", "actor: units of its second hidden layer", network=True)
    critic_fc1: int | None = setting(None, "size", "critic: units of its first hidden layer (the state's)", network=True)
    critic_fc2: int | None = setting(None, "size", "critic: units of its second (after the action joins)", network=True)
    learn_every: int = setting(20, "count", "decisions between learning steps")
    learn_updates: int = setting(20, ">=0", "updates per learning step, each on a fresh batch")
    warmup: int = setting(20_000, ">=0", "transitions stored before the first update")
    grad_clip: float = setting(1.0, ">=0", "max norm of the critic's gradient (0: no clipping)")
    noise_sigma: float = setting(0.2, ">=0", "OU noise: scale of the Gaussian increments, one process per arm and action")
    noise_theta: float = setting(0.15, ">=0", "OU noise: pull towards 0")
    noise_decay: float = setting(1.0, "fraction", "noise scale multiplied by this each episode (1: no decay)")
    noise_min: float = setting(0.05, ">=0", "floor of the decayed noise scale")
    n_step: int = setting(3, "count", "n-step returns (1: the one-step TD target)", built=True)
    critic_layer_norm: bool = setting(True, "bool", "layer norm before the critic's hidden ReLUs", network=True)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ReplayBuffer:
    """Preallocated ring buffer: a transition is one float32 row ``[s | a | r | s' | discount]``, a batch one indexing."""

    def __init__(self, state_size: int, action_size: int, buffer_size: int, batch_size: int, seed: int,
                 device: torch.device | str = "cpu", n_step: int = 1) -> None:
        s, a, self.device = state_size, action_size, torch.device(device)  # rows on the CPU, batches to the device
        self.columns = {"states": (0, s), "actions": (s, s + a), "rewards": (s + a, s + a + 1),
                        "next_states": (s + a + 1, 2 * s + a + 1), "discounts": (2 * s + a + 1, 2 * s + a + 2)}
        self.capacity, self.batch_size = buffer_size, batch_size
        self.data = torch.zeros(buffer_size, 2 * s + a + 2)
        # Each row's rewards step by step, then the steps it spans (negative after a terminal state, 0 if not given):
        # what a new gamma needs to discount the rows again (rediscount).
        self.steps = np.zeros((buffer_size, n_step + 1), np.float32)
        self.pos, self.size = 0, 0  # the next row to write, the rows filled so far
        self.generator = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        return self.size  # the rows filled so far

    def add(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray, next_states: np.ndarray,
            discounts: np.ndarray | float, steps: np.ndarray | None = None) -> None:
        """Append one transition per agent (rows of the arguments), overwriting the oldest; ``steps``: their rewards
        step by step and spans (NStepReturns.transitions), without which a new gamma leaves them as they are."""
        n = len(states)
        if n > self.capacity:
            raise ValueError(f"cannot add {n} transitions to a buffer of {self.capacity}")
        rows = np.column_stack([states, actions, np.reshape(rewards, (n, 1)), next_states,
                                np.broadcast_to(np.reshape(discounts, (-1, 1)), (n, 1))])
        where = np.arange(self.pos, self.pos + n) % self.capacity
        self.data.numpy()[where] = rows
        self.steps[where] = 0.0 if steps is None else steps
        self.pos = (self.pos + n) % self.capacity
        self.size = min(self.size + n, self.capacity)

    def rediscount(self, gamma: float) -> int:
        """Every row's n-step return and discount made again at ``gamma`` (a gamma changed while training); returns
        how many rows could not be (added without their steps), which keep the discount they had."""
        n, data, steps = self.steps.shape[1] - 1, self.data.numpy()[:self.size], self.steps[:self.size]
        spans = steps[:, n]
        known = spans != 0
        data[known, self.columns["rewards"][0]] = steps[known, :n].astype(np.float64) @ gamma ** np.arange(n)
        data[known, self.columns["discounts"][0]] = np.where(spans[known] < 0, 0.0, gamma ** np.abs(spans[known]))
        return int(self.size - known.sum())

    def sample(self) -> tuple[torch.Tensor, ...]:
        """A batch (states, actions, rewards, next_states, discounts), rewards and discounts (B, 1)."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        index = torch.randint(self.size, (self.batch_size,), generator=self.generator)
        return self.split(self.data[index].to(self.device))

    def split(self, rows: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Views of a block of rows as (states, actions, rewards, next_states, discounts)."""
        return tuple(rows[:, lo:hi] for lo, hi in self.columns.values())


class NStepReturns:
    """Each arm's transitions stored n steps late, (s_t, a_t, r_t + ... + gamma^(n-1) r_t+n-1, s_t+n, gamma^n): n = 1 is
    one-step DDPG. An arm whose episode ends stores its pending steps (discount 0 after a terminal state, else gamma^k)."""

    def __init__(self, n: int, gamma: float) -> None:
        self.n, self.gamma = n, gamma
        self.steps: list[tuple[np.ndarray, ...]] = []  # the last steps of every arm (states, actions, rewards), oldest first
        self.pending, self.last_states = np.zeros(0, np.int64), np.empty(0)  # how many are each arm's episode's; its last state

    def push(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray, next_states: np.ndarray,
             terminated: np.ndarray, truncated: np.ndarray | None = None) -> list[tuple[np.ndarray, ...]]:
        """One step of the arms; the transitions it completes. A terminated arm leaves (the next step has no row for it),
        unless ``truncated`` is given: then every arm keeps its row and starts its next episode there (a vector env)."""
        if self.steps and len(states) != len(self.last_states):
            raise ValueError(f"n-step returns: {len(states)} transitions, expected one per arm still in "
                             f"its episode ({len(self.last_states)}); the agent's reset() ends an episode")
        self.pending = (self.pending if self.steps else np.zeros(len(states), np.int64)) + 1  # no steps: none pending
        self.steps.append((np.asarray(states), np.asarray(actions), np.asarray(rewards, np.float64).reshape(-1)))
        self.last_states = np.asarray(next_states)
        ended, size = (terminated if truncated is None else terminated | np.asarray(truncated, bool)), len(self.steps)
        out = [self.transitions(rows, j, terminated) for j in range(size)  # step j spans size - j: complete, or flushed
               if (rows := (self.pending >= size - j) & (ended | (size - j == self.n))).any()]
        self.pending = np.where(ended, 0, np.minimum(self.pending, self.n - 1))
        if truncated is None and terminated.any():  # terminated arms leave
            self.steps = [tuple(x[~terminated] for x in step) for step in self.steps]
            self.last_states, self.pending = self.last_states[~terminated], self.pending[~terminated]
        self.steps = self.steps[len(self.steps) - int(self.pending.max(initial=0)):]  # what some arm still needs
        return out

    def end_episode(self) -> list[tuple[np.ndarray, ...]]:
        """A time limit ended every arm's episode: its pending steps bootstrap from its last state."""
        size, none = len(self.steps), np.zeros(len(self.last_states), bool)
        out = [self.transitions(rows, j, none) for j in range(size) if (rows := self.pending >= size - j).any()]
        self.steps, self.pending = [], np.zeros(len(self.last_states), np.int64)
        return out

    def transitions(self, rows: np.ndarray, j: int, terminated: np.ndarray) -> tuple[np.ndarray, ...]:
        """Pending step ``j`` of the ``rows`` as (s, a, R, s', discount, its rewards step by step), summed to the last step."""
        k = len(self.steps) - j  # the steps it spans
        rewards = np.stack([r[rows] for _, _, r in self.steps[j:]], axis=1)
        returns = rewards @ self.gamma ** np.arange(k)
        discounts = np.where(terminated[rows], 0.0, self.gamma ** k)
        steps = np.zeros((len(rewards), self.n + 1))  # the rewards one by one and the span: ReplayBuffer.rediscount
        steps[:, :k], steps[:, self.n] = rewards, np.where(terminated[rows], -k, k)
        return self.steps[j][0][rows], self.steps[j][1][rows], returns, self.last_states[rows], discounts, steps


class OUNoise:
    """Ornstein-Uhlenbeck noise per agent, x += -theta x + sigma N(0, 1) (the course's uniform increments drift up)."""

    def __init__(self, action_size: int, seed: int, theta: float = 0.15, sigma: float = 0.2,
                 decay: float = 1.0, scale_min: float = 0.0) -> None:
        self.action_size, self.theta, self.sigma = action_size, theta, sigma
        self.decay, self.scale_min, self.scale = decay, scale_min, 1.0
        self.rng = np.random.default_rng(seed)
        self.state = np.zeros((1, action_size))

    def reset(self) -> None:
        self.state[...] = 0.0
        self.scale = max(self.scale_min, self.scale * self.decay)

    def sample(self, n: int = 1) -> np.ndarray:  # (n agents, action_size)
        if self.state.shape[0] != n:
            self.state = np.zeros((n, self.action_size))
        self.state += -self.theta * self.state + self.sigma * self.rng.standard_normal(self.state.shape)
        return self.scale * self.state


class Agent:
    """DDPG agent shared by all arms: ``act``, ``step``, ``learn``, ``reset`` as in the course. ``Agent(state_size,
    action_size, random_seed, **overrides)``, the overrides ``DDPGConfig`` fields; ``device``: where it learns."""

    config_class: Any = DDPGConfig  # variants.VariantAgent takes a VariantConfig

    def __init__(self, state_size: int, action_size: int, random_seed: int, config: DDPGConfig | None = None,
                 device: torch.device | str = "cpu", **overrides: Any) -> None:
        self.config = cfg = self.config_class(**{**asdict(config or self.config_class()), **overrides})
        self.state_size, self.action_size, self.seed = state_size, action_size, int(random_seed)
        self.device = device = torch.device(device)

        # Actor (policy) and critic (Q-function), each with a slowly following target copy.
        self.actor_local, self.actor_target = self.make_actor().to(device), self.make_actor().to(device)
        self.critic_local, self.critic_target = self.make_critic().to(device), self.make_critic().to(device)
        self.actor_target.load_state_dict(self.actor_local.state_dict())
        self.critic_target.load_state_dict(self.critic_local.state_dict())
        self.config = cfg = replace(cfg, **built_widths(self.actor_local, self.critic_local))  # the record: what was built
        # fused: one kernel per step, its square root IEEE-exact on every CPU (MKL's rounds differently on AMD, Intel)
        self.actor_optimizer = torch.optim.Adam(self.actor_local.parameters(), lr=cfg.lr_actor, fused=True)
        self.critic_optimizer = torch.optim.Adam(self.critic_local.parameters(), lr=cfg.lr_critic,
                                                 weight_decay=cfg.weight_decay, fused=True)
        self.backend: Any = None  # None: learn() below; else what runs it: a CUDA graph, a thread (ddpg/backends)
        self.noise, self.memory = self.make_noise(), self.make_memory()
        self.returns = NStepReturns(cfg.n_step, cfg.gamma)
        self.learn_updates = cfg.learn_updates  # updates per learning step (train.py may lower it)
        self.t_step, self.n_updates = 0, 0  # environment steps seen, learning updates made
        self.config_read = dict(vars(cfg))  # the settings as the agent last took them up (follow_config)

    # The parts a variant replaces (ddpg/variants): networks, exploration noise, replay buffer.
    def make_actor(self) -> nn.Module:  # model.py's widths, unless the config gives them
        cfg = self.config
        return Actor(self.state_size, self.action_size, self.seed, **given(fc1_units=cfg.actor_fc1, fc2_units=cfg.actor_fc2))

    def make_critic(self) -> nn.Module:
        cfg = self.config
        return Critic(self.state_size, self.action_size, self.seed, layer_norm=cfg.critic_layer_norm,
                      **given(fcs1_units=cfg.critic_fc1, fc2_units=cfg.critic_fc2))

    def make_noise(self) -> OUNoise:
        cfg = self.config
        return OUNoise(self.action_size, self.seed, cfg.noise_theta, cfg.noise_sigma, cfg.noise_decay, cfg.noise_min)

    def make_memory(self) -> ReplayBuffer:
        cfg = self.config
        return ReplayBuffer(self.state_size, self.action_size, cfg.buffer_size, cfg.batch_size, self.seed, self.device,
                            cfg.n_step)

    def act(self, states: np.ndarray, add_noise: bool = True) -> np.ndarray:
        """Actions in [-1, 1] for a batch of states (n, state_size): mu(s) plus exploration noise."""
        states = np.asarray(states, dtype=np.float32)
        actions = self.policy(states.reshape(-1, self.state_size)).astype(np.float64)
        if add_noise:
            actions += self.noise.sample(len(actions))
        actions = np.clip(actions, -1.0, 1.0)
        return actions[0] if states.ndim == 1 else actions

    def policy(self, states: np.ndarray) -> np.ndarray:
        """mu(s) for a float32 batch (n, state_size), without noise."""
        if self.backend is not None:
            return self.backend.policy(states)
        self.actor_local.eval()  # batch norm or dropout in model.py act in evaluation mode, as in the course
        with torch.no_grad():
            actions = self.actor_local(torch.from_numpy(states).to(self.device)).cpu().numpy()
        self.actor_local.train()
        return actions

    def reset(self) -> None:
        """At each episode start: store the last one's pending n-step steps, restart the noise."""
        self.noise.reset()
        for transitions in self.returns.end_episode():
            self.memory.add(*transitions)

    def exploration_scale(self) -> float:
        return self.noise.sigma * self.noise.scale  # the action noise's size now, for the metrics

    def step(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray, next_states: np.ndarray,
             terminated: np.ndarray | None = None, truncated: np.ndarray | None = None) -> None:
        """Store every arm's transition (n steps late); every ``learn_every`` steps, learn. ``terminated``: no
        bootstrap; ``truncated``: a time limit ended the arm's episode, and it restarts in its row (NStepReturns)."""
        if vars(self.config) != self.config_read:  # a setting changed while training: taken up now
            self.follow_config()
        terminated = np.zeros(len(states), bool) if terminated is None else np.asarray(terminated, bool)
        for transitions in self.returns.push(states, actions, rewards, next_states, terminated, truncated):
            self.memory.add(*transitions)  # (s, a, n-step return, s', gamma^n or 0, the rewards one by one)
        self.t_step += 1
        if self.t_step % self.config.learn_every == 0 and len(self.memory) >= max(self.config.warmup, 1):
            self.learn_many(self.learn_updates)

    def follow_config(self) -> None:
        """Take up the settings changed in ``self.config`` since the last decision, each from its next use: the copies
        the agent holds are set anew; one read only when the agent is built (``setting``'s ``built``) is refused."""
        cfg, before = self.config, self.config_read
        changed = {name for name, value in vars(cfg).items() if name not in before or before[name] != value}
        if unknown := sorted(changed - {f.name for f in fields(cfg)}):
            raise ValueError(f"{', '.join(unknown)}: not a setting of {type(cfg).__name__} (ddpg_agent.py, ddpg/variants)")
        if built := sorted(f.name for f in fields(cfg) if f.name in changed and f.metadata.get("built", True)):
            raise ValueError(f"{', '.join(built)} changed while training, but is read only when the agent is built "
                             "(its networks, buffer, n-step returns): build a new agent with it, or set it back")
        if "gamma" in changed:  # the stored returns too
            self.returns.gamma = cfg.gamma
            if kept := self.memory.rediscount(cfg.gamma):
                print(f"gamma {cfg.gamma}: {kept} transitions saved without their rewards one by one keep their discount")
        for name, optimizer, key in (("lr_actor", self.actor_optimizer, "lr"), ("lr_critic", self.critic_optimizer, "lr"),
                                     ("weight_decay", self.critic_optimizer, "weight_decay")):
            for group in optimizer.param_groups if name in changed else ():
                group[key] = getattr(cfg, name)
        if "batch_size" in changed:
            self.memory.batch_size = cfg.batch_size
        if "learn_updates" in changed:
            self.learn_updates = cfg.learn_updates
        if changed & {"noise_sigma", "noise_theta", "noise_decay", "noise_min"}:  # make_noise's parameters now,
            made = vars(self.make_noise())  # this noise's state and draws kept
            vars(self.noise).update({k: made[k] for k in ("sigma", "theta", "decay", "scale_min") if k in made})
        self.config_read = dict(vars(cfg))

    def learn_many(self, n_updates: int) -> None:
        """``n_updates`` updates, each on a fresh batch from the buffer (by the back-end when there is one)."""
        if self.backend is not None:
            return self.backend.learn_many(n_updates)
        for _ in range(n_updates):
            self.learn(self.memory.sample())

    def learn(self, experiences: tuple[torch.Tensor, ...]) -> None:
        """One update in four named parts, both losses from the critic before its step (the course: one step apart)."""
        states, actions, rewards, next_states, discounts = experiences
        y = self.td_target(rewards, next_states, discounts)  # the target
        critic_loss = self.critic_loss(states, actions, y)  # the critic's loss
        actor_loss = self.actor_loss(states)  # the actor's loss
        self.optimise(actor_loss, critic_loss)  # the step

    def td_target(self, rewards: torch.Tensor, next_states: torch.Tensor, discounts: torch.Tensor) -> torch.Tensor:
        """y = r + d * Q'(s', mu'(s')) from the target networks, without gradients."""
        with torch.no_grad():
            return rewards + discounts * self.target_value(next_states, self.target_action(next_states))

    def target_action(self, next_states: torch.Tensor) -> torch.Tensor:  # mu'(s'): TD3 adds clipped noise to it
        return self.actor_target(next_states)

    def target_value(self, next_states: torch.Tensor, next_actions: torch.Tensor) -> torch.Tensor:  # Q'(s', a'): a twin's min
        return self.critic_target(next_states, next_actions)

    def critic_loss(self, states: torch.Tensor | None, actions: torch.Tensor | None, y: torch.Tensor,
                    q: torch.Tensor | None = None, weights: torch.Tensor | None = None) -> torch.Tensor:
        """L_Q = mean (Q(s, a) - y)^2; variants pass each critic's ``q`` (PER its ``weights``): an edit here is theirs too."""
        losses = F.mse_loss(self.critic_local(states, actions) if q is None else q, y, reduction="none")
        return losses.mean() if weights is None else (weights * losses).mean()

    def actor_loss(self, states: torch.Tensor) -> torch.Tensor:
        """L_mu = -mean Q(s, mu(s)): climb the critic."""
        return -self.critic_local(states, self.actor_local(states)).mean()

    def optimise(self, actor_loss: torch.Tensor, critic_loss: torch.Tensor) -> None:
        """Gradients, Adam steps and the targets' soft update, whatever the losses."""
        cfg = self.config
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        if cfg.grad_clip > 0:
            nn.utils.clip_grad_norm_(self.critic_local.parameters(), cfg.grad_clip)
        self.actor_optimizer.zero_grad()
        learnable = [p for p in self.actor_local.parameters() if p.requires_grad]
        if learnable:  # inputs: the actor's gradients only, so the critic's stay its own loss's (and none are wasted)
            actor_loss.backward(inputs=learnable)
        self.critic_optimizer.step()  # both steps after both backward passes: the actor's read the critic as it was
        self.actor_optimizer.step()
        self.soft_update(self.critic_local, self.critic_target, cfg.tau)  # the targets follow slowly
        self.soft_update(self.actor_local, self.actor_target, cfg.tau)
        self.n_updates += 1

    @staticmethod
    def soft_update(local_model: nn.Module, target_model: nn.Module, tau: float) -> None:
        """theta_target = tau * theta_local + (1 - tau) * theta_target, every pair of parameters in one call."""
        with torch.no_grad():
            torch._foreach_lerp_(list(target_model.parameters()), list(local_model.parameters()), tau)
