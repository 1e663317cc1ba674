"""TD3's clipped double Q (Fujimoto et al. 2018): two critics, and the smaller of their
target values in the TD target, against the over-estimation one critic's maximisation
feeds on.

``TwinCritic`` holds both critics as one module, so the agent's one critic optimiser, its
gradient clipping (over both), the soft target update and the saved state all treat the
pair as "the critic". Its ``forward`` is the first critic's Q: the actor climbs Q1, as in
TD3. The two are initialised from different seeds.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


class TwinCritic(nn.Module):
    """Two critics, ``make_critic(seed)`` and ``make_critic(seed + 1)``: ``forward`` gives Q1,
    ``both`` gives (Q1, Q2)."""

    def __init__(self, make_critic: Callable[[int], nn.Module], seed: int) -> None:
        super().__init__()
        self.q1, self.q2 = make_critic(seed), make_critic(seed + 1)

    def forward(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.q1(state, action)

    def both(self, state: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.q1(state, action), self.q2(state, action)
