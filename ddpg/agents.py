"""Where agents come from: a new one for training (``make_agent``), or one rebuilt from a
run or from checkpoint files for acting (watch.py, evaluate.py, the notebooks)."""

from __future__ import annotations

import os
from pathlib import Path

import torch

from ddpg import backends
from ddpg.backends import LEARNERS
from ddpg.run_folder import agent_state
from ddpg.run_folder.checkpoints import LAYER_NORM_KEY, load_checkpoints, read_state_dict
from ddpg.run_folder.file_names import ACTOR_FILE, CRITIC_FILE
from ddpg.run_folder.record_file import read_record
from ddpg.variants import VariantAgent, parse_config, variants_of
from ddpg.variants.config import NETWORK_KEYS
from ddpg_agent import Agent, DDPGConfig


def make_agent(learner: str, sizes: tuple[int, int, int], config: DDPGConfig,
               device: torch.device | str = "cpu") -> Agent:
    """An agent for (state_size, action_size, seed) on ``device``, its updates run by ``learner``
    (``ddpg.backends``: auto, graph, graph-overlap or readable); a config with variants (prioritized
    replay, NoisyNet, batch norm, TD3's pieces, Gaussian noise) gets ``variants.VariantAgent``.
    ValueError (one line) when the learner cannot serve it."""
    switched_on = variants_of(config)
    agent = VariantAgent(*sizes, config=config, device=device) if switched_on else Agent(*sizes, config=config,
                                                                                        device=device)
    backends.attach(agent, learner)  # one line naming it
    return agent


def agent_from_run(run_dir: str | os.PathLike[str], seed: int = 0, agent_class: type[Agent] | None = None,
                   device: torch.device | str = "cpu") -> Agent:
    """An agent of the run's architecture (from run.json) with the run's weights loaded.

    Meant for acting: the replay buffer is small, and the learning settings are the defaults. The
    checkpoints load on any ``device``, whichever device trained them (they are saved on the CPU).
    A run with batch norm or a NoisyNet actor gives a ``variants.VariantAgent``.
    """
    record = read_record(run_dir)
    keys = NETWORK_KEYS
    config = parse_config({**{k: record.config[k] for k in keys if k in record.config}, "buffer_size": 1024})
    if agent_class is None:
        agent_class = VariantAgent if variants_of(config) else Agent
    agent = agent_class(record.state_size, record.action_size, seed, config=config, device=device)
    differs = agent_state.differing_shapes(agent, record.networks)
    if differs:
        raise ValueError(f"{os.fspath(run_dir)} cannot be rebuilt: {differs} (model.py changed since the run; its "
                         f"commit is {record.git_commit or 'in run.json'}): put those layers back as they were")
    return load_checkpoints(agent, Path(run_dir) / ACTOR_FILE, Path(run_dir) / CRITIC_FILE)


def agent_from_checkpoints(actor_path: str | os.PathLike[str], critic_path: str | os.PathLike[str] | None = None,
                           seed: int = 0, device: torch.device | str = "cpu") -> Agent:
    """An agent with the checkpoints loaded (for acting), its sizes read from them: the state
    and action sizes and the hidden layers from the actor's weights, layer norm in the critic
    exactly when the critic's file has it (checkpoints from before it have none), observation
    normalisation (a ``VariantAgent`` with ``obs_norm``) when the actor's file holds its statistics."""
    actor = read_state_dict(actor_path)
    try:
        (fc1, state_size), (fc2, _), (action_size, _) = (actor[f"fc{i}.weight"].shape for i in (1, 2, 3))
    except (KeyError, ValueError):
        raise ValueError(f"checkpoint {os.fspath(actor_path)} is not model.Actor's state_dict (fc1, fc2, fc3 "
                         "weights expected)") from None
    sizes = {"actor_fc1": fc1, "actor_fc2": fc2}
    critic_layer_norm, variants = False, {}
    if "log_alpha" in actor:  # SAC's actor: its temperature travels with it
        variants["sac"] = True
    if critic_path is not None:
        critic = read_state_dict(critic_path)
        first = "q1." if "q1.fcs1.weight" in critic else ""  # TD3's and SAC's twin critics: both as the first
        variants.update({"twin_critics": True} if first else {})
        critic_layer_norm = f"{first}{LAYER_NORM_KEY}.weight" in critic
        if f"{first}fcs1.weight" in critic and f"{first}fc2.weight" in critic:  # model.Critic's layers
            sizes.update(critic_fc1=critic[f"{first}fcs1.weight"].shape[0], critic_fc2=critic[f"{first}fc2.weight"].shape[0])
    settings = {"buffer_size": 1024, "critic_layer_norm": critic_layer_norm, **sizes}
    if any("obs_norm" in key.split(".") for key in actor):  # the obs_norm variant's statistics: an agent applying them
        variants["obs_norm"] = True
    if variants:
        config = parse_config({**settings, **variants})
        return load_checkpoints(VariantAgent(state_size, action_size, seed, config=config, device=device),
                                actor_path, critic_path)
    agent = Agent(state_size, action_size, seed, device=device, **settings)
    return load_checkpoints(agent, actor_path, critic_path)


__all__ = ["LEARNERS", "agent_from_checkpoints", "agent_from_run", "make_agent"]
