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
``twin_critics: true``      ``twin.TwinCritic``                     min of two target Qs; both learn
``target_noise: 0.2``       (here)                                 noise on the target action
``policy_delay: 2``         (here)                                 actor and targets every 2nd update
``ensemble: 10``            ``ensemble.CriticEnsemble``             min of a random pair of target
                                                                   Qs; all learn; actor on the mean
``crossq: true``            ``crossq.RenormCritic``                 no targets: Q(s', mu(s')) in the
                                                                   same pass as Q(s, a)
``goal_paths: 4``           ``goal_paths.GoalPaths``                nothing: each Reacher episode is
                                                                   stored again against 4 more goals
==========================  =====================================  ===========================

``{"preset": "td3"}`` switches on ``twin_critics``, ``target_noise`` and ``policy_delay``
(``config.PRESETS``): TD3 is this agent's DDPG with them on. ``{"preset": "redq"}`` and
``{"preset": "crossq"}`` are the other two presets.

It is the readable learner (autograd): with no variant set, its update is ``Agent.learn``'s.
n-step returns (``n_step``) are plain DDPG's own setting (``ddpg_agent.NStepReturns``), so they
combine with every variant here and run on the fast learner too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ddpg.variants.batch_norm import BatchNormActor, BatchNormCritic
from ddpg.variants.config import VariantConfig
from ddpg.variants.crossq import RenormCritic
from ddpg.variants.ensemble import CriticEnsemble
from ddpg.variants.gaussian import GaussianNoise
from ddpg.variants.goal_paths import GoalPaths
from ddpg.variants.noisy import NoisyActor
from ddpg.variants.prioritized import PrioritizedReplayBuffer
from ddpg.variants.twin import TwinCritic
from ddpg_agent import Agent, DDPGConfig
from model import Actor, Critic


class VariantAgent(Agent):
    """``Agent(state_size, action_size, random_seed, config=None, **overrides)`` running the
    variants the config names (``VariantConfig.variants()``)."""

    config_class = VariantConfig
    config: VariantConfig

    def __init__(self, state_size: int, action_size: int, random_seed: int,
                 config: DDPGConfig | None = None, device: torch.device | str = "cpu", **overrides: Any) -> None:
        super().__init__(state_size, action_size, random_seed, config, device, **overrides)
        cfg, seed = self.config, self.seed
        if cfg.batch_norm and (cfg.exploration == "noisy" or cfg.critic_layer_norm):
            raise ValueError("batch_norm is not combined here with exploration 'noisy' or with critic_layer_norm "
                             "(on by default: set it false; parse_config does for {\"batch_norm\": true})")

        if cfg.batch_norm or cfg.exploration == "noisy" or cfg.twin_critics or cfg.ensemble > 1 or cfg.crossq:
            def actor() -> Actor:
                if cfg.batch_norm:
                    return BatchNormActor(state_size, action_size, seed, cfg.actor_fc1, cfg.actor_fc2)
                if cfg.exploration == "noisy":
                    return NoisyActor(state_size, action_size, seed, cfg.actor_fc1, cfg.actor_fc2, cfg.noisy_sigma0)
                return Actor(state_size, action_size, seed, cfg.actor_fc1, cfg.actor_fc2)

            def one_critic(seed: int) -> Critic:
                if cfg.batch_norm:
                    return BatchNormCritic(state_size, action_size, seed, cfg.critic_fc1, cfg.critic_fc2)
                if cfg.crossq:
                    return RenormCritic(state_size, action_size, seed, cfg.critic_fc1, cfg.critic_fc2,
                                        cfg.renorm_warmup)
                return Critic(state_size, action_size, seed, cfg.critic_fc1, cfg.critic_fc2, cfg.critic_layer_norm)

            def critic() -> nn.Module:
                if cfg.ensemble > 1:
                    return CriticEnsemble(one_critic, seed, cfg.ensemble)
                return TwinCritic(one_critic, seed) if cfg.twin_critics else one_critic(seed)

            self.actor_local, self.actor_target = actor().to(self.device), actor().to(self.device)
            self.critic_local, self.critic_target = critic().to(self.device), critic().to(self.device)
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
        self.goal_paths = GoalPaths(cfg.goal_paths, seed, cfg.n_step, cfg.gamma, (state_size, action_size)) \
            if cfg.goal_paths else None

    def step(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
             next_states: np.ndarray, terminated: np.ndarray | None = None) -> None:
        """``Agent.step``; with goal paths the step is also recorded for them."""
        if self.goal_paths is not None:
            if terminated is not None and np.any(terminated):
                raise ValueError("goal_paths relabels Reacher's episodes, which end at a time limit only; "
                                 "this task has terminal states")
            self.goal_paths.record(states, actions, next_states)
        super().step(states, actions, rewards, next_states, terminated)

    def reset(self) -> None:
        """``Agent.reset``; with goal paths the episode that ended also goes into the buffer again
        against new goal paths (before any of the new episode's updates)."""
        super().reset()
        if self.goal_paths is not None and (relabelled := self.goal_paths.transitions()) is not None:
            self.memory.add(*relabelled)

    def buffer_extra_state(self) -> dict[str, Any] | None:
        extra = self.memory.extra_state() if self.config.replay == "prioritized" else {}
        if self.goal_paths is not None:  # the episode so far: it goes in again at the next reset
            extra = {**extra, "goal_paths": self.goal_paths.state_dict()}
        return extra or None

    def load_buffer_extra_state(self, state: dict[str, Any], rows_restored: bool) -> None:
        state = dict(state)
        paths = state.pop("goal_paths", None)
        if (paths is None) != (self.goal_paths is None):
            raise ValueError("the saved run and this agent differ in goal_paths: resume with the run's own settings")
        if paths is not None and self.goal_paths is not None:
            self.goal_paths.load_state_dict(paths)
        if self.config.replay == "prioritized":
            self.memory.load_extra_state(state, rows_restored)
        elif state:
            raise ValueError(f"the saved replay buffer has a variant's state ({', '.join(state)}); this agent's "
                             "buffer has none: resume with the run's own settings")

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
        """``Agent.learn`` with importance weights (prioritized replay), fresh NoisyNet noise,
        batch norm's modes (the local networks learn in training mode), every critic of a twin
        pair or an ensemble learning from one target, and CrossQ's target from the learning critic."""
        states, actions, rewards, next_states, discounts, *prioritized = experiences
        if self.noisy:
            self.actor_local.resample()

        cfg = self.config
        if cfg.crossq:  # CrossQ: Q(s, a) and the target's Q(s', mu(s')) from one pass, normalised together
            next_actions = self.actor_local(next_states).detach()
            both = self.critic_values(torch.cat((states, next_states)), torch.cat((actions, next_actions)))
            q = tuple(v[:len(states)] for v in both)
            y = rewards + discounts * self.smallest(tuple(v[len(states):] for v in both)).detach()
        else:
            y = self.td_target(rewards, next_states, discounts)
            q = self.critic_values(states, actions)
        td_errors = [qi - y for qi in q]  # the first critic's are the priorities' (prioritized replay)
        weights = prioritized[0] if prioritized else 1.0  # importance weights (prioritized replay)
        critic_loss = sum((weights * errors.pow(2)).mean() for errors in td_errors)
        if cfg.crossq:  # the actor climbs Q with the running statistics, leaving them as they are
            self.critic_local.eval()
        actor_loss = -self.critic_local(states, self.actor_local(states)).mean()
        if cfg.crossq:
            self.critic_local.train()
        self.optimise(actor_loss, critic_loss)
        if prioritized:
            self.memory.update_priorities(prioritized[1], td_errors[0])

    def critic_values(self, states: torch.Tensor, actions: torch.Tensor,
                      critic: nn.Module | None = None) -> tuple[torch.Tensor, ...]:
        """Each critic's Q(s, a) (one, two for TD3, N for an ensemble) of the local critic, or of ``critic``."""
        critic = self.critic_local if critic is None else critic
        if self.config.twin_critics:
            return critic.both(states, actions)
        if self.config.ensemble > 1:
            return tuple(critic.all(states, actions).unbind(0))
        return (critic(states, actions),)

    def smallest(self, values: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """The value a target takes from several critics': the smaller of two (TD3), one critic's own."""
        return torch.min(*values) if len(values) == 2 else values[0]

    def td_target(self, rewards: torch.Tensor, next_states: torch.Tensor, discounts: torch.Tensor) -> torch.Tensor:
        """``Agent.td_target`` with TD3's changes when the config asks for them."""
        cfg = self.config
        if cfg.target_noise == 0 and not cfg.twin_critics and cfg.ensemble == 1:
            return super().td_target(rewards, next_states, discounts)
        with torch.no_grad():
            next_actions = self.actor_target(next_states)
            if cfg.target_noise > 0:  # TD3: smooth the target over nearby actions
                noise = (torch.randn_like(next_actions) * cfg.target_noise).clamp(-cfg.target_noise_clip,
                                                                                  cfg.target_noise_clip)
                next_actions = (next_actions + noise).clamp(-1.0, 1.0)
            if cfg.ensemble > 1:  # REDQ: the smallest of a random subset of the target critics' values
                q_next = self.critic_target.subset_min(next_states, next_actions, cfg.ensemble_subset)
            else:  # TD3: the smaller of the two target critics' values
                q_next = self.smallest(self.critic_values(next_states, next_actions, self.critic_target))
            return rewards + discounts * q_next

    def optimise(self, actor_loss: torch.Tensor, critic_loss: torch.Tensor) -> None:
        """``Agent.optimise``; with TD3's policy delay, the updates in between step the critic only."""
        if self.n_updates % self.config.policy_delay == 0:
            return super().optimise(actor_loss, critic_loss)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        if self.config.grad_clip > 0:
            nn.utils.clip_grad_norm_(self.critic_local.parameters(), self.config.grad_clip)
        self.critic_optimizer.step()
        self.n_updates += 1

    @staticmethod
    def soft_update(local_model: nn.Module, target_model: nn.Module, tau: float) -> None:
        """The weights as in ``Agent``, and batch norm's running statistics alike."""
        Agent.soft_update(local_model, target_model, tau)
        with torch.no_grad():
            local = dict(local_model.named_buffers())
            for name, target in target_model.named_buffers():
                if name.rsplit(".", 1)[-1] in ("running_mean", "running_var"):
                    target.lerp_(local[name], tau)

