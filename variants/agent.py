"""``VariantAgent``: ``ddpg_agent.Agent`` with the config's variants plugged in.

Each variant is its own small module in this package; this class only chooses the pieces
from the config and runs the one update that has to know about them:

==========================  =====================================  ===========================
config                      piece                                  what changes in the update
==========================  =====================================  ===========================
``exploration: gaussian``   ``gaussian.GaussianNoise``             nothing (acting only)
``exploration: noisy``      ``noisy.NoisyActor``                   fresh actor noise per update
``replay: prioritized``     ``prioritized.PrioritizedReplayBuffer``  importance-weighted critic
                                                                   loss; new priorities
``batch_norm: true``        ``batch_norm.BatchNorm{Actor,Critic}``  train/eval modes
==========================  =====================================  ===========================

It is the readable learner (autograd): with no variant set, its update is ``Agent.learn``'s.
n-step returns (``n_step``) are plain DDPG's own setting (``ddpg_agent.NStepReturns``), so they
combine with every variant here and run on the fast learner too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ddpg_agent import Agent, DDPGConfig
from model import Actor, Critic
from variants.batch_norm import BatchNormActor, BatchNormCritic
from variants.config import VariantConfig
from variants.gaussian import GaussianNoise
from variants.noisy import NoisyActor
from variants.prioritized import PrioritizedReplayBuffer


class VariantAgent(Agent):
    """``Agent(state_size, action_size, random_seed, config=None, **overrides)`` running the
    variants the config names (``VariantConfig.variants()``)."""

    config_class = VariantConfig
    config: VariantConfig

    def __init__(self, state_size: int, action_size: int, random_seed: int,
                 config: DDPGConfig | None = None, **overrides: Any) -> None:
        super().__init__(state_size, action_size, random_seed, config, **overrides)
        cfg, seed = self.config, self.seed
        if cfg.batch_norm and cfg.exploration == "noisy":
            raise ValueError("batch_norm and exploration 'noisy' are not combined here; pick one")

        if cfg.batch_norm or cfg.exploration == "noisy":  # other networks: build the four again
            def actor() -> Actor:
                if cfg.batch_norm:
                    return BatchNormActor(state_size, action_size, seed, cfg.actor_fc1, cfg.actor_fc2)
                return NoisyActor(state_size, action_size, seed, cfg.actor_fc1, cfg.actor_fc2, cfg.noisy_sigma0)

            critic_class = BatchNormCritic if cfg.batch_norm else Critic
            self.actor_local, self.actor_target = actor(), actor()
            self.critic_local = critic_class(state_size, action_size, seed, cfg.critic_fc1, cfg.critic_fc2)
            self.critic_target = critic_class(state_size, action_size, seed, cfg.critic_fc1, cfg.critic_fc2)
            self.actor_target.load_state_dict(self.actor_local.state_dict())
            self.critic_target.load_state_dict(self.critic_local.state_dict())
            self.actor_optimizer = torch.optim.Adam(self.actor_local.parameters(), lr=cfg.lr_actor, fused=True)
            self.critic_optimizer = torch.optim.Adam(self.critic_local.parameters(), lr=cfg.lr_critic,
                                                     weight_decay=cfg.weight_decay, fused=True)
        # The targets only ever evaluate: batch norm's running statistics, NoisyNet's mean weights.
        self.actor_target.eval()
        self.critic_target.eval()
        self.noisy = isinstance(self.actor_local, NoisyActor)
        if self.noisy:
            self.actor_target.set_noisy(False)

        if cfg.exploration == "gaussian":
            self.noise = GaussianNoise(action_size, seed, cfg.noise_sigma, cfg.noise_decay, cfg.noise_min)

        buffer = (state_size, action_size, cfg.buffer_size, cfg.batch_size, seed)
        per = {"alpha": cfg.per_alpha, "beta": cfg.per_beta, "beta_updates": cfg.per_beta_updates,
               "eps": cfg.per_eps}
        if cfg.replay == "prioritized":
            self.memory = PrioritizedReplayBuffer(*buffer, **per)

    def act(self, states: np.ndarray, add_noise: bool = True) -> np.ndarray:
        """As ``Agent.act``; NoisyNet explores with a fresh draw of its weight noise instead
        of action noise (without ``add_noise``: the mean weights). Batch norm acts in eval mode."""
        self.actor_local.eval()
        if self.noisy:
            self.actor_local.set_noisy(add_noise)
            if add_noise:
                self.actor_local.resample()
        try:
            return super().act(states, add_noise=add_noise and not self.noisy)
        finally:
            self.actor_local.train()
            if self.noisy:
                self.actor_local.set_noisy(True)

    def exploration_scale(self) -> float:
        """NoisyNet: the actor's mean |sigma|; action noise: its sigma times its scale."""
        if self.noisy:
            return self.actor_local.mean_sigma()
        return super().exploration_scale()

    def learn(self, experiences: tuple[torch.Tensor, ...]) -> None:
        """``Agent.learn`` with importance weights (prioritized replay), fresh NoisyNet noise
        and batch norm's modes: the local networks learn in training mode."""
        states, actions, rewards, next_states, discounts, *prioritized = experiences
        if self.noisy:
            self.actor_local.resample()

        with torch.no_grad():
            q_next = self.critic_target(next_states, self.actor_target(next_states))
            y = rewards + discounts * q_next
        td_errors = self.critic_local(states, actions) - y
        if prioritized:  # each sample's squared error weighted by its importance weight
            weights, index = prioritized
            critic_loss = (weights * td_errors.pow(2)).mean()
        else:
            critic_loss = td_errors.pow(2).mean()
        actor_loss = -self.critic_local(states, self.actor_local(states)).mean()
        self.optimise(actor_loss, critic_loss)
        if prioritized:
            self.memory.update_priorities(index, td_errors)

    @staticmethod
    def soft_update(local_model: nn.Module, target_model: nn.Module, tau: float) -> None:
        """The weights as in ``Agent``, and batch norm's running statistics alike."""
        Agent.soft_update(local_model, target_model, tau)
        with torch.no_grad():
            local = dict(local_model.named_buffers())
            for name, target in target_model.named_buffers():
                if name.rsplit(".", 1)[-1] in ("running_mean", "running_var"):
                    target.lerp_(local[name], tau)

