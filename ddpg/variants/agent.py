"""``VariantAgent``: ``ddpg_agent.Agent`` with the config's variants plugged in as pieces.

Each variant is its own small module in this package with one piece, and one entry in
``registry.VARIANTS`` (the config switch that turns it on, its piece, its settings): docs/variants.md
lists them, generated from that registry and the pieces' docstrings.

``VariantAgent(..., config=...)`` is an agent of the class made of the pieces the config
switches on, in front of ``VariantAgent`` itself: ``Agent``'s update, written once in
``ddpg_agent.py``, with the pieces replacing or wrapping its named parts, so an edit of a part no
piece replaces runs with every variant. An edit of a part a piece replaces without calling
``super()`` (CrossQ's ``td_target``) does not run with that piece, and nothing refuses it: the
learner's line at attach names the parts each switched-on piece defines, by file
(``ddpg.backends.runs``). What is refused (``compose.problem``, when the agent is built) is the
reverse: a class or an edit that cuts a piece's own part off. What this class adds is what the
pieces build on: the critic as a tuple of values (one critic, two for TD3, N for an ensemble) with
their loss (``values.CriticValues`` turns them into the critic's loss for the pieces that have
several), each value's loss ``Agent.critic_loss`` itself (``value_loss``), and the targets in eval mode.

``{"preset": "td3"}`` switches on ``twin_critics``, ``target_noise`` and ``policy_delay``
(``config.PRESETS``): TD3 is this agent's DDPG with them on. ``{"preset": "redq"}`` and
``{"preset": "crossq"}`` are the other two presets. It is the readable learner (autograd).
n-step returns (``n_step``) are plain DDPG's own setting (``ddpg_agent.NStepReturns``), so they
combine with every variant here.
"""

from __future__ import annotations

import functools
from dataclasses import asdict
from typing import Any

import numpy as np
import torch
from torch import nn

from ddpg.variants import compose, registry
from ddpg.variants import config as variant_config
from ddpg.variants.config import VariantConfig
from ddpg.variants.values import CriticValues
from ddpg_agent import Agent, DDPGConfig
from model import Critic, given


@functools.cache
def _composed(pieces: tuple[type, ...]) -> type:
    """The class of an agent with these pieces, each wrapping the ones after it."""
    if not pieces:
        return VariantAgent
    name = "VariantAgent[" + ", ".join(p.__name__ for p in pieces) + "]"
    needs = {part for v in registry.VARIANTS if v.piece in pieces for part in v.needs}
    values = (CriticValues,) if needs & set(CriticValues.for_needs) else ()
    return type(name, (*pieces, *values, VariantAgent), {})


class VariantAgent(Agent):
    """``VariantAgent(state_size, action_size, random_seed, config=None, **overrides)``: an agent
    running the variants the config names (``VariantConfig.variants()``)."""

    config: VariantConfig

    @property
    def config_class(self) -> type:  # type: ignore[override]
        return variant_config.config_class()  # with the fields of variants registered since import

    def __new__(cls, *args: Any, config: DDPGConfig | None = None, **overrides: Any) -> Any:
        if cls is VariantAgent:  # the class of the pieces this config switches on
            config_class = variant_config.config_class()
            values = {**asdict(config or config_class()), **{k: v for k, v in overrides.items() if k != "device"}}
            cls = _composed(registry.pieces(config_class(**values)))
        return super().__new__(cls)

    def __init__(self, state_size: int, action_size: int, random_seed: int,
                 config: DDPGConfig | None = None, device: torch.device | str = "cpu", **overrides: Any) -> None:
        found = compose.problem(type(self))
        if found:
            raise ValueError(f"these variants do not compose: {found}")
        super().__init__(state_size, action_size, random_seed, config, device, **overrides)
        # The targets only ever evaluate: batch norm's running statistics, NoisyNet's mean weights.
        self.actor_target.eval()
        self.critic_target.eval()

    # ------------------------------------------------------------- the critic, as values
    def make_critic(self) -> nn.Module:
        return self.make_one_critic(self.seed)

    def make_one_critic(self, seed: int) -> nn.Module:
        """One critic from ``seed`` (twin critics and ensembles are made of several)."""
        cfg = self.config
        return Critic(self.state_size, self.action_size, seed, layer_norm=cfg.critic_layer_norm,
                      **given(fcs1_units=cfg.critic_fc1, fc2_units=cfg.critic_fc2))

    def next_action(self, next_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | float]:
        """The action at s' a target values, with what its value gains: here the target actor's action and
        nothing (SAC: its own sample and -alpha log pi). CrossQ's target is made from it; ``Agent.td_target``
        calls ``target_action`` itself, so an edit there is plain DDPG's and TD3's."""
        return self.target_action(next_states), 0.0

    def critic_values(self, states: torch.Tensor, actions: torch.Tensor,
                      critic: nn.Module | None = None) -> tuple[torch.Tensor, ...]:
        """Each critic's Q(s, a) of the local critic, or of ``critic``: one here."""
        return ((self.critic_local if critic is None else critic)(states, actions),)

    def smallest(self, values: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """The value a target takes from the critics' values: one critic's own here."""
        return values[0]

    def value_loss(self, values: tuple[torch.Tensor, ...], y: torch.Tensor,
                   weights: torch.Tensor | None = None) -> torch.Tensor:
        """Every critic regresses on the one target: the sum of their losses, each ``Agent.critic_loss`` of its
        values (``weights``: each sample's, prioritized replay's), so an edit of that loss is every critic's."""
        return sum(Agent.critic_loss(self, None, None, y, q=q, weights=weights) for q in values)  # type: ignore[return-value]

    # ------------------------------------------------------------- acting and state
    def act(self, states: np.ndarray, add_noise: bool = True) -> np.ndarray:
        """As ``Agent.act``; batch norm acts in eval mode."""
        self.actor_local.eval()
        try:
            return super().act(states, add_noise=add_noise)
        finally:
            self.actor_local.train()

    def buffer_extra_state(self) -> dict[str, Any]:
        """A variant's state beyond the buffer's rows: each piece adds its own (none here)."""
        return {}

    def load_buffer_extra_state(self, state: dict[str, Any], rows_restored: bool) -> None:
        if state:  # what no piece of this agent took back
            raise ValueError(f"the saved replay buffer has a variant's state ({', '.join(state)}) that this agent "
                             "has not: resume with the run's own settings")

    @staticmethod
    def soft_update(local_model: nn.Module, target_model: nn.Module, tau: float) -> None:
        """The weights as in ``Agent``, and batch norm's running statistics alike."""
        Agent.soft_update(local_model, target_model, tau)
        with torch.no_grad():
            local = dict(local_model.named_buffers())
            for name, target in target_model.named_buffers():
                if name.rsplit(".", 1)[-1] in ("running_mean", "running_var"):
                    target.lerp_(local[name], tau)
