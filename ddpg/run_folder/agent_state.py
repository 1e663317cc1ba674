"""An agent's training state: what it saves to continue exactly where it stopped, and how it
takes it back.

The package builds on the course's agent (``ddpg_agent.Agent``), which knows nothing of it:
``capture(agent)`` and ``restore(agent, state)`` read and write its attributes, and the run
folder (``ddpg.run_folder``) only writes and reads the files. A variant whose state differs says so
by a hook of its own (``buffer_extra_state``: a variant buffer's priorities); an update
back-end (``ddpg.backends``) keeps the agent's own objects up to date before a save
(``settle``) and takes them back after a load (``loaded``), so the state has one layout
whichever back-end and device wrote it: a run resumes on any of them. Every tensor is saved on
the CPU, so a run trained on a GPU loads where there is none.

The dictionary is the layout of ``training_state.pt`` since it was first written, so runs
saved by earlier versions still resume (the fast learner's one flat Adam state included).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ddpg.run_folder.checkpoints import layer_mismatch, on_cpu, tensor_state

NETWORKS = ("actor_local", "actor_target", "critic_local", "critic_target")


def adam_states_from_flat(optimizers: tuple[torch.optim.Optimizer, ...], exp_avg: torch.Tensor,
                          exp_avg_sq: torch.Tensor, t: int) -> list[dict[torch.Tensor, dict[str, torch.Tensor]]]:
    """Flat Adam moments over the optimisers' parameters in order ([actor | critic]) and one step
    count, as each ``torch.optim.Adam``'s per-parameter state after those ``t`` steps (none
    before the first): the fast back-end's layout in torch's."""
    states, offset = [], 0
    for opt in optimizers:
        per_parameter = {}
        for p in opt.param_groups[0]["params"]:
            n = p.numel()
            if t > 0:
                per_parameter[p] = {"step": torch.tensor(float(t), dtype=torch.float32),
                                    "exp_avg": exp_avg[offset:offset + n].view_as(p).clone(),
                                    "exp_avg_sq": exp_avg_sq[offset:offset + n].view_as(p).clone()}
            offset += n
        states.append(per_parameter)
    return states


def learner(agent: Any) -> str:
    """How the agent's updates run, as run.json's "learner" says: its back-end's name, or
    "readable" (``Agent.learn`` itself, autograd)."""
    return agent.backend.name if agent.backend is not None else "readable"


def network_shapes(agent: Any) -> dict[str, dict[str, list[int]]]:
    """The shape of every tensor of the actor's and the critic's state (weights, and batch norm's
    statistics where model.py has it): what a rebuilt agent must have to take the run's checkpoints."""
    return {net: {name: list(t.shape) for name, t in getattr(agent, f"{net}_local").state_dict().items()}
            for net in ("actor", "critic")}


def differing_shapes(agent: Any, recorded: dict[str, dict[str, list[int]]] | None) -> str | None:
    """None when the agent's networks have the recorded shapes (or there is no record); else the first
    difference (``checkpoints.layer_mismatch``'s one message)."""
    if not recorded:
        return None

    built = network_shapes(agent)
    for net in ("actor", "critic"):
        mismatch = layer_mismatch(recorded.get(net, {}), built[net], f"the run's {net}", "model.py's")
        if mismatch:
            return mismatch
    return None


def threads(agent: Any) -> int:
    """The threads PyTorch's operations use (train.py sets one: small matrices run fastest on one)."""
    return torch.get_num_threads()


def settle(agent: Any) -> None:
    """Wait for any update still running (the CUDA graph back-end's replays, the overlap back-end's
    worker) before a save, or before anything reads or changes the agent between rounds."""
    if agent.backend is not None:
        agent.backend.settle()
        agent.backend.store_optimizers()


def stepper(agent: Any) -> Callable[..., None]:
    """What the loop hands each decision's transitions to: ``agent.step``, or the back-end that runs
    it on its own thread in the same order (``ddpg/backends/overlap.py``)."""
    submit = getattr(agent.backend, "submit", None)
    return submit if submit is not None else agent.step


def optimizer_state(agent: Any) -> dict[str, Any]:
    """The optimisers' state: torch.optim.Adam's, on the CPU, whichever back-end ran them."""
    return {"actor": on_cpu(agent.actor_optimizer.state_dict()), "critic": on_cpu(agent.critic_optimizer.state_dict())}


def load_optimizer_state(agent: Any, state: dict[str, Any]) -> None:
    if "flat" in state:  # saved by the fast learner before it became a back-end
        state = _unflatten_adam(agent, state["flat"])
    for key, opt in (("actor", agent.actor_optimizer), ("critic", agent.critic_optimizer)):
        capturable = [group["capturable"] for group in opt.param_groups]  # this device's, not the saver's
        opt.load_state_dict(state[key])
        for group, flag in zip(opt.param_groups, capturable, strict=True):
            group["capturable"] = flag


def _unflatten_adam(agent: Any, flat: dict[str, Any]) -> dict[str, Any]:
    """The fast learner's one flat Adam state ([actor | critic] moments, one step count) as the
    two torch.optim.Adam states its steps equal."""
    optimizers = (agent.actor_optimizer, agent.critic_optimizer)
    out = {}
    for key, opt, states in zip(("actor", "critic"), optimizers, adam_states_from_flat(
            optimizers, flat["exp_avg"], flat["exp_avg_sq"], int(flat["t"])), strict=True):
        saved = opt.state_dict()
        saved["state"] = {i: states[p] for i, p in enumerate(opt.param_groups[0]["params"]) if p in states}
        out[key] = saved
    return out


def _buffer_extra_state(agent: Any) -> dict[str, Any] | None:
    """A variant's own state beyond the buffer's rows (prioritized replay's priorities), by its
    ``buffer_extra_state`` hook; the plain agent has none."""
    hook = getattr(agent, "buffer_extra_state", None)
    return hook() if hook is not None else None


def _load_buffer_extra_state(agent: Any, state: dict[str, Any], rows_restored: bool) -> None:
    hook = getattr(agent, "load_buffer_extra_state", None)
    if hook is None:
        raise ValueError(f"the saved replay buffer has a variant's state ({', '.join(state)}); this agent's "
                         "buffer has none: resume with the run's own settings")
    hook(state, rows_restored)


# ------------------------------------------------------------- the whole state
def capture(agent: Any, with_buffer: bool = False) -> dict[str, Any]:
    """Networks, optimisers, noise, n-step steps, counters and the buffer's position and
    generator; with ``with_buffer`` also ``"buffer_rows"``: its filled rows (about 300 MB at
    one million Reacher transitions), which the run folder keeps in a file of their own."""
    settle(agent)  # nothing of an update may still be running
    memory = agent.memory
    state: dict[str, Any] = {
        "networks": {name: tensor_state(getattr(agent, name)) for name in NETWORKS},
        "optimizer": optimizer_state(agent),
        "noise": {"state": torch.from_numpy(agent.noise.state.copy()), "scale": agent.noise.scale,
                  "rng": agent.noise.rng.bit_generator.state},
        "agent": {"t_step": agent.t_step, "n_updates": agent.n_updates, "learn_updates": agent.learn_updates},
        "n_step": {"steps": [[torch.from_numpy(np.array(x)) for x in step] for step in agent.returns.steps],
                   "last_states": torch.from_numpy(np.array(agent.returns.last_states)),
                   "pending": torch.from_numpy(np.array(agent.returns.pending))},
        "buffer": {"pos": memory.pos, "size": memory.size, "generator": memory.generator.get_state(),
                   "saved": with_buffer, "extra": _buffer_extra_state(agent)},
    }
    backend_state = agent.backend.extra_state() if agent.backend is not None else None
    if backend_state is not None:
        state["backend"] = backend_state  # the CUDA graph's random generator
    if with_buffer:
        # t_step ties the rows to this state: a process killed between writing the two
        # files leaves a pair that does not match, and the load then starts empty.
        state["buffer_rows"] = {"rows": memory.data[:memory.size].clone(), "capacity": memory.capacity,
                                "t_step": agent.t_step, "steps": torch.from_numpy(memory.steps[:memory.size].copy())}
    return state


def restore(agent: Any, state: dict[str, Any], buffer_rows: dict[str, Any] | None = None) -> bool:
    """Take back a ``capture``; ``buffer_rows`` is its ``"buffer_rows"`` when they were kept.
    Returns True when the buffer was restored too (the run then continues exactly, on the
    back-end and device that saved it); ValueError when it was saved for another buffer."""
    settle(agent)
    for name, tensors in state["networks"].items():
        getattr(agent, name).load_state_dict(tensors)
    load_optimizer_state(agent, state["optimizer"])
    noise = state["noise"]
    agent.noise.state = noise["state"].numpy().copy()
    agent.noise.scale = noise["scale"]
    agent.noise.rng.bit_generator.state = noise["rng"]
    counters = state["agent"]
    agent.t_step, agent.n_updates, agent.learn_updates = (counters["t_step"], counters["n_updates"],
                                                          counters["learn_updates"])
    buffer, memory = state["buffer"], agent.memory
    memory.generator.set_state(buffer["generator"])
    exact = bool(buffer["saved"]) and buffer_rows is not None and buffer_rows.get("t_step") == counters["t_step"]
    if exact:
        assert buffer_rows is not None
        rows = buffer_rows["rows"]
        if buffer_rows["capacity"] != memory.capacity or rows.shape[1] != memory.data.shape[1]:
            raise ValueError(f"the saved replay buffer is {buffer_rows['capacity']} x {rows.shape[1]}; the run's "
                             f"agent has {memory.capacity} x {memory.data.shape[1]}")
        memory.data[:len(rows)] = rows
        # the rows' rewards step by step (for a gamma changed later); saved before they were kept: not known
        steps = buffer_rows.get("steps")
        if steps is not None and steps.shape[1] != memory.steps.shape[1]:
            raise ValueError(f"the saved replay buffer's rows span up to {steps.shape[1] - 1} steps; the run's agent "
                             f"takes {memory.steps.shape[1] - 1}-step returns")
        memory.steps[:len(rows)] = 0.0 if steps is None else steps.numpy()
        memory.pos, memory.size = buffer["pos"], buffer["size"]
    extra = dict(buffer.get("extra") or {})
    pending = state.get("n_step") or _old_n_step(extra.pop("n_step", None))
    agent.returns.steps = [tuple(x.numpy().copy() for x in step) for step in pending["steps"]]
    agent.returns.last_states = pending["last_states"].numpy().copy()
    # Saved before arms could restart on their own: every arm has all the pending steps.
    agent.returns.pending = (pending["pending"].numpy().copy() if "pending" in pending
                             else np.full(len(agent.returns.last_states), len(agent.returns.steps), np.int64))
    if extra:
        _load_buffer_extra_state(agent, extra, rows_restored=exact)
    if agent.backend is not None:
        agent.backend.loaded(state.get("backend"))
    return exact


def _old_n_step(saved: dict[str, Any] | None) -> dict[str, Any]:
    """Pending n-step steps as runs before n-step returns joined ``ddpg_agent`` saved them
    (arrays of agents x steps, in the buffer's part); none for a one-step run."""
    if saved is None:
        return {"steps": [], "last_states": torch.zeros(0)}
    return {"steps": [[saved[name][:, j] for name in ("states", "actions", "rewards")] for j in range(saved["k"])],
            "last_states": saved["last_next"]}


__all__ = ["NETWORKS", "adam_states_from_flat", "capture", "differing_shapes", "learner", "load_optimizer_state",
           "network_shapes", "optimizer_state", "restore", "settle", "threads"]
