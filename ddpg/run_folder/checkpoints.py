"""The checkpoints, checkpoint_actor.pth and checkpoint_critic.pth: plain state_dicts of the local
actor and critic, loadable exactly as in the course (``net.load_state_dict(torch.load(f))``).

Written and read here only; the helpers that compare a saved network's layers with an agent's
(``layer_mismatch``, ``layer_sizes``) and read a file saved by ``torch.save`` (``read_torch_file``)
serve the training state too (``ddpg.run_folder.run_state``), whose networks are state_dicts as well.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ddpg.run_folder.atomic import atomic_write
from ddpg.run_folder.file_names import RECORD_FILE
from ddpg_agent import Agent


class NetworkMismatch(ValueError):
    """A checkpoint whose layers are not the agent's: ``saved`` and ``expected`` say both. The
    message suits an agent built by hand; ``for_run`` says it for an agent built from a run's
    run.json, where rebuilding it from run.json is what already happened."""

    def __init__(self, path: str | os.PathLike[str], saved: dict[str, Any], expected: dict[str, Any]) -> None:
        self.path, self.saved, self.expected = Path(path), saved, expected
        norm = obs_norm_mismatch(saved, expected)
        super().__init__(f"checkpoint {os.fspath(path)} does not match the network: " + (
            f"{norm} (a run folder's {RECORD_FILE} records it: watch.py --run DIR)" if norm else
            f"{layer_mismatch(saved, expected, 'it', 'the agent')}; build the agent with the checkpoint's "
            f"sizes (a run folder's {RECORD_FILE} records them: watch.py --run DIR)"))

    def for_run(self, run: str | os.PathLike[str]) -> str:
        """One line for a run's own checkpoint that its run.json no longer builds: what differs, and what to do."""
        mismatch = layer_mismatch(self.saved, self.expected, f"its {self.path.name}", f"its {RECORD_FILE} with model.py as it is now")
        return (f"{run}: {mismatch}: model.py's layer sizes (or {RECORD_FILE}'s config) changed since "
                f"the run trained; put them back as they were, or set actor_fc1, actor_fc2, critic_fc1 and critic_fc2 "
                f"in {RECORD_FILE}'s config to the saved sizes")


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
    """A state_dict of compact copies on the CPU (a module's may share storage, or live on a GPU)."""
    return on_cpu(dict(module.state_dict()))


def save_checkpoints(agent: Agent, actor_path: str | os.PathLike[str],
                     critic_path: str | os.PathLike[str]) -> None:
    """The local actor's and critic's state_dicts, in the course's file format."""
    write_checkpoints(tensor_state(agent.actor_local), tensor_state(agent.critic_local), actor_path, critic_path)


def write_checkpoints(actor: dict[str, torch.Tensor], critic: dict[str, torch.Tensor],
                      actor_path: str | os.PathLike[str], critic_path: str | os.PathLike[str]) -> None:
    """Two state_dicts (the networks now, or as a training state kept them) as the checkpoints."""
    for state, path in ((actor, actor_path), (critic, critic_path)):
        atomic_write(path, lambda fh, state=state: torch.save(state, fh))


LAYER_NORM_KEY = "ln1"  # model.Critic's first layer norm: in a critic's state_dict when it has layer norm


def layer_sizes(state: dict[str, torch.Tensor]) -> str:
    """'fc1 33->128, fc2 128->128, ...' from the weight matrices of a state_dict (', layer norm'
    when it has model.Critic's)."""
    dims = {k: list(getattr(v, "shape", v)) for k, v in state.items()}
    sizes = ", ".join(f"{k[:-len('.weight')]} {d[1]}->{d[0]}" for k, d in dims.items() if k.endswith(".weight") and len(d) == 2)
    return sizes + (", layer norm" if f"{LAYER_NORM_KEY}.weight" in state else "") + (
        ", obs norm" if any(k.split(".")[-2:-1] == ["obs_norm"] for k in state) else "")


def layer_mismatch(saved: Mapping[str, Any], built: Mapping[str, Any], saved_as: str, built_as: str) -> str | None:
    """The one comparison of two networks' layers: a state_dict, or run.json's recorded shapes (lists),
    against what an agent builds. None when they have the same tensors of the same shapes; else one
    phrase naming the first tensor that differs (in name order), then both networks' layers:
    ``it has fc1.weight 64x33 where the agent has 128x33 (layers [fc1 33->64, ...] against [...])``.
    ``--resume``, ``watch.py``, ``evaluate.py``, the training state and checkpoint loading all ask it."""
    def shape(value: Any) -> list[int] | None:
        return None if value is None else [int(n) for n in getattr(value, "shape", value)]

    def said(dims: list[int] | None) -> str:
        return "no such tensor" if dims is None else "x".join(map(str, dims)) or "a scalar"

    for name in sorted(set(saved) | set(built)):
        mine, theirs = shape(saved.get(name)), shape(built.get(name))
        if mine != theirs:
            return (f"{saved_as} has {name} {said(mine)} where {built_as} has {said(theirs)} "
                    f"(layers [{layer_sizes(saved)}] against [{layer_sizes(built)}])")
    return None


def is_state_dict(value: Any) -> bool:
    """A network's state_dict (names to tensors), as a checkpoint holds."""
    return isinstance(value, dict) and all(isinstance(v, torch.Tensor) for v in value.values())


def read_state_dict(path: str | os.PathLike[str]) -> dict[str, torch.Tensor]:
    """A checkpoint's state_dict; FileNotFoundError, or a one-line ValueError for a file that is
    none (a training state, something else, one trained with the removed input normalisation)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"checkpoint not found: {path}")
    state = read_torch_file(Path(path), "a checkpoint (a network's state_dict)")
    if not is_state_dict(state):
        kind = "a training state (training_state.pt)" if isinstance(state, dict) and "networks" in state \
            else f"a {type(state).__name__}"
        raise ValueError(f"checkpoint {path} holds {kind}, expected a network's state_dict (checkpoint_actor.pth)")
    # Files written by the first, fixed input normalisation (removed in fc71fcb) carry it as top-level
    # obs_scale/obs_bias buffers: identity ones are dropped; others map inputs in a way nothing here
    # restores (obs_norm's running statistics are other tensors, obs_norm.count/mean/var, kept as they are).
    for key in ("obs_scale", "obs_bias"):
        if key in state:
            identity = torch.ones_like(state[key]) if key == "obs_scale" else torch.zeros_like(state[key])
            if not torch.equal(state[key], identity):
                raise ValueError(f"checkpoint {path} was trained with the removed fixed input normalisation "
                                 "(obs_scale, obs_bias), which this version cannot apply: train it again "
                                 "(with {\"obs_norm\": true} for running statistics)")
            del state[key]
    return state


OBS_NORM = "obs_norm"  # normalise.ObservationNorm's name in a network: its statistics' keys hold it


def obs_norm_mismatch(saved: Mapping[str, Any], built: Mapping[str, Any]) -> str | None:
    """When two networks differ by observation normalisation alone (statistics in one, not in the other),
    what to do, in one phrase; else None."""
    def has(state: Mapping[str, Any]) -> bool:
        return any(OBS_NORM in k.split(".") for k in state)

    def rest(state: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in state.items() if OBS_NORM not in k.split(".")}

    if has(saved) == has(built) or layer_mismatch(rest(saved), rest(built), "", ""):
        return None
    return ("it holds observation statistics (obs_norm) and the agent normalises none: build it with "
            "{\"obs_norm\": true}" if has(saved) else
            "it holds no observation statistics and the agent normalises its observations (obs_norm): "
            "build it without obs_norm")


def load_checkpoints(agent: Agent, actor_path: str | os.PathLike[str],
                     critic_path: str | os.PathLike[str] | None = None) -> Agent:
    """Load state_dicts into the agent's local networks and copy them into the targets.

    FileNotFoundError for a missing file; ValueError naming the file for one that is not a
    state_dict, or whose layer sizes differ from the agent's (both sizes are named).
    """
    pairs: list[tuple[str | os.PathLike[str], nn.Module]] = [(actor_path, agent.actor_local)]
    if critic_path is not None:
        pairs.append((critic_path, agent.critic_local))
    for path, module in pairs:
        state = read_state_dict(path)
        expected = module.state_dict()
        if layer_mismatch(state, expected, "it", "the agent"):
            raise NetworkMismatch(path, state, expected)
        module.load_state_dict(state)
    agent.actor_target.load_state_dict(agent.actor_local.state_dict())
    agent.critic_target.load_state_dict(agent.critic_local.state_dict())
    if agent.backend is not None:
        agent.backend.weights_loaded()  # the CUDA graph back-end's acting copy follows
    return agent


def read_torch_file(path: Path, what: str) -> Any:
    """What ``torch.save`` wrote to ``path`` (tensors and plain data only, on the CPU); a file it
    cannot read is a one-line ValueError saying it is not ``what``."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types, with several lines, for files it cannot read
        # PyTorch's own text runs to several lines and, for a file that is not its own, gives
        # advice that does not apply (load it with weights_only=False): its error's name is enough.
        raise ValueError(f"cannot read {path}: it is not {what} saved by torch.save, or it is damaged "
                         f"(PyTorch: {type(exc).__name__})") from None


__all__ = [
    "LAYER_NORM_KEY",
    "NetworkMismatch",
    "is_state_dict",
    "layer_mismatch",
    "layer_sizes",
    "load_checkpoints",
    "obs_norm_mismatch",
    "read_state_dict",
    "read_torch_file",
    "save_checkpoints",
    "write_checkpoints",
]
