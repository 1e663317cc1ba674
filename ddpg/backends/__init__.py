"""How an agent's updates run: its own code, eagerly, on a second CPU thread, or on CUDA that same
code captured as a CUDA graph.

One agent (``ddpg_agent.Agent``, or ``variants.VariantAgent``) holds the networks, optimisers,
buffer, n-step returns, noise and state. On the CPU nothing is attached: training calls
``Agent.act``, ``Agent.step`` and ``Agent.learn`` with the agent's own modules and optimisers,
so any change a learner makes, to the code or to the objects at run time, is what runs. On a
CUDA device a back-end (``agent.backend``) captures ``Agent.learn`` itself as a CUDA graph and
replays it, capturing again when what it captured changes (``cuda_graph``). On the CPU, ``overlap``
(asked for by name) runs each decision's ``Agent.step`` and its learning on a worker thread while
the environment steps, acting on a copy of the actor (``overlap``). The learners are
``LEARNER_ROWS`` below, one entry each (docs/training.md's table is made from them by ``make docs``).

``auto`` (train.py's default) takes ``readable`` on the CPU and ``graph-overlap`` on CUDA (its
delay measured harmless: docs/training.md, "What each device costs, measured"). Every run names its
learner in one line.
"""

from __future__ import annotations

import torch

from ddpg.backends.cuda_graph import CudaGraph, capture_problem
from ddpg.backends.overlap import Overlap, overlap_problem
from ddpg.command_line.options import GPU_LEARNERS, LEARNERS
from ddpg.variants import compose
from ddpg_agent import Agent


def choose(agent: Agent, learner: str = "auto") -> str:
    """The learner that runs ``agent``'s updates; ValueError, one line, when the learner asked for
    cannot serve it, or when no learner would run what the agent's code says (``refusal``)."""
    if learner not in LEARNERS:
        raise ValueError(f"--learner: expected one of {', '.join(LEARNERS)}, got {learner!r}")
    refused = refusal(agent)
    if refused:
        raise ValueError(refused)
    cuda = agent.device.type == "cuda"
    problem = capture_problem(agent) if cuda else None
    if problem:
        raise ValueError(f"this agent's variants run on the CPU only: {problem}; use --device cpu")
    if learner == "auto":
        return "graph-overlap" if cuda else "readable"
    if learner in GPU_LEARNERS and not cuda:
        raise ValueError(f"--learner {learner} captures the update as a CUDA graph: it needs --device cuda")
    if learner == "overlap" and overlap_problem(agent):
        raise ValueError(overlap_problem(agent))
    return learner


def refusal(agent: Agent) -> str | None:
    """Why no learner would run what this agent's code says, in one line, or None: torch's default
    dtype is not the float32 that ddpg_agent.py acts and learns in."""
    if torch.get_default_dtype() is not torch.float32:
        return (f"torch's default dtype is {torch.get_default_dtype()}, and ddpg_agent.py acts and learns in float32 "
                "(its act casts the states): call torch.set_default_dtype(torch.float32) before building the agent")
    return None


# Each learner (ddpg.command_line.options.LEARNERS but auto): its line at attach, what runs its update, what it serves.
LEARNER_ROWS: dict[str, tuple[str, str, str]] = {
    "readable": ("The update of ddpg_agent.py as loaded, on the agent's own networks and optimisers (autograd)",
                 "`Agent.learn` itself, eagerly (autograd), on the agent's own modules and optimisers",
                 "any device, any network, every variant; `auto` on the CPU"),
    "graph": ("The update of ddpg_agent.py as loaded, captured as a CUDA graph and replayed (captured again when the "
              "networks or optimisers change)",
              "`ddpg/backends/cuda_graph.py`: `Agent.learn` itself captured as a CUDA graph and replayed, captured "
              "again when what it holds changes; the buffer copied to the GPU once per learning step, batches drawn "
              "there; acting on a CPU copy of the actor module",
              "CUDA; every variant but prioritized replay and NoisyNet (their sum tree and noise generator live on the "
              "host) and obs_norm (its statistics change at every step)"),
    "graph-overlap": ("The update of ddpg_agent.py as loaded, captured as a CUDA graph, replayed while the environment "
                      "steps (acting one learning step behind)",
                      "the same, but `learn_many` returns while the GPU replays, and the acting copy takes the new actor "
                      "at the start of the next learning step: the environment steps while the GPU learns, and the arms "
                      "act with the actor one learning step old (a different run from `graph`'s, deterministic on one "
                      "GPU, exact on resume)", "as `graph`; `auto` on CUDA"),
    "overlap": ("The update of ddpg_agent.py as loaded, on the agent's own networks and optimisers (autograd), on a "
                "second thread while the environment steps (acting one learning step behind)",
                "`ddpg/backends/overlap.py`: each decision's `Agent.step`, learning steps included, on a worker thread "
                "in the order the decisions came, while the main thread steps the environment and acts on a copy of "
                "the actor taken at the start of each learning step (a different run from `readable`'s, deterministic, "
                "exact on resume)", "the CPU; every variant but NoisyNet (its acting draws from PyTorch's generator)"),
}
SAYS = {name: says for name, (says, _, _) in LEARNER_ROWS.items()}


def runs(agent: Agent) -> str:
    """The code the agent's update runs beyond ddpg_agent.py's, for the learner's line: each variant's
    parts, by the file they are in ("" for a plain agent)."""
    pieces = compose.variant_parts(type(agent))
    if not pieces:
        return ""
    return ", with " + "; ".join(f"{', '.join(parts)} from {file}" for file, parts in pieces.items())


def attach(agent: Agent, learner: str = "auto") -> str:
    """Attach what ``choose`` picks (nothing for ``readable``) and return its name, with one line that
    names it (the notebook's ``attach(agent)`` too). An agent attached once keeps its learner: a
    second attach is refused rather than leaving two back-ends, or a line that says what does not run."""
    if agent.backend is not None:
        raise ValueError(f"this agent already runs on the {agent.backend.name} learner; build a new agent "
                         "for another learner")
    name = choose(agent, learner)
    print(f"Learner: {name}. {SAYS[name]}{runs(agent)}.")
    if name in GPU_LEARNERS:
        CudaGraph(agent, overlap=name == "graph-overlap")
    elif name == "overlap":
        Overlap(agent)
    return name


__all__ = ["GPU_LEARNERS", "LEARNERS", "LEARNER_ROWS", "CudaGraph", "Overlap", "attach", "choose", "refusal", "runs"]
