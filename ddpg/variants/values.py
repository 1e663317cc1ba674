"""The critic's loss from each critic's values, in place of ``Agent.critic_loss`` for the pieces with
several critics (twin critics, an ensemble) or a weighted loss (prioritized replay): ``VariantAgent``
puts it behind every piece when one of them needs ``critic_values`` or ``value_loss``
(``registry.Variant.needs``), so a piece's own ``critic_loss`` (CrossQ's) still comes first. Each
value's loss is ``Agent.critic_loss`` given that value (``VariantAgent.value_loss``): one loss, written
once in ddpg_agent.py, for every critic of every variant."""

from __future__ import annotations

from typing import Any

import torch


class CriticValues:
    """``critic_loss`` as ``value_loss`` of ``critic_values`` (``variants.VariantAgent``'s parts)."""

    for_needs = ("critic_values", "value_loss")  # the parts whose pieces it serves

    def critic_loss(self: Any, states: torch.Tensor, actions: torch.Tensor, y: Any) -> torch.Tensor:
        return self.value_loss(self.critic_values(states, actions), y)


__all__ = ["CriticValues"]
