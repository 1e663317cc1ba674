"""Batch normalisation in the actor and the critic, as in the DDPG paper (Lillicrap et al.
2016, section 3): on the state input and every layer of the actor, and on the state input
and the layers before the action joins in the critic. It puts Reacher's observations
(positions in metres, velocities in rad/s, ...) on one scale without hand-set constants.

Modes (``VariantAgent``): the local networks learn in training mode (each batch normalised
by its own statistics, which also update the running ones); acting, the target networks
and evaluation use evaluation mode (the running statistics), so an action does not depend
on which other states share its batch. The targets' running statistics follow the local
networks' with the same soft update as the weights.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from model import Actor, Critic, given


class BatchNormActor(Actor):
    """``model.Actor`` (same layers, same initial weights) with batch norm before each layer's ReLU."""

    def __init__(self, state_size: int, action_size: int, seed: int, fc1_units: int = 128,
                 fc2_units: int = 128) -> None:
        super().__init__(state_size, action_size, seed, fc1_units, fc2_units)
        self.bn0 = nn.BatchNorm1d(state_size)
        self.bn1 = nn.BatchNorm1d(fc1_units)
        self.bn2 = nn.BatchNorm1d(fc2_units)

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.bn1(self.fc1(self.bn0(state))))
        x = F.relu(self.bn2(self.fc2(x)))
        return torch.tanh(self.fc3(x))


class BatchNormCritic(Critic):
    """``model.Critic`` with batch norm on the state and the first layer (before the action joins)."""

    def __init__(self, state_size: int, action_size: int, seed: int, fcs1_units: int = 128,
                 fc2_units: int = 128) -> None:
        super().__init__(state_size, action_size, seed, fcs1_units, fc2_units)
        self.bn0 = nn.BatchNorm1d(state_size)
        self.bn1 = nn.BatchNorm1d(fcs1_units)

    def forward(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        xs = F.relu(self.bn1(self.fcs1(self.bn0(state))))
        x = F.relu(self.fc2(torch.cat((xs, action), dim=1)))
        return self.fc3(x)


class BatchNormNetworks:
    """The piece (``registry``): batch norm on the state and every actor layer, and on the critic's
    state and first layer (the DDPG paper); training mode when learning, running statistics when
    acting, in the targets (which follow them: ``VariantAgent.soft_update``) and in evaluation."""

    def make_actor(self: Any) -> BatchNormActor:
        cfg = self.config
        return BatchNormActor(self.state_size, self.action_size, self.seed, **given(fc1_units=cfg.actor_fc1, fc2_units=cfg.actor_fc2))

    def make_one_critic(self: Any, seed: int) -> BatchNormCritic:
        cfg = self.config
        return BatchNormCritic(self.state_size, self.action_size, seed, **given(fcs1_units=cfg.critic_fc1, fc2_units=cfg.critic_fc2))
