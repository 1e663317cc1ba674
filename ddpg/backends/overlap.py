"""The overlap back-end (CPU): the agent's own ``step`` and ``learn`` on a second thread while the
environment steps on the first.

On the Crawler a decision of the 12 crawlers costs about 6 ms of environment and, with three SAC
updates of 128-unit networks, about 20 ms of updates, one after the other; a second PyTorch thread
buys little at these sizes (1.08x: ``benchmarks/results/learner_speed/``), so a core idles through
most of each. Here a worker thread runs everything that changes the agent, in the order the
decisions came: each decision's ``Agent.step`` (n-step returns, the replay buffer, observation
statistics) and, every ``learn_every``-th step, its learning step (``Agent.learn`` itself, on the
agent's own networks, optimisers and buffer: an edit of ddpg_agent.py runs as it does on
``readable``). The main thread only acts and steps the environment. A decision of the study's
``sac3`` then takes about three quarters of its time on ``readable`` (docs/training.md, "Threads";
``benchmarks/bench_crawler_learners.py``).

What keeps it exact, whatever the two threads' timing:

* the worker runs the very sequence of ``step`` calls a synchronous run makes (each decision's
  arrays copied when handed over, as the loop reuses them);
* the main thread reads only its acting copy of the actor (a deep copy: the network, its
  observation statistics, its class) and the agent's noise generator, which the worker never
  touches (acting's noise is drawn on the main thread; the updates' draws on the worker);
* the acting copy is taken at fixed decisions: when the step that may start a learning step is
  handed over, once the worker has finished every step before it.

So the run is deterministic, and exact on resume (the acting copy is saved with the training
state). It differs from ``readable``'s run as ``graph-overlap``'s does: the crawlers act with the
actor of the learning step before last (the one being made runs beside them), a different run of
the same algorithm. Refused with NoisyNet exploration, whose acting draws from PyTorch's generator,
which the worker's updates draw from too, and on CUDA, where ``graph-overlap`` does this.
"""

from __future__ import annotations

import copy
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from ddpg_agent import Agent


class Overlap:
    """``Overlap(agent)`` attaches itself (``agent.backend``); the loop hands each decision's
    transitions to ``submit`` (``agent_state.stepper``) instead of calling ``agent.step``.
    ``threaded=False`` runs each handed-over step at once on the calling thread, through the same
    bookkeeping: the same numbers, which the tests compare with the threaded run's."""

    name = "overlap"  # run.json's "learner"

    def __init__(self, agent: Agent, threaded: bool = True) -> None:
        if agent.backend is not None:
            raise ValueError(f"the agent already has the {agent.backend.name} back-end")
        self.agent = agent
        self._worker: threading.Thread | None = None  # the pool's one thread, once it starts
        self._pool = ThreadPoolExecutor(1, "learner", initializer=self._started) if threaded else None
        self._last: Future[None] | None = None  # the last step handed to the worker (its queue runs in order)
        self.handed = agent.t_step  # steps handed over so far
        self.acting = self._copy()
        agent.backend = self

    # ------------------------------------------------------------ the worker's side
    def submit(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray, next_states: np.ndarray,
               terminated: np.ndarray | None = None, truncated: np.ndarray | None = None) -> None:
        """``agent.step`` with these arrays, on the worker after the steps before it. The step that may
        learn first waits for those and gives the acting copy the actor they left."""
        self.handed += 1
        if self.handed % self.agent.config.learn_every == 0:
            self.settle()
            self.acting = self._copy()
        arrays = tuple(None if a is None else np.array(a, copy=True)
                       for a in (states, actions, rewards, next_states, terminated, truncated))
        if self._pool is None:
            self.agent.step(*arrays)
        else:
            self._last = self._pool.submit(self.agent.step, *arrays)

    def _started(self) -> None:
        self._worker = threading.current_thread()

    def learn_many(self, n_updates: int) -> None:
        """``Agent.learn_many``'s updates (each on a fresh batch), on the thread that asks: the worker,
        from ``Agent.step``; the main thread (a probe, a test) once the worker has finished."""
        if threading.current_thread() is not self._worker:
            self.settle()
        for _ in range(n_updates):
            self.agent.learn(self.agent.memory.sample())

    def settle(self) -> None:
        """Wait until the worker has run every step handed to it (raising what one of them raised)."""
        if self._last is not None:
            self._last.result()  # cleared only once it has run: a stop while waiting waits again before the save
            self._last = None

    # ------------------------------------------------------------ acting
    def _copy(self) -> torch.nn.Module:
        return copy.deepcopy(self.agent.actor_local).eval()

    def actor(self) -> torch.nn.Module:
        """The module acting runs (SAC samples from it): the copy, a learning step behind the actor."""
        return self.acting

    def policy(self, states: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return self.acting(torch.from_numpy(states)).numpy()

    def weights_loaded(self) -> None:
        self.settle()
        self.acting = self._copy()  # checkpoints were loaded into the networks

    # ------------------------------------------------------------ the agent's state
    def store_optimizers(self) -> None:
        pass  # the agent's own Adam objects are the ones the worker steps

    def extra_state(self) -> dict[str, Any]:
        """The acting copy, which the next decisions act with (it may be a learning step behind)."""
        return {"acting": {k: v.clone() for k, v in self.acting.state_dict().items()}}

    def loaded(self, extra: dict[str, Any] | None) -> None:
        """After the agent took back a training state: the acting copy is the one saved with it, else the actor."""
        self.handed = self.agent.t_step
        self.acting = self._copy()
        if extra and "acting" in extra:
            self.acting.load_state_dict(extra["acting"])


def overlap_problem(agent: Agent) -> str | None:
    """Why this agent cannot act on the main thread while it learns on the worker, or None."""
    if agent.device.type != "cpu":
        return f"--learner overlap runs on the CPU (on CUDA, graph-overlap overlaps); this agent is on {agent.device}"
    if getattr(agent.config, "exploration", None) == "noisy":
        return ("--learner overlap is not combined with exploration 'noisy': its acting draws from PyTorch's "
                "generator, which the updates on the other thread draw from too")
    return None


__all__ = ["Overlap", "overlap_problem"]
