"""The fast learner's decisions: ``Agent.act`` and ``Agent.step`` restated for the training loop.

Between two updates a decision of the 20 arms is acting (the actor's forward pass, the OU noise,
the clip), the environment's step, and storing (n-step returns, the ring buffer's write). Written
as the course writes them, each is a dozen NumPy calls on (20, 4) and (20, 33) arrays, and the
calls' overhead, not their arithmetic, is most of a decision. ``FastSteps`` computes the same
numbers with one compiled loop for the noise and the clip and a few array writes for the store:

* the same random draws in the same order (``rng.standard_normal`` into a preallocated array,
  then the OU update and the clip elementwise, in ``OUNoise.sample``'s and ``Agent.act``'s order);
* the same n-step return (``np.stack`` and ``@``, the same product) written straight into the
  buffer's rows, float64 rounded to float32 once, as ``ReplayBuffer.add``'s assignment does;
* the agent's own objects hold the state throughout (``returns.steps``, ``noise.state``, the
  buffer's ``pos`` and ``size``), so a save, a snapshot or an ``agent.reset()`` reads what the
  readable code would have left.

Anything outside the steady state the readable code handles itself: a terminal state, arms leaving
their episode, a buffer about to wrap, a single state. The training loop uses it only where the
admission (``restated.PARTS``) finds the exact code it restates, so an edit of ``act``,
``step``, the noise, the n-step returns or the buffer's ``add`` runs as written.
Before each decision the guard (``guard.Guard``) checks that the agent still holds the noise, the
n-step returns, the buffer, the config and the functions they were admitted for; where it does not,
``act`` and ``step`` run ddpg_agent.py's own from then on, with one line.
``tests/test_fast_steps.py`` proves whole runs bitwise the readable decisions'.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ddpg.backends.guard import aside_line
from ddpg.backends.restated import DECISIONS, UPDATE
from ddpg_agent import Agent


@njit(cache=True)
def _noisy_clipped(mu: np.ndarray, state: np.ndarray, z: np.ndarray, theta: float, sigma: float, scale: float,
                   out: np.ndarray) -> None:  # pragma: no cover - compiled
    """OUNoise.sample then Agent.act's sum and clip, elementwise in their order: x += -theta x + sigma z;
    a = clip(float64(mu) + scale x, -1, 1) (NaN stays NaN, as with np.clip)."""
    for i in range(state.shape[0]):
        for j in range(state.shape[1]):
            x = state[i, j]
            x += (-theta) * x + sigma * z[i, j]
            state[i, j] = x
            a = np.float64(mu[i, j]) + scale * x
            if a < -1.0:
                a = -1.0
            elif a > 1.0:
                a = 1.0
            out[i, j] = a


class FastSteps:
    """``act(states)`` and ``step(...)`` as ``Agent.act`` (with noise) and ``Agent.step`` compute them,
    on the fast learner's agent (``backend.policy`` acts). Made by ``ddpg.backends.attach``."""

    def __init__(self, agent: Agent) -> None:
        self.agent, self.backend = agent, agent.backend
        self.aside = False  # set for good when the agent no longer holds what was admitted (``_aside``)
        self._z: dict[int, np.ndarray] = {}  # standard normal draws, by number of arms
        self._powers: dict[tuple[float, int], np.ndarray] = {}  # gamma ** arange(k), made as NStepReturns makes it

    def act(self, states: np.ndarray) -> np.ndarray:
        """``agent.act(states)``: a new (n, action_size) array each call (the n-step returns keep it)."""
        agent = self.agent
        if self.aside or self._aside():
            return agent.act(states)
        noise, backend = agent.noise, self.backend
        states = np.asarray(states)
        n = len(states)
        if states.ndim != 2 or states.shape[1] != agent.state_size or noise.state.shape != (n, agent.action_size):
            return agent.act(states)
        z = self._z.get(n)
        if z is None:
            z = self._z[n] = np.empty((n, agent.action_size))
        noise.rng.standard_normal(out=z)
        mu = backend._acting(states)  # Agent.policy's float32 actions (the guard above covered its acting)
        out = np.empty((n, agent.action_size))
        _noisy_clipped(mu, noise.state, z, float(noise.theta), float(noise.sigma), float(noise.scale), out)
        return out

    def step(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray, next_states: np.ndarray,
             terminated: np.ndarray | None = None) -> None:
        """``agent.step``: store each arm's transition n steps late, and learn every ``learn_every`` steps."""
        agent = self.agent
        if self.aside:
            return agent.step(states, actions, rewards, next_states, terminated)
        returns, memory, cfg = agent.returns, agent.memory, agent.config
        terminated = np.zeros(len(states), bool) if terminated is None else np.asarray(terminated, bool)
        steps = returns.steps
        steady = (not terminated.any() and len(steps) < returns.n
                  and (not steps or len(states) == len(returns.last_states)))
        if not steady:
            for transitions in returns.push(states, actions, rewards, next_states, terminated):
                memory.add(*transitions)
        else:
            steps.append((np.asarray(states), np.asarray(actions), np.asarray(rewards, np.float64).reshape(-1)))
            returns.last_states = np.asarray(next_states)
            if len(steps) == returns.n:
                self._store(returns, memory)
                steps.pop(0)
        agent.t_step += 1
        if agent.t_step % cfg.learn_every == 0 and len(memory) >= max(cfg.warmup, 1):
            agent.learn_many(agent.learn_updates)
        return None

    def _aside(self) -> bool:
        """Whether the decisions must run ddpg_agent.py's code from now on: the update stepped aside (it
        said so), or the agent no longer holds what the decisions were admitted for (one line here)."""
        if self.agent.backend is not self.backend:
            self.aside = True
            return True
        guard = self.backend.guard
        why = guard.problem(DECISIONS)
        if why:
            self.aside = True
            affects_update = guard.problem(UPDATE)
            if affects_update:  # one line for both: the readable learner acts and stores too
                self.backend.step_aside(affects_update)
            else:
                print(aside_line(DECISIONS, self.agent.t_step + 1, why), flush=True)
        return self.aside

    def _store(self, returns: Any, memory: Any) -> None:
        """The oldest pending step of every arm as one transition: NStepReturns.transitions then
        ReplayBuffer.add, for all rows and no terminal state."""
        k = len(returns.steps)
        powers = self._powers.get((returns.gamma, k))
        if powers is None:
            powers = self._powers[(returns.gamma, k)] = returns.gamma ** np.arange(k)
        states, actions, _ = returns.steps[0]
        next_states = returns.last_states
        total = np.stack([r for _, _, r in returns.steps], axis=1) @ powers
        discount = returns.gamma ** k
        n, pos = len(states), memory.pos
        # The row's layout is the buffer's own (ReplayBuffer.columns).
        cols = memory.columns
        (s0, s1), (a0, a1), (r0, _), (n0, n1), (d0, _) = (
            cols["states"], cols["actions"], cols["rewards"], cols["next_states"], cols["discounts"])
        if (pos + n > memory.capacity or states.shape[1] != s1 - s0 or actions.shape[1] != a1 - a0
                or next_states.shape != states.shape):
            memory.add(states, actions, total, next_states, np.full(n, discount))
            return
        rows = memory.data.numpy()[pos:pos + n]
        rows[:, s0:s1] = states
        rows[:, a0:a1] = actions
        rows[:, r0] = total
        rows[:, n0:n1] = next_states
        rows[:, d0] = discount
        memory.pos = (pos + n) % memory.capacity
        memory.size = min(memory.size + n, memory.capacity)


__all__ = ["FastSteps"]
