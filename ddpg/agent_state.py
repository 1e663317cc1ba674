"""An agent's training state: what it saves to continue exactly where it stopped, and how it
takes it back.

``ddpg_agent.Agent`` inherits ``TrainingState``, so every agent answers ``state_dict()`` and
``load_state_dict()`` itself, and the run folder (``ddpg.rundir``) only writes and reads the
files. A variant whose state differs says so by overriding a hook (a variant buffer's
priorities); an update back-end (``ddpg.backends``) keeps the agent's own objects up to date
before a save (``settle``) and takes them back after a load (``loaded``), so the state has one
layout whichever back-end and device wrote it: a run resumes on any of them. Every tensor is
saved on the CPU, so a run trained on a GPU loads where there is none.

The dictionary is the layout of ``training_state.pt`` since it was first written, so runs
saved by earlier versions still resume (the fast learner's one flat Adam state included).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

NETWORKS = ("actor_local", "actor_target", "critic_local", "critic_target")


def on_cpu(value: Any) -> Any:
    """``value`` with every tensor in it copied to the CPU (an optimiser's state on a GPU)."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
    if isinstance(value, dict):
        return {k: on_cpu(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(on_cpu(v) for v in value)
    return value


def tensor_state(module: nn.Module) -> dict[str, torch.Tensor]:
    """A state_dict of compact copies on the CPU (the fast back-end's tensors are views into one flat buffer)."""
    return on_cpu(dict(module.state_dict()))


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


class TrainingState:
    """Mixed into ``Agent``: the state a resumed run needs, beyond the replay buffer's rows."""

    # The attributes the agent defines (ddpg_agent.Agent.__init__).
    backend: Any
    actor_optimizer: torch.optim.Optimizer
    critic_optimizer: torch.optim.Optimizer
    noise: Any
    memory: Any
    returns: Any
    t_step: int
    n_updates: int
    learn_updates: int

    @property
    def learner(self) -> str:
        """How updates run, as run.json's "learner" says: the back-end's name, or "readable" (autograd)."""
        return self.backend.name if self.backend is not None else "readable"

    @property
    def threads(self) -> int:
        return getattr(self.backend, "threads", 1)  # the fast back-end's thread count

    # ------------------------------------------------------------- hooks
    def settle(self) -> None:
        """Wait for any part of an update still running (the fast back-end's helper thread) and let
        the back-end hand its state to the agent's own objects (the flat Adam's moments)."""
        if self.backend is not None:
            self.backend.settle()
            self.backend.store_optimizers()

    def optimizer_state(self) -> dict[str, Any]:
        """The optimisers' state: torch.optim.Adam's, on the CPU, whichever back-end ran them."""
        return {"actor": on_cpu(self.actor_optimizer.state_dict()), "critic": on_cpu(self.critic_optimizer.state_dict())}

    def load_optimizer_state(self, state: dict[str, Any]) -> None:
        if "flat" in state:  # saved by the fast learner before it became a back-end
            state = self._unflatten_adam(state["flat"])
        for key, opt in (("actor", self.actor_optimizer), ("critic", self.critic_optimizer)):
            capturable = [group["capturable"] for group in opt.param_groups]  # this device's, not the saver's
            opt.load_state_dict(state[key])
            for group, flag in zip(opt.param_groups, capturable, strict=True):
                group["capturable"] = flag

    def _unflatten_adam(self, flat: dict[str, Any]) -> dict[str, Any]:
        """The fast learner's one flat Adam state ([actor | critic] moments, one step count) as the
        two torch.optim.Adam states its steps equal."""
        optimizers = (self.actor_optimizer, self.critic_optimizer)
        out = {}
        for key, opt, states in zip(("actor", "critic"), optimizers, adam_states_from_flat(
                optimizers, flat["exp_avg"], flat["exp_avg_sq"], int(flat["t"])), strict=True):
            saved = opt.state_dict()
            saved["state"] = {i: states[p] for i, p in enumerate(opt.param_groups[0]["params"]) if p in states}
            out[key] = saved
        return out

    def buffer_extra_state(self) -> dict[str, Any] | None:
        """A replay variant's own state beyond the rows (prioritized replay: its priorities)."""
        return None

    def load_buffer_extra_state(self, state: dict[str, Any], rows_restored: bool) -> None:
        raise ValueError(f"the saved replay buffer has a variant's state ({', '.join(state)}); this agent's "
                         "buffer has none: resume with the run's own settings")

    # ------------------------------------------------------------- the whole state
    def state_dict(self, with_buffer: bool = False) -> dict[str, Any]:
        """Networks, optimisers, noise, n-step steps, counters and the buffer's position and
        generator; with ``with_buffer`` also ``"buffer_rows"``: its filled rows (about 290 MB at
        one million Reacher transitions), which the run folder keeps in a file of their own."""
        self.settle()  # nothing of an update may still be running
        memory = self.memory
        state: dict[str, Any] = {
            "networks": {name: tensor_state(getattr(self, name)) for name in NETWORKS},
            "optimizer": self.optimizer_state(),
            "noise": {"state": torch.from_numpy(self.noise.state.copy()), "scale": self.noise.scale,
                      "rng": self.noise.rng.bit_generator.state},
            "agent": {"t_step": self.t_step, "n_updates": self.n_updates, "learn_updates": self.learn_updates},
            "n_step": {"steps": [[torch.from_numpy(np.array(x)) for x in step] for step in self.returns.steps],
                       "last_states": torch.from_numpy(np.array(self.returns.last_states))},
            "buffer": {"pos": memory.pos, "size": memory.size, "generator": memory.generator.get_state(),
                       "saved": with_buffer, "extra": self.buffer_extra_state()},
        }
        backend_state = self.backend.extra_state() if self.backend is not None else None
        if backend_state is not None:
            state["backend"] = backend_state  # the CUDA graph's random generator
        if with_buffer:
            # t_step ties the rows to this state: a process killed between writing the two
            # files leaves a pair that does not match, and the load then starts empty.
            state["buffer_rows"] = {"rows": memory.data[:memory.size].clone(), "capacity": memory.capacity,
                                    "t_step": self.t_step}
        return state

    def load_state_dict(self, state: dict[str, Any], buffer_rows: dict[str, Any] | None = None) -> bool:
        """Take back a ``state_dict``; ``buffer_rows`` is its ``"buffer_rows"`` when they were kept.
        Returns True when the buffer was restored too (the run then continues exactly, on the
        back-end and device that saved it); ValueError when it was saved for another buffer."""
        self.settle()
        for name, tensors in state["networks"].items():
            getattr(self, name).load_state_dict(tensors)
        self.load_optimizer_state(state["optimizer"])
        noise = state["noise"]
        self.noise.state = noise["state"].numpy().copy()
        self.noise.scale = noise["scale"]
        self.noise.rng.bit_generator.state = noise["rng"]
        counters = state["agent"]
        self.t_step, self.n_updates, self.learn_updates = counters["t_step"], counters["n_updates"], counters["learn_updates"]
        buffer, memory = state["buffer"], self.memory
        memory.generator.set_state(buffer["generator"])
        exact = bool(buffer["saved"]) and buffer_rows is not None and buffer_rows.get("t_step") == counters["t_step"]
        if exact:
            assert buffer_rows is not None
            rows = buffer_rows["rows"]
            if buffer_rows["capacity"] != memory.capacity or rows.shape[1] != memory.data.shape[1]:
                raise ValueError(f"the saved replay buffer is {buffer_rows['capacity']} x {rows.shape[1]}; the run's "
                                 f"agent has {memory.capacity} x {memory.data.shape[1]}")
            memory.data[:len(rows)] = rows
            memory.pos, memory.size = buffer["pos"], buffer["size"]
        extra = dict(buffer.get("extra") or {})
        pending = state.get("n_step") or _old_n_step(extra.pop("n_step", None))
        self.returns.steps = [tuple(x.numpy().copy() for x in step) for step in pending["steps"]]
        self.returns.last_states = pending["last_states"].numpy().copy()
        if extra:
            self.load_buffer_extra_state(extra, rows_restored=exact)
        if self.backend is not None:
            self.backend.loaded(state.get("backend"))
        return exact


def _old_n_step(saved: dict[str, Any] | None) -> dict[str, Any]:
    """Pending n-step steps as runs before n-step returns joined ``ddpg_agent`` saved them
    (arrays of agents x steps, in the buffer's part); none for a one-step run."""
    if saved is None:
        return {"steps": [], "last_states": torch.zeros(0)}
    return {"steps": [[saved[name][:, j] for name in ("states", "actions", "rewards")] for j in range(saved["k"])],
            "last_states": saved["last_next"]}


__all__ = ["NETWORKS", "TrainingState", "adam_states_from_flat", "on_cpu", "tensor_state"]
