"""A critic that reads the action at its first layer, beside the state, as TD3's (Fujimoto et al. 2018)
and SAC's (Haarnoja et al. 2018) critics do: ``{"critic_action": "first"}``.

``model.Critic`` takes the action at its second layer, after a layer of the state alone, as the
DDPG paper did (Lillicrap et al. 2016), and as Reacher's 4 actions are served well by. With the
Crawler's 20 actions the first layer then never sees how the joints' commands combine with the
pose: only the second can. Here the first layer reads both, and the second reads the first's
units alone. Everything else is ``model.Critic``'s: the layer names and widths (``critic_fc1``,
``critic_fc2``), the initialisation, the layer norm, the seed. The shapes of ``fcs1`` and ``fc2``
differ, so the setting is a network one: run.json records it and a rebuilt agent takes it.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from model import Critic, given


class JointInputCritic(Critic):
    """``model.Critic`` with [state, action] as the first layer's input and nothing joining at the second."""

    def __init__(self, state_size: int, action_size: int, seed: int, fcs1_units: int = 128,
                 fc2_units: int = 128, layer_norm: bool = False) -> None:
        # Critic's layers with the action counted in the first layer's input and none added at the second.
        super().__init__(state_size + action_size, 0, seed, fcs1_units, fc2_units, layer_norm)

    def forward(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.ln1(self.fcs1(torch.cat((state, action), dim=1))))
        x = F.relu(self.ln2(self.fc2(x)))
        return self.fc3(x)


class JointInput:
    """The piece (``registry``): each critic reads the action at its first layer, beside the state (TD3's and
    SAC's critics), not at its second (the DDPG paper's, ``model.Critic``); widths, initialisation and layer
    norm as ``model.Critic``'s. Twin critics and ensembles are made of it."""

    def make_one_critic(self: Any, seed: int) -> JointInputCritic:
        cfg = self.config
        return JointInputCritic(self.state_size, self.action_size, seed, layer_norm=cfg.critic_layer_norm,
                                **given(fcs1_units=cfg.critic_fc1, fc2_units=cfg.critic_fc2))


__all__ = ["JointInput", "JointInputCritic"]
