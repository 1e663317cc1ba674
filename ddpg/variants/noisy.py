"""NoisyNet exploration (Fortunato et al. 2018): the actor's weights carry learned noise.

Each linear layer's weight is ``mu_w + sigma_w * eps_w`` (the bias likewise). The noise is
factorised: eps_w = f(eps_out) f(eps_in)^T with f(x) = sign(x) sqrt(|x|), so a layer draws
only in + out Gaussians instead of in x out. mu and sigma are both learned by the actor's
loss, so the network itself decides how much to explore, state by state; no noise is added
to the actions.

When the noise is drawn (``VariantAgent``): a fresh draw before every decision (shared by
all arms of that step) and before every update. The target actor and evaluation use the
mean weights (``noisy = False``): deterministic, as a greedy policy should be.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from model import Actor, given


class NoisyLinear(nn.Linear):
    """``nn.Linear`` (its weight and bias are the means) plus learned noise scales."""

    def __init__(self, in_features: int, out_features: int, sigma0: float, generator: torch.Generator) -> None:
        super().__init__(in_features, out_features)
        scale = sigma0 / math.sqrt(in_features)
        self.weight_sigma = nn.Parameter(torch.full((out_features, in_features), scale))
        self.bias_sigma = nn.Parameter(torch.full((out_features,), scale))
        self.register_buffer("eps_in", torch.zeros(in_features))
        self.register_buffer("eps_out", torch.zeros(out_features))
        self.generator = generator
        self.noisy = True  # False: the mean weights only

    def resample(self) -> None:
        """Draw new factorised noise."""
        for eps in (self.eps_in, self.eps_out):
            eps.normal_(generator=self.generator)
            eps.copy_(eps.sign() * eps.abs().sqrt())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.noisy:
            return F.linear(x, self.weight, self.bias)
        weight = self.weight + self.weight_sigma * torch.outer(self.eps_out, self.eps_in)
        return F.linear(x, weight, self.bias + self.bias_sigma * self.eps_out)


class NoisyActor(Actor):
    """``model.Actor`` with its three layers noisy: the same means, initialised the same way."""

    def __init__(self, state_size: int, action_size: int, seed: int, fc1_units: int = 128,
                 fc2_units: int = 128, sigma0: float = 0.5) -> None:
        super().__init__(state_size, action_size, seed, fc1_units, fc2_units)
        self.generator = torch.Generator().manual_seed(seed)
        sizes = [(state_size, fc1_units), (fc1_units, fc2_units), (fc2_units, action_size)]
        for name, (n_in, n_out) in zip(("fc1", "fc2", "fc3"), sizes, strict=True):
            layer = NoisyLinear(n_in, n_out, sigma0, self.generator)
            with torch.no_grad():  # keep the plain actor's initial weights as the means
                layer.weight.copy_(getattr(self, name).weight)
                layer.bias.copy_(getattr(self, name).bias)
            setattr(self, name, layer)
        self.resample()

    def noisy_layers(self) -> list[NoisyLinear]:
        return [self.fc1, self.fc2, self.fc3]  # type: ignore[list-item]

    def resample(self) -> None:
        for layer in self.noisy_layers():
            layer.resample()

    def set_noisy(self, noisy: bool) -> None:
        for layer in self.noisy_layers():
            layer.noisy = noisy

    def mean_sigma(self) -> float:
        """Mean |sigma| over all weights and biases: how much the actor still explores."""
        with torch.no_grad():
            sigmas = [p.abs().reshape(-1) for layer in self.noisy_layers()
                      for p in (layer.weight_sigma, layer.bias_sigma)]
            return float(torch.cat(sigmas).mean())


class NoisyExploration:
    """The piece (``registry``): factorised Gaussian noise in the actor's three linear layers
    (``noisy_sigma0``), learned; a fresh draw before every decision (shared by that step's arms) and
    every update, and no action noise; the target actor and evaluation use the mean weights."""

    def make_actor(self: Any) -> NoisyActor:
        cfg = self.config
        return NoisyActor(self.state_size, self.action_size, self.seed, sigma0=cfg.noisy_sigma0,
                          **given(fc1_units=cfg.actor_fc1, fc2_units=cfg.actor_fc2))

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[misc]
        self.actor_target.set_noisy(False)

    def act(self: Any, states: np.ndarray, add_noise: bool = True) -> np.ndarray:
        """Without ``add_noise``: the mean weights; with it, a fresh draw and no action noise."""
        self.actor_local.set_noisy(add_noise)
        if add_noise:
            self.actor_local.resample()
        try:
            return super().act(states, add_noise=False)  # type: ignore[misc]
        finally:
            self.actor_local.set_noisy(True)

    def learn(self: Any, experiences: tuple[torch.Tensor, ...]) -> None:
        self.actor_local.resample()
        super().learn(experiences)  # type: ignore[misc]

    def exploration_scale(self: Any) -> float:
        return self.actor_local.mean_sigma()  # the actor's mean |sigma|
