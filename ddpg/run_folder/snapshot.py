"""The run as it stood after its last complete episode, kept in memory, so that a stop in the
middle of an episode (Ctrl-C, SIGTERM) saves exactly that and a resume continues as if the
run had never stopped.

At a stop the agent has already changed: updates made, noise drawn, transitions added. Its
small part (networks, optimisers, noise, counters, random generators: ``ddpg.run_folder.run_state.training_state``
without the buffer) is copied after every episode. The replay buffer is too large for that
(300 MB at a million Reacher transitions), but an episode changes few of its rows: it fills
rows past the filled part, which a save simply leaves out, or, once the buffer is full,
overwrites the oldest ones. Those, at most one episode's transitions, are copied before the
episode begins and put back when the stop is saved.

What it costs per episode is measured by benchmarks/bench_saving.py.
"""

from __future__ import annotations

from typing import Any

import torch

from ddpg.run_folder.run_state import training_state
from ddpg_agent import Agent


class EpisodeSnapshot:
    """``take`` after every complete episode (and at the start); ``state`` and ``rows`` then
    give training_state.pt and replay_buffer.pt as they were at that moment."""

    def __init__(self, n_agents: int, max_t: int, n_step: int) -> None:
        # An episode adds at most this many rows: one per agent and decision, and the n-step
        # returns still pending from the episode before (ddpg_agent.NStepReturns.end_episode).
        self.max_t = max_t
        self.transitions_per_episode = n_agents * (max_t + n_step - 1)
        self.state: dict[str, Any] | None = None
        self._kept: list[tuple[int, torch.Tensor, Any]] = []  # (first row, rows, their steps) of the filled rows at risk
        self.gamma = 0.0

    def take(self, agent: Agent, loop: dict[str, Any], env_random_state: dict[str, Any] | None) -> None:
        """Copy what the next episode changes: the agent's small state and the filled rows it may overwrite."""
        state, _ = training_state(agent, loop, env_random_state, with_buffer=False)
        # Everything in it is a fresh copy but the optimisers' state_dicts, which hold their
        # live tensors: the next updates would change them.
        state["optimizer"] = _copied(state["optimizer"])
        self.state = state
        memory = agent.memory
        span = min(self.transitions_per_episode, memory.capacity)
        # The next rows written are pos, pos + 1, ... wrapping at the capacity: at most two
        # runs of rows, of which only the filled ones matter (a save leaves out the rest).
        end = memory.pos + span
        runs = [(memory.pos, min(end, memory.size))] + ([(0, min(end - memory.capacity, memory.size))]
                                                       if end > memory.capacity else [])
        self._kept = [(lo, memory.data[lo:hi].clone(), memory.steps[lo:hi].copy()) for lo, hi in runs if hi > lo]
        self.gamma = agent.returns.gamma  # a new gamma discounts every row again: then none can be put back

    def rows(self, agent: Agent) -> dict[str, Any] | None:
        """replay_buffer.pt's rows as they were at ``take``; None if more decisions were stepped
        since than an episode has, or gamma changed (then more rows may have changed than were kept)."""
        assert self.state is not None
        if agent.t_step - self.state["agent"]["t_step"] > self.max_t or agent.returns.gamma != self.gamma:
            return None
        memory, size = agent.memory, self.state["buffer"]["size"]
        data, steps = memory.data[:size].clone(), memory.steps[:size].copy()
        for lo, kept, kept_steps in self._kept:
            data[lo:lo + len(kept)], steps[lo:lo + len(kept)] = kept, kept_steps
        return {"rows": data, "capacity": memory.capacity, "t_step": self.state["agent"]["t_step"],
                "steps": torch.from_numpy(steps)}

    def for_saving(self, agent: Agent) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """training_state.pt's and replay_buffer.pt's contents as of ``take`` (the rows None
        when they cannot be had: the state then says the buffer was not saved)."""
        assert self.state is not None
        rows = self.rows(agent)
        state = {**self.state, "buffer": {**self.state["buffer"], "saved": rows is not None}}
        return state, rows


def _copied(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(v) for v in value)
    return value


__all__ = ["EpisodeSnapshot"]
