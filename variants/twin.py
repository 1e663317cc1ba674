"""TD3's clipped double Q (Fujimoto et al. 2018): two critics, and the smaller of their
target values in the TD target, against the over-estimation one critic's maximisation
feeds on.

``TwinCritic`` holds both critics as one module, so the agent's one critic optimiser, its
gradient clipping (over both), the soft target update and the saved state all treat the
pair as "the critic". Its ``forward`` is the first critic's Q: the actor climbs Q1, as in
TD3. The two are initialised from different seeds.
"""

from __future__ import annotations

import torch
from torch import nn

from model import Critic


class TwinCritic(nn.Module):
    """Two ``model.Critic``s: ``forward`` gives Q1, ``both`` gives (Q1, Q2)."""

    def __init__(self, state_size: int, action_size: int, seed: int, fcs1_units: int = 128,
                 fc2_units: int = 128, critic_class: type[Critic] = Critic) -> None:
        super().__init__()
        self.q1 = critic_class(state_size, action_size, seed, fcs1_units, fc2_units)
        self.q2 = critic_class(state_size, action_size, seed + 1, fcs1_units, fc2_units)

    def forward(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.q1(state, action)

    def both(self, state: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.q1(state, action), self.q2(state, action)
