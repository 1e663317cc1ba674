"""Layer normalisation in the critic (Ba et al. 2016), a common cure for a critic whose
action gradient grows with the scale of its hidden units.

Each hidden layer's pre-activations are normalised over the layer's units, per sample,
before the ReLU: unlike batch norm there are no running statistics and no train/eval
modes, so acting, the targets and evaluation compute exactly what learning computes. The
actor is ``model.Actor`` unchanged.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from model import Critic


class LayerNormCritic(Critic):
    """``model.Critic`` (same layers, same initial weights) with layer norm before both ReLUs."""

    def __init__(self, state_size: int, action_size: int, seed: int, fcs1_units: int = 128,
                 fc2_units: int = 128) -> None:
        super().__init__(state_size, action_size, seed, fcs1_units, fc2_units)
        self.ln1 = nn.LayerNorm(fcs1_units)
        self.ln2 = nn.LayerNorm(fc2_units)

    def forward(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        xs = F.relu(self.ln1(self.fcs1(state)))
        x = F.relu(self.ln2(self.fc2(torch.cat((xs, action), dim=1))))
        return self.fc3(x)
