"""Gaussian action noise: independent N(0, sigma^2) at every step (TD3's choice).

Unlike Ornstein-Uhlenbeck noise it has no memory, so consecutive actions are not pushed
the same way; the arm jitters rather than drifts. Same interface as ``ddpg_agent.OUNoise``
(``reset`` applies the per-episode decay), so it is a drop-in replacement.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class GaussianNoise:
    """sigma * N(0, 1) per agent and action dimension, times the decaying scale."""

    def __init__(self, action_size: int, seed: int, sigma: float = 0.2, decay: float = 1.0,
                 scale_min: float = 0.0) -> None:
        self.action_size, self.sigma = action_size, sigma
        self.decay, self.scale_min, self.scale = decay, scale_min, 1.0
        self.rng = np.random.default_rng(seed)
        self.state = np.zeros((1, action_size))  # no memory; kept so a run's state saves alike

    def reset(self) -> None:
        self.scale = max(self.scale_min, self.scale * self.decay)

    def sample(self, n: int = 1) -> np.ndarray:
        """Noise for ``n`` agents, shape (n, action_size)."""
        return self.scale * self.sigma * self.rng.standard_normal((n, self.action_size))


class GaussianExploration:
    """The piece (``registry``): independent N(0, ``noise_sigma``^2) action noise (``GaussianNoise``)
    instead of OU noise."""

    def make_noise(self: Any) -> GaussianNoise:
        cfg = self.config
        return GaussianNoise(self.action_size, self.seed, cfg.noise_sigma, cfg.noise_decay, cfg.noise_min)
