"""``VariantConfig``: ``ddpg_agent.DDPGConfig`` plus the variants' keys, and ``parse_config``.

The readable agent's config holds plain DDPG only; the keys below switch on the pieces of
this package. Every command line (``train.py``, ``sweep.py``, the benchmarks) and ``rundir``
read a JSON config through ``parse_config``, which gives a plain ``DDPGConfig`` when no
variant is set, so a plain run records (and reproduces) exactly the readable agent's config.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ddpg.cli import is_number
from ddpg_agent import DDPGConfig

# What turns a variant on.
VARIANT_SWITCHES = ("exploration", "replay", "batch_norm", "twin_critics", "target_noise", "policy_delay",
                    "ensemble", "crossq", "goal_paths")
# Switches that change what goes into the buffer, not the update: every learner runs them.
DATA_ONLY = frozenset({"goal_paths"})
# TD3 (Fujimoto et al. 2018) is DDPG with three changes switched on, as in Stable-Baselines3:
# --config '{"preset": "td3"}' sets these (keys given beside it override them).
# REDQ (Chen et al. 2021): ten critics, targets from the smaller of a random two; CrossQ (Bhatt
# et al. 2024): batch-renormalised twin critics without target networks, the actor every third update.
PRESETS = {"td3": {"twin_critics": True, "target_noise": 0.2, "target_noise_clip": 0.5, "policy_delay": 2},
           "redq": {"ensemble": 10, "ensemble_subset": 2},
           "crossq": {"crossq": True, "twin_critics": True, "policy_delay": 3}}
PLAIN_KEYS = frozenset(f.name for f in fields(DDPGConfig))
# A variant's own settings, and the switch each needs (without it, a setting does nothing).
NEEDS = {"noisy_sigma0": ("exploration", "noisy"), "renorm_warmup": ("crossq", True),
         **{k: ("replay", "prioritized") for k in ("per_alpha", "per_beta", "per_beta_updates", "per_eps")}}


@dataclass
class VariantConfig(DDPGConfig):
    """DDPGConfig with the variants' settings; each default is plain DDPG."""

    exploration: str = "ou"  # "ou" | "gaussian" (action noise) | "noisy" (NoisyNet actor)
    noisy_sigma0: float = 0.5  # NoisyNet: initial noise scale, sigma0 / sqrt(fan_in) per weight
    replay: str = "uniform"  # "uniform" | "prioritized" (sum-tree PER, Schaul et al. 2016)
    per_alpha: float = 0.6  # PER: priority = (|TD error| + per_eps) ** per_alpha
    per_beta: float = 0.4  # PER: importance-weight exponent at the start...
    per_beta_updates: int = 100_000  # ...annealed linearly to 1 over this many updates
    per_eps: float = 1e-3  # PER: keeps every transition's priority above zero
    batch_norm: bool = False  # batch normalisation in actor and critic (DDPG paper)
    twin_critics: bool = False  # TD3: two critics, the smaller target value in the TD target
    target_noise: float = 0.0  # TD3: std of the Gaussian noise on the target actor's action (0: none)...
    target_noise_clip: float = 0.5  # ...clipped to +- this
    policy_delay: int = 1  # TD3: the actor and the targets learn every this many critic updates
    ensemble: int = 1  # REDQ: this many critics (1: one critic), the actor climbing their mean...
    ensemble_subset: int = 2  # ...and the TD target the smallest target value of this many, drawn per update
    crossq: bool = False  # CrossQ: batch-renormalised critic, no target networks (ddpg/variants/crossq.py)
    renorm_warmup: int = 1000  # CrossQ: plain batch norm for this many updates, then renormalised
    goal_paths: int = 0  # Reacher: each episode also stored against this many more goal paths (goal_paths.py)

    UNKNOWN_HINT = ""
    COUNTS = (*DDPGConfig.COUNTS, "per_beta_updates", "policy_delay", "ensemble", "ensemble_subset")
    NON_NEGATIVE = (*DDPGConfig.NON_NEGATIVE, "noisy_sigma0", "per_alpha", "per_eps", "target_noise", "target_noise_clip",
                    "renorm_warmup")
    FRACTIONS = (*DDPGConfig.FRACTIONS, "per_beta")

    def problems(self) -> list[str]:
        problems = super().problems()
        for name, allowed in (("exploration", ("ou", "gaussian", "noisy")), ("replay", ("uniform", "prioritized"))):
            if getattr(self, name) not in allowed:
                problems.append(f"{name} must be one of {list(allowed)}, got {getattr(self, name)!r}")
        if not (isinstance(self.goal_paths, int) and not isinstance(self.goal_paths, bool) and self.goal_paths >= 0):
            problems.append(f"goal_paths must be a whole number >= 0 (0: off), got {self.goal_paths!r}")
        if is_number(self.per_eps) and self.per_eps <= 0:
            problems.append(f"per_eps must be > 0 (a zero priority is never replayed), got {self.per_eps!r}")
        if is_number(self.ensemble_subset) and is_number(self.ensemble) and self.ensemble > 1 \
                and self.ensemble_subset > self.ensemble:
            problems.append(f"ensemble_subset must be at most ensemble ({self.ensemble}), got {self.ensemble_subset!r}")
        if self.ensemble_subset != VariantConfig.ensemble_subset and self.ensemble == 1:
            problems.append("ensemble_subset is set but does nothing without ensemble > 1 (got ensemble 1)")
        if self.ensemble != 1 and (self.twin_critics or self.crossq or self.batch_norm):
            problems.append("ensemble is not combined here with twin_critics, crossq or batch_norm")
        if self.crossq and (self.batch_norm or self.critic_layer_norm):
            problems.append("crossq has its own normalisation: not combined with batch_norm or critic_layer_norm "
                            "(on by default: set it false; parse_config does for {\"crossq\": true})")
        for name, (switch, value) in NEEDS.items():
            if getattr(self, name) != getattr(VariantConfig, name) and getattr(self, switch) != value:
                problems.append(f"{name} is set but does nothing without {switch} {value!r} "
                                f"(got {switch} {getattr(self, switch)!r})")
        return problems

    def variants(self) -> dict[str, Any]:
        """The switches set away from plain DDPG ({} when none is)."""
        return {k: getattr(self, k) for k in VARIANT_SWITCHES if getattr(self, k) != getattr(VariantConfig, k)}

    def plain(self) -> DDPGConfig:
        """The same settings as a ``DDPGConfig``; an error when a variant is switched on."""
        if self.variants():
            raise ValueError(f"the variants {self.variants()} run on variants.VariantAgent, not plain DDPG")
        return DDPGConfig.from_dict({name: getattr(self, name) for name in PLAIN_KEYS})


def parse_config(values: dict[str, Any]) -> DDPGConfig:
    """A ``DDPGConfig`` from a dict of settings, or a ``VariantConfig`` when the dict switches a
    variant on (``batch_norm`` and ``crossq`` turn the critic's layer norm off unless the dict sets it).
    Unknown keys and bad values are a ValueError naming them and the valid keys. Variant keys
    left at plain DDPG's values (older run records hold them all) are dropped."""
    preset = values.get("preset")
    if preset is not None and (not isinstance(preset, str) or preset not in PRESETS):
        raise ValueError(f"unknown preset {preset!r}; presets: {sorted(PRESETS)}")
    values = {**PRESETS.get(preset, {}), **{k: v for k, v in values.items() if k != "preset"}}
    if values.get("batch_norm") is True or values.get("crossq") is True:  # their own norm replaces layer norm
        values = {"critic_layer_norm": False, **values}
    config = VariantConfig.from_dict(values)
    return config if config.variants() else config.plain()


def variants_of(config: DDPGConfig) -> dict[str, Any]:
    """The variants a config switches on ({} for plain DDPG), whichever class it is."""
    return config.variants() if isinstance(config, VariantConfig) else {}


__all__ = ["DATA_ONLY", "PRESETS", "VARIANT_SWITCHES", "VariantConfig", "parse_config", "variants_of"]
