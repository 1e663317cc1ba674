"""How an agent's updates run: its own autograd code, or a back-end computing the same update faster.

One agent (``ddpg_agent.Agent``, or ``variants.VariantAgent``) holds the networks, optimisers,
buffer, n-step returns, noise and state; a back-end, when attached (``agent.backend``), runs its
``learn_many`` and ``policy``:

=============  ======================================  ==================================
learner        runs                                    serves
=============  ======================================  ==================================
``readable``   ``Agent.learn``, eagerly (autograd)     any device, any network, every variant
``fast``       ``fast_cpu.FastCPU``: the update by      the CPU, ``model.py``'s networks, no
               hand on flat tensors, two threads       variant (proven equal per update)
``graph``      ``cuda_graph.CudaGraph``: ``Agent.learn``  CUDA, every variant but prioritized
               captured once as a CUDA graph           replay and NoisyNet (proven equal per
                                                       update where a GPU is present)
``graph-       the same, its replays left running      as ``graph``; acting one learning
overlap``      while the environment steps             step behind (a different run)
=============  ======================================  ==================================

``auto`` (train.py's default) takes the fastest that serves the agent: ``graph-overlap`` on CUDA
(its delay measured harmless: docs/training.md, "What each device costs, measured"), ``fast`` on
the CPU where it computes the loaded code, else ``readable``, with one line that says why.

What you edit runs. The graph back-ends capture ``Agent.learn`` itself, so an edit of the agent or
its networks is what they replay. The fast learner restates the update by hand, so it is admitted
only after proving, on copies, that it computes what the loaded code computes (``proof``): an
edited ``Actor.forward``, ``Critic.forward``, ``td_target``, ``learn`` or ``optimise`` (by hand, a
subclass or a monkeypatch) sends ``auto`` to the readable learner, and ``--learner fast`` is refused.
"""

from __future__ import annotations

from ddpg.backends.cuda_graph import CudaGraph, capture_problem
from ddpg.backends.fast_cpu import FastCPU, supports
from ddpg.backends.proof import fast_cpu_differs
from ddpg.options import GPU_LEARNERS, LEARNERS
from ddpg.variants import registry
from ddpg.variants.config import variants_of
from ddpg_agent import Agent


def choose(agent: Agent, learner: str = "auto") -> tuple[str, str | None]:
    """The learner that runs ``agent``'s updates, and why when ``auto`` could not take the fastest
    (for a line on the console); ValueError, one line, when the learner asked for cannot serve it."""
    if learner not in LEARNERS:
        raise ValueError(f"--learner: expected one of {', '.join(LEARNERS)}, got {learner!r}")
    cuda = agent.device.type == "cuda"
    problem = capture_problem(agent) if cuda else None
    if problem:
        raise ValueError(f"this agent's variants run on the CPU only: {problem}; use --device cpu")
    if learner == "fast" and cuda:
        raise ValueError("--learner fast is the CPU's hand-written update; on CUDA use --learner graph (or auto)")
    if learner in ("auto", "fast") and not cuda:
        problem = fast_cpu_problem(agent)
        if problem is None:
            return "fast", None
        if learner == "fast":
            raise ValueError(f"--learner fast: {problem}; use --learner auto or readable")
        return "readable", problem
    if learner == "auto":
        return "graph-overlap", None
    if learner in GPU_LEARNERS and not cuda:
        raise ValueError(f"--learner {learner} captures the update as a CUDA graph: it needs --device cuda")
    return learner, None


def fast_cpu_problem(agent: Agent) -> str | None:
    """Why the fast CPU learner cannot run this agent's updates, or None when it computes them."""
    if not supports(agent):
        switched_on = sorted(set(variants_of(agent.config)) - registry.data_only())
        return "the fast learner serves model.py's networks with no variant" + (
            f" (this agent has {', '.join(switched_on)})" if switched_on else "")
    differs = fast_cpu_differs(agent)
    if differs is None:
        return None
    return (f"{differs} differs from what the fast CPU learner computes, so the readable learner runs it "
            "(autograd: slower per update, docs/training.md)")


def attach(agent: Agent, learner: str = "auto", threads: int = 2) -> str:
    """Attach the back-end ``choose`` picks (nothing for ``readable``) and return its name; when
    ``auto`` cannot take the fastest, one line says why (the notebook's ``attach(agent)`` too)."""
    name, why = choose(agent, learner)
    if why:
        print(f"Learner: readable. {why[0].upper()}{why[1:]}")
    if name == "fast":
        FastCPU(agent, threads=threads)
    elif name in GPU_LEARNERS:
        CudaGraph(agent, overlap=name == "graph-overlap")
    return name


__all__ = ["GPU_LEARNERS", "LEARNERS", "CudaGraph", "FastCPU", "attach", "choose", "fast_cpu_problem"]
