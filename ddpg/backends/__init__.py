"""How an agent's updates run: its own autograd code, or a back-end computing the same update faster.

One agent (``ddpg_agent.Agent``, or ``variants.VariantAgent``) holds the networks, optimisers,
buffer, n-step returns, noise and state; a back-end, when attached (``agent.backend``), runs its
``learn_many`` and ``policy``. The learners are ``LEARNER_ROWS`` below, one entry each: what runs the
update and what it serves (docs/training.md's table is made from them by ``make docs``).

``auto`` (train.py's default) takes the fastest that serves the agent: ``graph-overlap`` on CUDA
(its delay measured harmless: docs/training.md, "What each device costs, measured"), ``fast`` on
the CPU where it computes the loaded code, else ``readable``, with one line that says why.

What you edit runs. The graph back-ends capture ``Agent.learn`` itself, so an edit of the agent or
its networks is what they replay. The fast learner restates the update by hand, so it is admitted
only for the exact code it was written from (``admission``: a fingerprint of each part it restates,
as the agent will call it, against the record beside it) and, on copies, after a numerical check
(``proof``) for what no fingerprint sees. Anything else runs on the readable learner, and
``--learner fast`` is refused. Every run names its learner in one line.
"""

from __future__ import annotations

import torch

from ddpg.backends.cuda_graph import CudaGraph, capture_problem
from ddpg.backends.fast_cpu import FastCPU, supports
from ddpg.backends.fast_steps import FastSteps
from ddpg.backends.guard import READABLE
from ddpg.backends.proof import fast_cpu_differs
from ddpg.backends.restated import DECISIONS
from ddpg.options import GPU_LEARNERS, LEARNERS
from ddpg.variants import compose, registry
from ddpg.variants.config import variants_of
from ddpg_agent import Agent


def choose(agent: Agent, learner: str = "auto") -> tuple[str, str | None]:
    """The learner that runs ``agent``'s updates, and why when ``auto`` could not take the fastest
    (for a line on the console); ValueError, one line, when the learner asked for cannot serve it,
    or when no learner would run what the agent's code says (``refusal``)."""
    if learner not in LEARNERS:
        raise ValueError(f"--learner: expected one of {', '.join(LEARNERS)}, got {learner!r}")
    refused = refusal(agent)
    if refused:
        raise ValueError(refused)
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
            raise ValueError(f"--learner fast refuses this agent: {problem}; the readable learner runs it "
                             "(--learner auto or readable)")
        return "readable", problem
    if learner == "auto":
        return "graph-overlap", None
    if learner in GPU_LEARNERS and not cuda:
        raise ValueError(f"--learner {learner} captures the update as a CUDA graph: it needs --device cuda")
    return learner, None


def refusal(agent: Agent) -> str | None:
    """Why no learner would run what this agent's code says, in one line, or None: torch's default
    dtype is not the float32 that ddpg_agent.py acts and learns in, or ddpg_agent.py edits a part of
    the update that a switched-on variant replaces (the edit would never run)."""
    if torch.get_default_dtype() is not torch.float32:
        return (f"torch's default dtype is {torch.get_default_dtype()}, and ddpg_agent.py acts and learns in float32 "
                "(its act casts the states): call torch.set_default_dtype(torch.float32) before building the agent")
    replaced = compose.replaced_parts(type(agent))
    if not replaced:
        return None
    from ddpg.backends import admission

    try:
        record = admission.read_record()["parts"]
    except (OSError, ValueError, KeyError):
        return None
    for part, (where, switch) in replaced.items():
        label = f"Agent.{part}"
        try:
            edited = admission.fingerprint(Agent.__dict__[part], label) not in record.get(label, [])
        except admission.Differs:
            edited = True
        if edited:
            return (f"your edit of {label} in ddpg_agent.py would not run with {switch}: {where} replaces it; "
                    f"make the edit there, or turn {switch} off")
    return None


def fast_cpu_problem(agent: Agent) -> str | None:
    """Why the fast CPU learner cannot run this agent's updates, or None when it computes them: the
    code it restates must be the code it was written from (``admission``), the networks of the shapes
    it takes (``supports``), and, on copies, its update must match the agent's own to rounding
    (``proof``: what a fingerprint cannot see, such as a patched library function). Never raises."""
    from ddpg.backends import admission  # here: python -m ddpg.backends.admission runs it as __main__

    try:
        switched_on = sorted(set(variants_of(agent.config)) - registry.data_only())
        if switched_on:
            return f"the fast learner restates plain DDPG, and this agent has the variants {', '.join(switched_on)}"
        edited = admission.differences(agent)
        if edited is not None:
            return edited
        if not supports(agent):
            return "the fast learner takes model.py's three-layer actor and critic, and these networks have other layers"
        differs = fast_cpu_differs(agent)
    except Exception as exc:  # whatever the check meets, the readable learner runs the code as it is
        return f"the fast learner's check could not run on this agent ({type(exc).__name__}: {exc})"
    if differs is None:
        return None
    return f"{differs} differs from what the fast CPU learner computes, on copies of the agent"


def fast_steps_problem(agent: Agent) -> str | None:
    """Why the training loop cannot take ``fast_steps.FastSteps`` for this agent's acting and storing,
    or None: a plain ``Agent`` (no variant: a data-only one wraps ``step``) whose ``act``, ``step``,
    noise, n-step returns and buffer ``add`` are the code it restates (``restated.PARTS``)."""
    from ddpg.backends import admission

    if variants_of(agent.config):
        return "a variant's pieces wrap them"
    return admission.differences(agent, path=DECISIONS)


DECIDES = ("Acting and storing (the noise, the n-step returns, the buffer's rows) are ddpg_agent.py's code, unchanged, "
           "computed by ddpg/backends/fast_steps.py")
# Each learner (ddpg.options.LEARNERS but auto): its line at attach, what runs its update, what it serves.
LEARNER_ROWS: dict[str, tuple[str, str, str]] = {
    "readable": ("The update of ddpg_agent.py as loaded, by autograd (--learner readable)",
                 "`Agent.learn` itself, eagerly (autograd)", "any device, any network, every variant"),
    "fast": ("Its update is ddpg_agent.py's and model.py's code, unchanged, computed by the hand-written CPU learner "
             "(ddpg/backends/fast_cpu.py)",
             "`ddpg/backends/fast_cpu.py`: the same update by hand on flat parameters shared with the agent's own "
             "objects (the critic's layer norm through ATen's own kernels, the ones `nn.LayerNorm` runs), split over "
             "two threads; acting through the actor's forward pass written out into preallocated buffers (bitwise the "
             "actions of the `nn.Module` call)",
             "the CPU, `model.py`'s networks, no variant, and only for the exact code it restates, proven on copies at "
             "attach time to compute the loaded code's acting and update, and while the agent holds what it was "
             "admitted for (checked at every entry)"),
    "graph": ("The update of ddpg_agent.py as loaded, captured as a CUDA graph and replayed",
              "`ddpg/backends/cuda_graph.py`: `Agent.learn` itself captured once as a CUDA graph and replayed; the "
              "buffer copied to the GPU once per learning step, batches drawn there; acting on a CPU copy of the actor",
              "CUDA; every variant but prioritized replay and NoisyNet (their sum tree and noise generator live on the "
              "host)"),
    "graph-overlap": ("The update of ddpg_agent.py as loaded, captured as a CUDA graph, replayed while the environment "
                      "steps (acting one learning step behind)",
                      "the same, but `learn_many` returns while the GPU replays, and the acting copy takes the new actor "
                      "at the start of the next learning step: the environment steps while the GPU learns, and the arms "
                      "act with the actor one learning step old (a different run from `graph`'s, deterministic on one "
                      "GPU, exact on resume)", "as `graph`"),
}
SAYS = {name: says for name, (says, _, _) in LEARNER_ROWS.items()}


def runs(agent: Agent) -> str:
    """The code the agent's update runs beyond ddpg_agent.py's, for the learner's line: each variant's
    parts, by the file they are in ("" for a plain agent)."""
    pieces = compose.variant_parts(type(agent))
    if not pieces:
        return ""
    return ", with " + "; ".join(f"{', '.join(parts)} from {file}" for file, parts in pieces.items())


def attach(agent: Agent, learner: str = "auto", threads: int = 2) -> str:
    """Attach the back-end ``choose`` picks (nothing for ``readable``) and return its name, with one
    line that names it and, when ``auto`` could not take the fastest, why (the notebook's
    ``attach(agent)`` too)."""
    name, why = choose(agent, learner)
    line = (f"Learner: {name}. {why[0].upper()}{why[1:]}, so {READABLE}{runs(agent)}." if why
            else f"Learner: {name}. {SAYS[name]}{runs(agent)}.")
    if name == "fast":
        backend = FastCPU(agent, threads=threads)
        not_decisions = fast_steps_problem(agent)
        backend.decisions = FastSteps(agent) if not_decisions is None else None
        line += (f" {DECIDES}." if not_decisions is None else
                 f" Acting and storing run ddpg_agent.py's code as loaded: {not_decisions}.")
    print(line)
    if name in GPU_LEARNERS:
        CudaGraph(agent, overlap=name == "graph-overlap")
    return name


__all__ = ["GPU_LEARNERS", "LEARNERS", "LEARNER_ROWS", "CudaGraph", "FastCPU", "FastSteps", "attach", "choose", "fast_cpu_problem",
           "fast_steps_problem", "refusal", "runs"]
