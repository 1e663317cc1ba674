"""Observation normalisation by running statistics: every network sees (s - mean) / sqrt(var + eps),
clipped to +-``CLIP``, where mean and var are those of every observation the agent has stepped on.

The Crawler's 129 observations mix unit vectors with velocities near 10: one learning rate and one
initialisation suit neither scale well (ML-Agents' PPO normalises its inputs so; issue 76 ranks it
second of the changes that matter on a quadruped). The replay buffer keeps raw observations, so a
stored transition is normalised by the statistics as they are when it is replayed, not as they
were when it was stored.

Where the statistics live, and why:

- In one ``ObservationNorm`` module that the actor, the critic and their targets all hold (a
  submodule named ``obs_norm``). Its statistics are registered buffers, so they are in the
  networks' own state: the checkpoints, the training state of ``--resume``, ``evaluate.py``,
  ``watch.py`` and the notebooks' reload carry and apply them with no file of their own.
- Every network applies it at its front (a forward pre-hook on the actor and on each critic, and
  ``ensemble.CriticEnsemble.all`` once before its batched pass over the members), so whoever
  calls a network on raw states (acting, the metrics' probe, the value maps) gets what learning
  saw. Twin critics each apply the one module, which gives back what it computed for the very same
  batch (``ObservationNorm.forward``'s memo): s and s' are normalised once an update.
- The target networks hold the same module as the local ones, not a lagging copy: a TD target
  y = r + d Q'(s', mu'(s')) and the Q(s, a) it is compared with then read s and s' on one scale.
  A soft-updated copy of the statistics would put the target's inputs on an older scale than the
  local critic's, a shift of the target that no weight explains (Stable-Baselines3's VecNormalize
  likewise normalises both with the current statistics).

The statistics update in ``step``, from the raw observations of that step (one row per arm: the
states the agent acted on), merged as a batch with Chan et al.'s parallel form of Welford's update,
in float64. Acting (``act``, greedy or not), ``evaluate.py`` and ``watch.py`` never step, so they
never change them. Before the first step the map is the identity (mean 0, var 1).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import torch
from torch import nn

CLIP = 10.0  # normalised values beyond +-10 standard deviations are clipped: a rare outlier cannot blow up a layer
EPS = 1e-8  # keeps a constant observation (variance 0) finite


class ObservationNorm(nn.Module):
    """Running mean and variance of observations (float64 buffers ``count``, ``mean``, ``var``);
    ``forward`` normalises and clips, ``update`` merges a batch of raw observations in.

    One update passes the same two batches, s and s', to up to eight networks (the actor, both
    twin critics, their targets), each applying this module: ``forward`` keeps its last ``MEMO``
    results and gives one back for the very tensor it was made from (held by a weak reference),
    unchanged since (its version) and normalised by unchanged statistics (their versions: ``update``
    and ``load_state_dict`` both bump them). The same numbers, computed once a batch rather than
    once a network: a float64 map of every column of a batch of 256 is not cheap beside 128-unit layers."""

    MEMO = 2  # s and s' of one update

    def __init__(self, size: int, clip: float = CLIP, eps: float = EPS) -> None:
        super().__init__()
        self.clip, self.eps = clip, eps
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("mean", torch.zeros(size, dtype=torch.float64))
        self.register_buffer("var", torch.ones(size, dtype=torch.float64))
        self._memo: list[tuple[Any, tuple[int, ...], torch.Tensor]] = []  # (weakref to input, versions, output)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(x - mean) / sqrt(var + eps), clipped, in x's dtype (computed in float64, then rounded once)."""
        if x.requires_grad:  # a result kept for it could not carry its graph
            return self._normalise(x)
        versions = (x._version, self.mean._version, self.var._version)
        for ref, made_at, out in self._memo:
            if ref() is x and made_at == (*versions, out._version):  # nothing changed in place since, the result neither
                return out
        out = self._normalise(x)
        self._memo = [(weakref.ref(x), (*versions, out._version), out), *self._memo][:self.MEMO]
        return out

    def _normalise(self, x: torch.Tensor) -> torch.Tensor:
        normed = (x.to(torch.float64) - self.mean) / torch.sqrt(self.var + self.eps)
        return normed.clamp(-self.clip, self.clip).to(x.dtype)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_memo": []}  # a copy (the overlap learner's acting copy) starts with none

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        """Merge a batch (n, size) into the statistics: the parallel variance update (Chan et al.
        1979), exact for any split of the data into batches, in place (a captured graph reads them)."""
        x = x.to(self.mean.device, torch.float64).reshape(-1, self.mean.numel())
        n = x.shape[0]
        if n == 0:
            return
        batch_mean, batch_var = x.mean(dim=0), x.var(dim=0, unbiased=False)
        total = self.count + n
        delta = batch_mean - self.mean
        m2 = self.var * self.count + batch_var * n + delta.square() * (self.count * n / total)
        self.mean.add_(delta * (n / total))
        self.var.copy_(m2 / total)
        self.count.copy_(total)


def _normalise_first(module: nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Forward pre-hook: the network's first input (the state) through its ``obs_norm``."""
    return (module.obs_norm(args[0]), *args[1:])


def attach(network: nn.Module, norm: ObservationNorm) -> nn.Module:
    """``network`` holding ``norm`` (as ``obs_norm``: its state_dict has it) and applying it to the
    state it is called with."""
    network.obs_norm = norm
    network.register_forward_pre_hook(_normalise_first)
    return network


class ObservationNormalisation:
    """The piece (``registry``): observations normalised by their running mean and variance
    (updated in ``step`` from each step's raw observations, Welford's parallel update, the
    normalised values clipped to +-10), one set of statistics held by the actor, the critic and
    both targets, so checkpoints and resume carry them and the TD target reads s' on the scale
    Q(s, a) reads s. Acting, ``evaluate.py`` and ``watch.py`` apply them and never change them."""

    def observation_norm(self: Any) -> ObservationNorm:
        """The agent's one normaliser, made at its first use (the networks are made in ``__init__``)."""
        if "_obs_norm" not in self.__dict__:
            self._obs_norm = ObservationNorm(self.state_size).to(self.device)
        return self._obs_norm

    def make_actor(self: Any) -> nn.Module:
        return attach(super().make_actor(), self.observation_norm())  # type: ignore[misc]

    def make_one_critic(self: Any, seed: int) -> nn.Module:
        critic = super().make_one_critic(seed)  # type: ignore[misc]
        if self.config.ensemble > 1:  # the ensemble applies it once, before its batched pass (make_critic)
            return critic
        return attach(critic, self.observation_norm())

    def make_critic(self: Any) -> nn.Module:
        critic = super().make_critic()  # type: ignore[misc]
        if self.config.ensemble > 1:
            critic.obs_norm = self.observation_norm()  # CriticEnsemble.all applies it to the states
        return critic

    def step(self: Any, states: np.ndarray, *args: Any, **kwargs: Any) -> None:
        """The statistics take this step's raw observations, then the step is ``Agent.step``'s."""
        self.observation_norm().update(torch.from_numpy(np.asarray(states, dtype=np.float64)))
        super().step(states, *args, **kwargs)  # type: ignore[misc]


__all__ = ["CLIP", "EPS", "ObservationNorm", "ObservationNormalisation", "attach"]
