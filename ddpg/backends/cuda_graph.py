"""The CUDA graph back-end: ``Agent.learn``'s own autograd update, captured once and replayed.

These networks are small (33-128-128-4 and a critic alike, batches of 256): on a GPU one
update is some sixty small kernels, and eager PyTorch spends more time launching them than the
GPU spends running them (3.8-4.7 ms per update on an H200, about what a 2-core CPU takes).
Captured as a CUDA graph, the same kernels replay with one launch: 0.53 ms.
Nothing is rewritten: the graph records ``agent.learn`` itself (the variants' too), so the
update stays the one ``ddpg_agent.py`` shows. What makes it capture-safe:

* the replay buffer lives on the GPU too (``DeviceReplayBuffer``): each environment step's
  transitions are written on the host as before, and the rows added since the last learning
  step are copied over once, just before it;
* each update draws its batch on the GPU, from CUDA's random generator and a device-side
  count of the rows (a graph cannot take a new Python number), with no host synchronisation;
* Adam is ``capturable`` (its step count a device tensor); gradient clipping and the soft
  target update are device-side already;
* TD3's policy delay decides in Python whether the actor learns, so one graph is captured
  for each phase of the delay and the agent's update count picks which replays.

Acting stays on the CPU, on a copy of the actor module (its own class and forward) refreshed
after each learning step: 20 states through the actor cost less there than a round trip to the
GPU. The first ``WARMUP`` updates run eagerly on a side stream (as PyTorch asks before a capture:
the optimiser's state and the allocator settle), and count as updates like any other.

A graph holds what it captured: the tensors, the hooks, the settings read as Python numbers. So
before each learning step it compares what the update reads (``captured_state``: each network's and
optimiser's class, modules, parameters, their ``requires_grad`` and hooks, the optimisers'
settings, the config) with what it captured, and when that changed (a frozen layer, a swapped
class, weights loaded with ``assign=True``, a new learning rate) it captures again, with one line
saying why; the acting copy is made again too. A library function rebound after the capture is
code, not an object, and is not seen: such an edit runs from the next process (or on the CPU).

``overlap=True`` (``--learner graph-overlap``) lets the GPU replay a learning step while the
CPU steps the environment: ``learn_many`` launches the replays and returns, and the acting
copy takes the actor's weights at the start of the next learning step (waiting there for the
replays, which have had ``learn_every`` environment steps to finish). So the arms act with the
actor one learning step old, and the run differs from the synchronous one: it is the same
algorithm with that delay, deterministic on one GPU, and exact on resume (the stale copy is
saved with the training state).

Not capture-safe, so refused on CUDA by ``ddpg.backends.choose``: prioritized replay (its sum
tree is on the host and its priorities come back every update) and NoisyNet exploration (its
noise comes from a CPU generator).
"""

from __future__ import annotations

import copy
import sys
from typing import Any

import numpy as np
import torch

from ddpg.variants import registry
from ddpg_agent import Agent, ReplayBuffer

WARMUP = 3  # eager updates before the capture


class DeviceReplayBuffer(ReplayBuffer):
    """The agent's replay buffer with a copy of its rows on the GPU.

    ``add`` writes the host rows as the plain buffer does (they are what a save keeps) and
    counts them; ``flush`` copies the rows added since the last flush in one copy (two when
    they wrap around the ring); ``draw`` samples a batch on the GPU, capture-safe.
    """

    @classmethod
    def wrap(cls, buffer: ReplayBuffer, device: torch.device) -> DeviceReplayBuffer:
        """The same buffer (its host rows shared, not copied) with a GPU copy of them."""
        new = cls.__new__(cls)
        new.__dict__.update(buffer.__dict__)
        new.device = device
        new.device_rows = torch.zeros(buffer.data.shape, device=device)
        new.rows_on_device = torch.zeros((), dtype=torch.float64, device=device)  # the count draw() samples from
        new.pending = buffer.size  # rows not yet on the GPU
        return new

    def add(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
            next_states: np.ndarray, discounts: np.ndarray | float, steps: np.ndarray | None = None) -> None:
        super().add(states, actions, rewards, next_states, discounts, steps)
        self.pending = min(self.pending + len(states), self.capacity)

    def rediscount(self, gamma: float) -> int:
        kept = super().rediscount(gamma)
        self.mark_all()  # every row's return and discount changed: all go to the GPU again
        return kept

    def mark_all(self) -> None:
        """Every row is new to the GPU (after a training state was loaded into the host rows)."""
        self.pending = self.size

    def flush(self) -> None:
        """Copy the rows added since the last flush to the GPU, and their count."""
        if self.pending == 0:
            return
        start = (self.pos - self.pending) % self.capacity
        for lo, hi in ((start, start + self.pending),) if start + self.pending <= self.capacity else (
                (start, self.capacity), (0, self.pos)):
            self.device_rows[lo:hi].copy_(self.data[lo:hi])
        self.rows_on_device.fill_(self.size)
        self.pending = 0

    def draw(self) -> tuple[torch.Tensor, ...]:
        """A batch drawn uniformly (with replacement) from the rows on the GPU, on the GPU.

        floor(u * size) for u uniform in [0, 1) in float64: every row equally likely to within
        2^-53 relative, and below size for any buffer under 2^52 rows."""
        u = torch.rand(self.batch_size, dtype=torch.float64, device=self.device)
        index = u.mul_(self.rows_on_device).long()
        return self.split(self.device_rows.index_select(0, index))


class CudaGraph:
    """``CudaGraph(agent)`` attaches itself (``agent.backend``) to an agent whose networks are on a
    CUDA device; its ``learn_many`` replays the captured update, its ``policy`` acts on the CPU.

    ``capture=False`` runs every update eagerly through the same code (the GPU buffer, the
    draws, the acting copy), on any device: what the tests run where there is no GPU."""

    threads = 1

    def __init__(self, agent: Agent, warmup: int = WARMUP, capture: bool = True, overlap: bool = False) -> None:
        if capture and agent.device.type != "cuda":
            raise ValueError(f"the CUDA graph back-end needs a CUDA device; this agent's networks are on {agent.device}")
        if agent.backend is not None:
            raise ValueError(f"the agent already has the {agent.backend.name} back-end")
        problem = capture_problem(agent)
        if problem:
            raise ValueError(f"the CUDA graph back-end cannot capture this update: {problem}")
        self.agent, self.warmup, self.capture, self.overlap = agent, warmup, capture, overlap
        self.name = "graph-overlap" if overlap else "graph"  # run.json's "learner"
        self.stale = False  # overlap: the acting copy is one learning step behind the actor
        self.cuda = agent.device.type == "cuda"
        self._set_capturable()
        agent.memory = DeviceReplayBuffer.wrap(agent.memory, agent.device)
        self.period = int(getattr(agent.config, "policy_delay", 1))  # graphs, one per phase
        self.graphs: list[torch.cuda.CUDAGraph] = []
        self.eager_updates = 0
        self._stream: torch.cuda.Stream | None = None  # the warm-up's and the capture's
        self.fallback: str | None = None  # why the capture failed, if it did
        if self.cuda:
            if agent.device.index is not None:
                torch.cuda.set_device(agent.device)  # captures and streams use the current device
            torch.cuda.manual_seed(agent.seed)  # the batches' draws: the same seed, the same run on one GPU
        self.acting: torch.nn.Module | None = None
        self.held: tuple[Any, ...] = ()  # what the graphs and the acting copy were made of (``captured_state``)
        self.recaptures = 0
        self._copy_actor()
        agent.backend = self

    # ------------------------------------------------------------ updates
    def learn_many(self, n_updates: int) -> None:
        """``n_updates`` updates, each on a fresh batch drawn on the GPU; the first learning step
        runs ``warmup`` of them eagerly and captures the graphs. No host synchronisation inside;
        with ``overlap`` it returns while they run, and the next call (one with no updates, in the
        schedule's pause, too) first hands their actor to the acting copy."""
        agent, memory = self.agent, self.agent.memory
        if self.stale:
            self._refresh_acting()  # waits for the last learning step's replays
        changed = self._changed()
        if changed:
            self._start_again(changed)
        if n_updates <= 0:
            return
        if memory.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        memory.flush()
        done = 0
        if self.capture and not self.graphs:
            done = self._eager(min(n_updates, self.warmup - self.eager_updates))
            if self.eager_updates >= self.warmup:
                self._capture_or_fall_back()
        for _ in range(done, n_updates):
            if self.graphs:
                self.graphs[agent.n_updates % self.period].replay()
                agent.n_updates += 1
            else:  # capture=False, or a capture that failed: the same update, eagerly
                self._one_update()
        if self.overlap:
            self.stale = True
        else:
            self._refresh_acting()

    def learn(self, experiences: tuple[torch.Tensor, ...]) -> None:
        """One update on a given batch: ``Agent.learn`` itself (eager, for tests and probes)."""
        self.agent.learn(experiences)

    def _one_update(self) -> None:
        self.agent.learn(self.agent.memory.draw())

    def _eager(self, n: int) -> int:
        """``n`` updates run eagerly on a side stream, as PyTorch asks before a capture; the capture
        then uses the same stream, so the math libraries' per-stream handles exist before it."""
        side = self._stream = self._stream or torch.cuda.Stream(self.agent.device)
        side.wait_stream(torch.cuda.current_stream(self.agent.device))
        with torch.cuda.stream(side):
            for _ in range(n):
                self._one_update()
        torch.cuda.current_stream(self.agent.device).wait_stream(side)
        self.eager_updates += n
        return n

    def _capture_or_fall_back(self) -> None:
        """Capture; should this PyTorch or GPU refuse, say why in one line and run eagerly from
        here on (``fallback`` keeps the reason, for the run's record and the benchmark)."""
        try:
            self._capture()
        except RuntimeError as exc:
            self.graphs, self.capture = [], False
            self.fallback = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            print(f"The CUDA graph capture failed ({self.fallback}); the updates run eagerly on the GPU instead",
                  file=sys.stderr)

    def _capture(self) -> None:
        """One graph per phase of the policy delay; capturing runs nothing, so the update count
        is set for each and put back."""
        agent = self.agent
        count = agent.n_updates
        torch.cuda.synchronize(agent.device)
        try:
            for phase in range(self.period):
                graph = torch.cuda.CUDAGraph()
                agent.n_updates = phase
                with torch.cuda.graph(graph, stream=self._stream):
                    self._one_update()
                self.graphs.append(graph)
        finally:
            agent.n_updates = count

    def _changed(self) -> str | None:
        """What the update reads that differs from what the graphs and the acting copy were made of
        (checked at the start of each learning step, so a capture later in it holds the same), in
        words, or None."""
        now = captured_state(self.agent)
        if now == self.held:
            return None
        names = ("the agent's class or methods", "the config", "the actor", "the critic", "the target actor",
                 "the target critic", "the actor's optimiser", "the critic's optimiser")
        return ", ".join(n for n, a, b in zip(names, now, self.held, strict=True) if a != b)

    def _start_again(self, changed: str) -> None:
        """Drop the graphs and the acting copy, made of what has changed: the next updates run eagerly
        and capture again, and acting copies the actor as it is now."""
        self.settle()
        had_graphs = bool(self.graphs)
        self.graphs, self.eager_updates = [], 0
        self.period = int(getattr(self.agent.config, "policy_delay", 1))  # a new policy_delay: as many graphs
        self._set_capturable()
        self._copy_actor()
        self.recaptures += 1
        print(f"Learner: {self.name} from update {self.agent.n_updates + 1}: {changed} changed since "
              + ("the update was captured, so it is captured again" if had_graphs else
                 "the acting copy was made, so it is made again"), file=sys.stderr)

    # ------------------------------------------------------------ acting
    def policy(self, states: np.ndarray) -> np.ndarray:
        """mu(s) on the CPU copy of the actor module (its own forward), or on the GPU for a variant's
        actor, whose modes or noise live there."""
        if self.acting is not None:
            with torch.no_grad():
                return self.acting(torch.from_numpy(states)).numpy()
        with torch.no_grad():
            return self.agent.actor_local(torch.from_numpy(states).to(self.agent.device)).cpu().numpy()

    def actor(self) -> torch.nn.Module:
        """The module acting runs: the CPU copy, or the actor itself where it acts where it learns."""
        return self.acting if self.acting is not None else self.agent.actor_local

    def weights_loaded(self) -> None:
        self._refresh_acting()  # checkpoints were loaded into the networks

    def _copy_actor(self) -> None:
        """The acting copy: the actor module itself, copied to the CPU in evaluation mode, when it is a
        plain one (a variant's actor, with batch norm's modes or NoisyNet's noise, acts where it learns)."""
        plain = not any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) or type(m).__module__.startswith("ddpg.")
                        for m in self.agent.actor_local.modules())
        self.acting = copy.deepcopy(self.agent.actor_local).cpu().eval() if plain else None
        self.held = captured_state(self.agent)
        self.stale = False

    def _refresh_acting(self) -> None:
        self.stale = False
        if self.acting is not None:
            with torch.no_grad():
                for mine, learned in zip(self.acting.parameters(), self.agent.actor_local.parameters(), strict=True):
                    mine.copy_(learned)

    # ------------------------------------------------------------ the agent's state
    def settle(self) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.agent.device)  # the last replays have finished

    def store_optimizers(self) -> None:
        pass  # the agent's own Adam objects are the ones the graph steps

    def extra_state(self) -> dict[str, Any] | None:
        """CUDA's generator, which draws the batches (the buffer's CPU generator draws none here;
        run eagerly on the CPU, torch's own generator draws them, which the run folder keeps), and
        with ``overlap`` an acting copy that is a learning step behind, as the next steps act with it."""
        extra: dict[str, Any] = {}
        if self.cuda:
            extra["cuda_rng"] = torch.cuda.get_rng_state(self.agent.device)
        if self.stale and self.acting is not None:
            extra["acting"] = {k: v.clone() for k, v in self.acting.state_dict().items()}
        return extra or None

    def loaded(self, extra: dict[str, Any] | None) -> None:
        """After the agent took back a training state: the rows go to the GPU again, the acting
        copy follows the weights, and Adam stays capturable (a CPU run saved it otherwise)."""
        self.agent.memory.mark_all()
        self._set_capturable()
        if self.cuda and extra and "cuda_rng" in extra:
            torch.cuda.set_rng_state(extra["cuda_rng"], self.agent.device)
        self._refresh_acting()
        if self.overlap and extra and "acting" in extra and self.acting is not None:
            self.acting.load_state_dict(extra["acting"])  # copies into the tensors the pass reads
            self.stale = True

    def _set_capturable(self) -> None:
        """Adam's step count a device tensor, so that ``step()`` reads nothing back from the GPU."""
        for opt in (self.agent.actor_optimizer, self.agent.critic_optimizer):
            for group in opt.param_groups:
                group["capturable"] = self.cuda


def _module_state(module: torch.nn.Module) -> tuple[Any, ...]:
    """What a captured graph holds of a module: its submodules' classes, modes and hooks, and its
    parameters' tensors (identity and storage), ``requires_grad`` and hooks."""
    modules = tuple((name, type(m), m.training, len(m._forward_hooks), len(m._forward_pre_hooks),
                     len(m._backward_hooks), len(getattr(m, "_parametrizations", ()) or ()))
                    for name, m in module.named_modules())
    params = tuple((name, id(p), p.data_ptr(), tuple(p.shape), p.requires_grad, len(p._backward_hooks or {}),
                    len(getattr(p, "_post_accumulate_grad_hooks", None) or {}))
                   for name, p in module.named_parameters())
    return id(module), modules, params


def _optimizer_state(optimizer: torch.optim.Optimizer) -> tuple[Any, ...]:
    groups = tuple((tuple(id(p) for p in g["params"]), tuple(sorted((k, repr(v)) for k, v in g.items() if k != "params")))
                   for g in optimizer.param_groups)
    return id(optimizer), type(optimizer), groups


def captured_state(agent: Agent) -> tuple[Any, ...]:
    """What a captured update depends on beyond its code, to compare before each learning step."""
    methods = tuple(sorted(k for k, v in vars(agent).items() if callable(v) and not isinstance(v, torch.nn.Module)))
    config = tuple(sorted((k, repr(v)) for k, v in vars(agent.config).items()))
    return ((type(agent), methods), config, *(_module_state(m) for m in (agent.actor_local, agent.critic_local,
                                                                          agent.actor_target, agent.critic_target)),
            _optimizer_state(agent.actor_optimizer), _optimizer_state(agent.critic_optimizer))


def capture_problem(agent: Agent) -> str | None:
    """Why the agent's update cannot be captured as a CUDA graph, or None when it can."""
    problems = registry.capture_problems(agent.config)  # the variants' entries say what it cannot capture
    return problems[0] if problems else None


__all__ = ["WARMUP", "CudaGraph", "DeviceReplayBuffer", "capture_problem", "captured_state"]
