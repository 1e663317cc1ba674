"""Goal paths: each Reacher episode's arm motion learned again against more goals (``goal_paths: K``).

One arm sees one goal path per episode, where twenty arms see twenty; its experience of
*where a goal can be* grows twenty times slower, and that is what it lacks (Report.md, "One
arm"). Yet Reacher's reward is a known function of two things in the observation: the hand's
position and the goal's. So the motion an arm made is also valid experience for any other
goal path, with the reward that path would have given; DDPG learns off-policy, so the actions
need not have been chosen for it. This is hindsight relabelling (HER, Andrychowicz et al.
2017) for a goal that moves: at the end of each episode, ``K`` more goal paths per arm are
drawn, each a circle at the goal's speed that passes the ring point nearest the hand at a
random moment of the episode (so it is reached at least sometimes), and the whole episode goes
into the buffer again against each of them, as n-step transitions like the real ones.

What it relies on of the scene (the hand, the goal's path and its reward, read from Reacher's
observation) is ``reacher/goals.py``'s, taken through ``ddpg.tasks.reacher_goals``: the learner's
package names no scene. It is for the built-in Reacher and the Unity binary only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ddpg.tasks import reacher_goals


class GoalPaths:
    """Keeps the episode's observations and actions; at its end, the same episode as n-step
    transitions against ``paths`` new goal paths per arm (``transitions``)."""

    def __init__(self, paths: int, seed: int, n_step: int, gamma: float, sizes: tuple[int, int] | None = None) -> None:
        self.goals = goals = reacher_goals()
        expected = (goals.OBSERVATION_SIZE, goals.ACTION_SIZE)
        if sizes is not None and tuple(sizes) != expected:
            raise ValueError(f"goal_paths reads the goal and the hand from Reacher's observation "
                             f"({expected[0]} values, {expected[1]} actions); this task has {sizes[0]} "
                             f"and {sizes[1]}: leave goal_paths at 0")
        self.paths, self.n_step, self.gamma = paths, n_step, gamma
        self.rng = np.random.default_rng([seed, 0x60A1])  # its own stream: the agent's draws stay as they are
        self.states = np.empty((0, 0, goals.OBSERVATION_SIZE), np.float32)  # (T + 1, N, 33), grown by doubling
        self.actions = np.empty((0, 0, 0), np.float32)
        self.steps = 0  # decisions recorded this episode

    def record(self, states: np.ndarray, actions: np.ndarray, next_states: np.ndarray) -> None:
        """One decision of every arm (all arms, every decision: Reacher's arms end together)."""
        n = len(states)
        if self.steps and n != self.states.shape[1]:
            raise ValueError(f"goal_paths: {n} arms in this step, {self.states.shape[1]} before; it needs every "
                             "arm in every step (the built-in Reacher's episodes)")
        if self.steps + 2 > len(self.states) or self.states.shape[1] != n:
            grown = max(1024, 2 * len(self.states)) if self.states.shape[1] == n else 1024
            states_, actions_ = np.empty((grown, n, self.goals.OBSERVATION_SIZE), np.float32), np.empty(
                (grown, n, np.shape(actions)[1]), np.float32)
            if self.steps:
                states_[:self.steps + 1], actions_[:self.steps] = self.states[:self.steps + 1], self.actions[:self.steps]
            self.states, self.actions = states_, actions_
        self.states[self.steps] = states
        self.actions[self.steps] = actions
        self.states[self.steps + 1] = next_states
        self.steps += 1

    def transitions(self) -> tuple[np.ndarray, ...] | None:
        """The episode against new goal paths as (states, actions, n-step returns, next states,
        discounts, rewards step by step), rows ordered by decision, then path, then arm; None when nothing was recorded.
        Clears the record. The episode ended at its time limit, so its last steps bootstrap."""
        t, paths = self.steps, self.paths
        if t == 0 or paths == 0:
            self.steps = 0
            return None
        states, actions = self.states[:t + 1], self.actions[:t]
        n_arms = states.shape[1]
        goals = self.goals
        hands = goals.hand_positions(states)  # (T + 1, N, 3)
        speeds = self.rng.uniform(-goals.GOAL_SPEED, goals.GOAL_SPEED, (paths, n_arms))
        when = self.rng.integers(0, t + 1, (paths, n_arms))  # the moment each path passes near the hand
        angles = goals.path_angles(goals.ring_angle(hands[when, np.arange(n_arms)]), speeds, when, t)
        rewards = goals.path_rewards(hands, angles[:-1], speeds)  # (T, K, N)
        relabelled = goals.with_goals(states, angles, speeds)  # (T + 1, K, N, 33)
        # n-step returns as ddpg_agent.NStepReturns makes them (tests/test_goal_paths.py checks they are
        # equal), written for the whole episode at once: ten times quicker than pushing it step by step.
        span = np.minimum(np.arange(t) + self.n_step, t)  # the state each return bootstraps from
        returns = np.zeros_like(rewards)
        for j in range(min(self.n_step, t)):  # an episode shorter than n steps sums what it has
            returns[:t - j] += self.gamma ** j * rewards[j:]
        discounts = self.gamma ** (span - np.arange(t)).astype(np.float64)
        by_step = np.zeros((*rewards.shape, self.n_step + 1))  # the rewards one by one and the span (rediscount)
        for j in range(min(self.n_step, t)):
            by_step[:t - j, ..., j] = rewards[j:]
        by_step[..., self.n_step] = (span - np.arange(t))[:, None, None]
        rows = t * paths * n_arms
        self.steps = 0
        return (relabelled[:-1].reshape(rows, -1), np.broadcast_to(actions[:, None], (t, paths, *actions.shape[1:]))
                .reshape(rows, -1), returns.reshape(rows), relabelled[span].reshape(rows, -1),
                np.broadcast_to(discounts[:, None, None], rewards.shape).reshape(rows), by_step.reshape(rows, -1))

    def state_dict(self) -> dict[str, Any]:
        """The episode recorded so far and the generator: a run saved mid-way goes on exactly."""
        return {"states": torch.from_numpy(self.states[:self.steps + 1].copy() if self.steps else np.zeros(0)),
                "actions": torch.from_numpy(self.actions[:self.steps].copy() if self.steps else np.zeros(0)),
                "steps": self.steps, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = int(state["steps"])
        if self.steps:
            self.states = state["states"].numpy().astype(np.float32, copy=True)
            self.actions = state["actions"].numpy().astype(np.float32, copy=True)
        self.rng.bit_generator.state = state["rng"]


class GoalPathsPiece:
    """The piece (``registry``): the built-in Reacher (and the Unity binary) only: at the end of each
    episode every arm's motion goes into the buffer again against ``goal_paths`` more goal paths
    (hindsight relabelling, as HER, for a goal that moves), each a goal on the ring at a speed drawn
    as the environment draws it, with the rewards it would have given and the same n-step returns,
    before any of the next episode's updates. It changes what is stored, not the update."""

    def __init__(self: Any, state_size: int, action_size: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(state_size, action_size, *args, **kwargs)  # type: ignore[misc]
        cfg = self.config
        self.goal_paths = GoalPaths(cfg.goal_paths, self.seed, cfg.n_step, cfg.gamma, (state_size, action_size))

    def step(self: Any, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray, next_states: np.ndarray,
             terminated: np.ndarray | None = None, truncated: np.ndarray | None = None) -> None:
        if truncated is not None:
            raise ValueError("goal_paths relabels Reacher's synchronous episodes; this task's agents restart on their own")
        if terminated is not None and np.any(terminated):
            raise ValueError("goal_paths relabels Reacher's episodes, which end at a time limit only; "
                             "this task has terminal states")
        self.goal_paths.record(states, actions, next_states)
        super().step(states, actions, rewards, next_states, terminated)  # type: ignore[misc]

    def reset(self: Any) -> None:
        super().reset()  # type: ignore[misc]
        self.goal_paths.gamma = self.config.gamma  # read at each use: a gamma changed while training counts here too
        if (relabelled := self.goal_paths.transitions()) is not None:
            self.memory.add(*relabelled)

    def buffer_extra_state(self: Any) -> dict[str, Any]:  # the episode so far: it goes in again at the next reset
        return {**super().buffer_extra_state(), "goal_paths": self.goal_paths.state_dict()}  # type: ignore[misc]

    def load_buffer_extra_state(self: Any, state: dict[str, Any], rows_restored: bool) -> None:
        state = dict(state)
        paths = state.pop("goal_paths", None)
        if paths is None:
            raise ValueError("the saved run and this agent differ in goal_paths: resume with the run's own settings")
        self.goal_paths.load_state_dict(paths)
        super().load_buffer_extra_state(state, rows_restored)  # type: ignore[misc]


__all__ = ["GoalPaths", "GoalPathsPiece"]
