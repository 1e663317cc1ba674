"""A toy variant, written as a user would add one: this module (its piece and its config field)
and one registry entry (``TOY``), registered by the test that uses it."""

from __future__ import annotations

from typing import Any

import torch

from ddpg.variants.registry import Variant
from ddpg_agent import setting


class ScaledCriticLoss:
    """The critic's loss times ``critic_loss_scale``: a piece wrapping ``critic_loss``."""

    calls = 0  # how many losses it has scaled (the test reads it)

    def critic_loss(self: Any, states: torch.Tensor, actions: torch.Tensor, y: Any) -> torch.Tensor:
        ScaledCriticLoss.calls += torch.is_grad_enabled()  # an update's (metrics.csv's loss is taken without gradients)
        return self.config.critic_loss_scale * super().critic_loss(states, actions, y)  # type: ignore[misc]


TOY = Variant("critic_loss_scale", ScaledCriticLoss, fields=(("critic_loss_scale", float, setting(1.0, ">=0", "critic loss scale")),))
