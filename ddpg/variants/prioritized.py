"""Prioritized experience replay (Schaul et al. 2016) on an array-based sum tree.

A transition i is drawn with probability P(i) = p_i / sum_k p_k, where its priority
p_i = (|TD error_i| + eps) ** alpha. Drawing non-uniformly biases the expected update, so
each sample's loss is weighted by w_i = (N * P(i)) ** -beta / max_batch w, with beta
annealed from ``per_beta`` to 1 (fully unbiased) over ``per_beta_updates`` updates. A new
transition gets the highest priority seen so far, so it is replayed at least once soon.

The tree is one float64 array: leaf i (a transition's priority) sits at ``capacity + i``
and every inner node k holds the sum of its children 2k and 2k+1, so the root (index 1)
is the total. A batch is drawn by walking all its samples down the tree together, one
level at a time, and a batch of priorities is written by recomputing the parents of the
changed leaves, one level at a time: O(batch x log n) in NumPy operations, with no Python
object per transition.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ddpg_agent import ReplayBuffer


class SumTree:
    """Priorities of ``capacity`` slots with O(log n) batched update, total and sampling."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.leaves = 1 << max(0, (capacity - 1).bit_length())  # a power of two >= capacity
        self.depth = self.leaves.bit_length() - 1  # levels below the root
        self.nodes = np.zeros(2 * self.leaves)  # nodes[1] is the root; nodes[0] is unused

    @property
    def total(self) -> float:
        return float(self.nodes[1])

    def priorities(self, index: np.ndarray) -> np.ndarray:
        return self.nodes[self.leaves + np.asarray(index)]

    def update(self, index: np.ndarray, priorities: np.ndarray) -> None:
        """Set the priorities of slots ``index`` (a repeated slot keeps its last value)."""
        index = np.asarray(index, dtype=np.int64)
        if index.size and (index.min() < 0 or index.max() >= self.capacity):
            raise IndexError(f"slots must be in [0, {self.capacity}), got {index.min()}..{index.max()}")
        node = self.leaves + index
        self.nodes[node] = priorities
        for _ in range(self.depth):  # a parent listed twice gets the same sum twice: harmless
            node = node >> 1
            self.nodes[node] = self.nodes[2 * node] + self.nodes[2 * node + 1]

    def find(self, mass: np.ndarray) -> np.ndarray:
        """Slots holding the cumulative priority ``mass`` (values in [0, total)): slot i is
        found for a mass in [sum of the priorities before it, that sum + p_i)."""
        mass = np.array(mass, dtype=np.float64)  # a copy: walking down consumes it
        node = np.ones(len(mass), dtype=np.int64)
        for _ in range(self.depth):
            left = self.nodes[2 * node]
            right = mass >= left
            mass -= left * right
            node = 2 * node + right
        return node - self.leaves


class PrioritizedReplayBuffer(ReplayBuffer):
    """``ReplayBuffer`` whose ``sample`` draws by priority and also returns the importance
    weights (B, 1) and the rows drawn, for ``update_priorities`` after the update."""

    def __init__(self, state_size: int, action_size: int, buffer_size: int, batch_size: int,
                 seed: int, alpha: float = 0.6, beta: float = 0.4, beta_updates: int = 100_000,
                 eps: float = 1e-3, n_step: int = 1) -> None:
        super().__init__(state_size, action_size, buffer_size, batch_size, seed, n_step=n_step)
        self.tree = SumTree(buffer_size)
        self.alpha, self.beta0, self.beta_updates, self.eps = alpha, beta, beta_updates, eps
        self.max_priority = 1.0  # given to new transitions
        self.n_sampled = 0  # batches drawn so far: drives beta's annealing
        self.rng = np.random.default_rng(seed)

    @property
    def beta(self) -> float:
        """The importance-weight exponent now: per_beta, rising linearly to 1."""
        return min(1.0, self.beta0 + (1.0 - self.beta0) * self.n_sampled / self.beta_updates)

    def add(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
            next_states: np.ndarray, discounts: np.ndarray | float, steps: np.ndarray | None = None) -> None:
        slots = (self.pos + np.arange(len(states))) % self.capacity
        super().add(states, actions, rewards, next_states, discounts, steps)
        self.tree.update(slots, np.full(len(slots), self.max_priority))

    def sample(self) -> tuple[torch.Tensor, ...]:
        """(states, actions, rewards, next_states, discounts, weights, index)."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        total, b = self.tree.total, self.batch_size
        # Stratified: one draw in each of b equal slices of the total mass.
        mass = (np.arange(b) + self.rng.random(b)) * (total / b)
        index = np.minimum(self.tree.find(np.minimum(mass, np.nextafter(total, 0))), self.size - 1)
        probability = self.tree.priorities(index) / total
        weights = (self.size * probability) ** -self.beta
        weights /= weights.max()
        self.n_sampled += 1
        rows = self.data[torch.from_numpy(index)]
        return (*self.split(rows), torch.from_numpy(weights.astype(np.float32)).unsqueeze(1),
                torch.from_numpy(index))

    def extra_state(self) -> dict[str, Any]:
        """What ``train.py --resume`` needs beyond the rows (ddpg.run_folder saves it)."""
        return {"priorities": torch.from_numpy(self.tree.priorities(np.arange(self.size)).copy()),
                "max_priority": self.max_priority, "n_sampled": self.n_sampled,
                "rng": self.rng.bit_generator.state}

    def load_extra_state(self, state: dict[str, Any], rows_restored: bool) -> None:
        """Restore ``extra_state``; without the rows the buffer is empty, and so is the tree."""
        if rows_restored:
            self.tree.update(np.arange(len(state["priorities"])), state["priorities"].numpy())
        self.max_priority, self.n_sampled = state["max_priority"], state["n_sampled"]
        self.rng.bit_generator.state = state["rng"]

    def update_priorities(self, index: torch.Tensor, td_errors: torch.Tensor) -> None:
        """After an update: priority = (|TD error| + eps) ** alpha for the rows it used."""
        priorities = (np.abs(td_errors.detach().numpy().reshape(-1)).astype(np.float64) + self.eps) ** self.alpha
        self.tree.update(index.numpy(), priorities)
        self.max_priority = max(self.max_priority, float(priorities.max()))


class PrioritizedReplay:
    """The piece (``registry``): prioritized replay on an array-based sum tree (batched O(log n) sampling
    and priority updates in NumPy): P(i) proportional to (|TD error| + ``per_eps``)^``per_alpha``;
    each critic's loss weighted by importance weights with ``per_beta`` annealed to 1 over
    ``per_beta_updates`` updates, normalised by the batch's largest; new transitions at the highest
    priority so far, and the batch's new priorities its first critic's TD errors."""

    def make_memory(self: Any) -> PrioritizedReplayBuffer:
        cfg = self.config
        return PrioritizedReplayBuffer(self.state_size, self.action_size, cfg.buffer_size, cfg.batch_size, self.seed,
                                       alpha=cfg.per_alpha, beta=cfg.per_beta, beta_updates=cfg.per_beta_updates,
                                       eps=cfg.per_eps, n_step=cfg.n_step)

    def learn(self: Any, experiences: tuple[torch.Tensor, ...]) -> None:
        *batch, self.importance, index = experiences  # the buffer's draw adds weights and rows
        super().learn(tuple(batch))  # type: ignore[misc]
        self.memory.update_priorities(index, self.td_errors)

    def value_loss(self: Any, values: tuple[torch.Tensor, ...], y: torch.Tensor,
                   weights: torch.Tensor | None = None) -> torch.Tensor:
        """Each critic's loss weighted by the batch's importance weights (``Agent.critic_loss``'s own loss,
        through ``VariantAgent.value_loss``); the first critic's TD errors become the new priorities."""
        self.td_errors = (values[0] - y).detach()
        return super().value_loss(values, y, self.importance if weights is None else weights)  # type: ignore[misc]

    def buffer_extra_state(self: Any) -> dict[str, Any]:
        return {**super().buffer_extra_state(), **self.memory.extra_state()}  # type: ignore[misc]

    def load_buffer_extra_state(self: Any, state: dict[str, Any], rows_restored: bool) -> None:
        mine = ("priorities", "max_priority", "n_sampled", "rng")
        self.memory.load_extra_state({k: state[k] for k in mine}, rows_restored)
        super().load_buffer_extra_state({k: v for k, v in state.items() if k not in mine},  # type: ignore[misc]
                                        rows_restored)
