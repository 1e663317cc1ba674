"""n-step returns: store (s_t, a_t, R_t, s_{t+n}, gamma^n) instead of one-step transitions.

    R_t = r_t + gamma r_{t+1} + ... + gamma^(n-1) r_{t+n-1}

so the TD target y = R_t + gamma^n Q'(s_{t+n}, mu'(s_{t+n})) carries a reward n steps
back at once. The buffer's row format already holds a per-transition discount, so the
learner is unchanged; only what is stored changes.

Episode ends, per agent:
* a true terminal state at step t+k (k < n) ends every pending transition there, with
  discount 0 and the rewards up to the end;
* a time limit is not terminal: at the episode's end (``end_episode``, called by the agent's
  ``reset``) each pending transition bootstraps from the last state reached, with discount
  gamma^(steps it covers).

The returns are computed per agent, for all agents at once (NumPy over the agents axis).
The actions inside R_t were taken with exploration noise, so for n > 1 the target mixes
in the behaviour policy's returns (no off-policy correction, as in D4PG and Rainbow).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ddpg_agent import ReplayBuffer
from variants.prioritized import PrioritizedReplayBuffer

Transitions = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class NStepReturns:
    """Turns each agent's stream of one-step transitions into n-step transitions."""

    def __init__(self, n: int, gamma: float) -> None:
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n, self.gamma = n, gamma
        self.powers = gamma ** np.arange(n)  # 1, gamma, ..., gamma^(n-1)
        self.k = 0  # steps pending per agent (all agents in an episode step together)
        self.states = self.actions = self.rewards = self.last_next = np.empty(0)

    def push(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
             next_states: np.ndarray, terminated: np.ndarray) -> Transitions | None:
        """One step of every agent still in its episode; returns the n-step transitions it
        completes (or None). An agent that terminates leaves: the next call has one row fewer."""
        states, actions = np.asarray(states), np.asarray(actions)
        rewards = np.asarray(rewards, dtype=np.float64).reshape(-1)
        terminated = np.asarray(terminated, dtype=bool).reshape(-1)
        m = len(states)
        if self.k == 0:
            self.states = np.empty((m, self.n, states.shape[1]))
            self.actions = np.empty((m, self.n, actions.shape[1]))
            self.rewards = np.empty((m, self.n))
        elif m != len(self.states):
            raise ValueError(f"n-step returns: got {m} transitions, expected {len(self.states)} (one per agent "
                             "still in its episode; agents leave only through a terminal state, and the agent's "
                             "reset() ends an episode)")
        self.states[:, self.k], self.actions[:, self.k], self.rewards[:, self.k] = states, actions, rewards
        self.k += 1
        next_states = np.asarray(next_states)
        if not terminated.any():  # every step but an episode's last: no agent leaves, no masks
            self.last_next = next_states.copy()
            if self.k < self.n:
                return None
            ready = (self.states[:, 0].copy(), self.actions[:, 0].copy(), self.rewards @ self.powers,
                     self.last_next, np.full(m, self.gamma ** self.n))
            self._drop_oldest()
            return ready
        # Some agents terminate: their pending transitions all end here, with nothing to bootstrap.
        out = self._pending(terminated, next_states[terminated], bootstrap=False)
        keep = ~terminated
        if self.k == self.n and keep.any():  # the others' oldest transition now spans n steps
            ret = self.rewards[keep] @ self.powers
            out.append((self.states[keep, 0], self.actions[keep, 0], ret, next_states[keep],
                        np.full(int(keep.sum()), self.gamma ** self.n)))
            self._drop_oldest()
        self.states, self.actions, self.rewards = self.states[keep], self.actions[keep], self.rewards[keep]
        self.last_next = next_states[keep]
        if not keep.any():
            self.k = 0
        return _concatenate(out)

    def end_episode(self) -> Transitions | None:
        """The episode ended by a time limit: every pending transition bootstraps from the
        last state reached."""
        out = self._pending(np.ones(len(self.states), bool), self.last_next, bootstrap=True) if self.k else []
        self.k = 0
        return _concatenate(out)

    def _drop_oldest(self) -> None:
        """Forget each agent's oldest pending step (its n-step transition has been emitted)."""
        for buf in (self.states, self.actions, self.rewards):
            buf[:, :-1] = buf[:, 1:].copy()
        self.k -= 1

    def _pending(self, rows: np.ndarray, last_next: np.ndarray, bootstrap: bool) -> list[Transitions]:
        """The pending transitions of ``rows``, each cut at the current step."""
        out = []
        for j in range(self.k):
            ret = self.rewards[rows, j:self.k] @ self.gamma ** np.arange(self.k - j)
            discount = self.gamma ** (self.k - j) if bootstrap else 0.0
            out.append((self.states[rows, j], self.actions[rows, j], ret, last_next,
                        np.full(int(rows.sum()), discount)))
        return out


def _concatenate(parts: list[Transitions]) -> Transitions | None:
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(5))  # type: ignore[return-value]


class _NStepAdd:
    """Mixed into a replay buffer: ``add`` takes one-step transitions and stores n-step ones.
    ``discounts`` of 0 mark terminal states, as ``Agent.step`` passes them."""

    def __init__(self, *args: Any, n_step: int, gamma: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.returns = NStepReturns(n_step, gamma)

    def add(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
            next_states: np.ndarray, discounts: np.ndarray | float) -> None:
        terminated = np.broadcast_to(np.asarray(discounts) == 0, (len(states),))
        ready = self.returns.push(states, actions, rewards, next_states, terminated)
        if ready is not None:
            super().add(*ready)  # type: ignore[misc]

    def end_episode(self) -> None:
        ready = self.returns.end_episode()
        if ready is not None:
            super().add(*ready)  # type: ignore[misc]

    def extra_state(self) -> dict[str, Any]:
        """The pending steps (saved between episodes, they end the episode on resume)."""
        base = getattr(super(), "extra_state", dict)()
        r = self.returns
        return {**base, "n_step": {"k": r.k, **{name: torch.from_numpy(np.array(getattr(r, name)))
                                               for name in ("states", "actions", "rewards", "last_next")}}}

    def load_extra_state(self, state: dict[str, Any], rows_restored: bool) -> None:
        if hasattr(super(), "load_extra_state"):
            super().load_extra_state(state, rows_restored)  # type: ignore[misc]
        r, saved = self.returns, state["n_step"]
        r.k = saved["k"]
        for name in ("states", "actions", "rewards", "last_next"):
            setattr(r, name, saved[name].numpy().copy())


class NStepReplayBuffer(_NStepAdd, ReplayBuffer):
    """Uniform replay of n-step transitions."""


class NStepPrioritizedReplayBuffer(_NStepAdd, PrioritizedReplayBuffer):
    """Prioritized replay of n-step transitions."""
