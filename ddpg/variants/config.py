"""``VariantConfig``: ``ddpg_agent.DDPGConfig`` plus the variants' keys, and ``parse_config``.

The readable agent's config holds plain DDPG only; the keys below switch on the pieces of
this package. Every command line (``train.py``, ``sweep.py``, the benchmarks) and ``ddpg.agents``
read a JSON config through ``parse_config``, which gives a plain ``DDPGConfig`` when no
variant is set, so a plain run records (and reproduces) exactly the readable agent's config.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, fields
from typing import Any

from ddpg.variants import registry, settings
from ddpg.variants.settings import is_number
from ddpg_agent import DDPGConfig, setting

# TD3 (Fujimoto et al. 2018) is DDPG with three changes switched on, as in Stable-Baselines3:
# --config '{"preset": "td3"}' sets these (keys given beside it override them).
# REDQ (Chen et al. 2021): ten critics, targets from the smaller of a random two; CrossQ (Bhatt
# et al. 2024): batch-renormalised twin critics without target networks, the actor every third update.
# SAC (Haarnoja et al. 2018): the soft actor-critic piece (variants/sac.py) with TD3's twin critics.
PRESETS = {"td3": {"twin_critics": True, "target_noise": 0.2, "target_noise_clip": 0.5, "policy_delay": 2},
           "sac": {"sac": True, "twin_critics": True},
           "redq": {"ensemble": 10, "ensemble_subset": 2},
           "crossq": {"crossq": True, "twin_critics": True, "policy_delay": 3}}
PLAIN_KEYS = frozenset(f.name for f in fields(DDPGConfig))


@dataclass
class VariantConfig(DDPGConfig):
    """DDPGConfig with the variants' settings; each default is plain DDPG."""

    exploration: str = setting("ou", ("ou", "gaussian", "noisy"), "action noise, or a NoisyNet actor", network=True)
    noisy_sigma0: float = setting(0.5, ">=0", "NoisyNet: initial noise, sigma0 / sqrt(fan_in)", network=True)
    replay: str = setting("uniform", ("uniform", "prioritized"), "sum-tree PER (Schaul et al. 2016)", built=True)
    per_alpha: float = setting(0.6, ">=0", "PER: priority = (|TD error| + per_eps) ** per_alpha", built=True)
    per_beta: float = setting(0.4, "fraction", "PER: importance-weight exponent at the start...", built=True)
    per_beta_updates: int = setting(100_000, "count", "...annealed linearly to 1 over this many updates", built=True)
    per_eps: float = setting(1e-3, ">=0", "PER: keeps every transition's priority above zero", built=True)
    batch_norm: bool = setting(False, "bool", "batch normalisation in actor and critic (DDPG paper)", network=True)
    twin_critics: bool = setting(False, "bool", "TD3: two critics, the smaller target value", network=True)
    target_noise: float = setting(0.0, ">=0", "TD3: std of the noise on the target actor's action (0: none)...")
    target_noise_clip: float = setting(0.5, ">=0", "...clipped to +- this")
    policy_delay: int = setting(1, "count", "TD3: the actor and the targets learn every this many critic updates")
    ensemble: int = setting(1, "count", "REDQ: this many critics, the actor climbing their mean...", network=True)
    ensemble_subset: int = setting(2, "count", "...the TD target the smallest target value of this many")
    crossq: bool = setting(False, "bool", "CrossQ: batch-renormalised critic, no target networks", network=True)
    renorm_warmup: int = setting(1000, ">=0", "CrossQ: plain batch norm for this many updates, then renormalised", built=True)
    critic_action: str = setting("second", ("second", "first"), "the critic's layer the action joins: its second "
                                 "(the DDPG paper's, model.py) or its first, beside the state (TD3's and SAC's)",
                                 network=True)
    obs_norm: bool = setting(False, "bool", "observations normalised by their running mean and std (saved in the networks)",
                             network=True)
    sac: bool = setting(False, "bool", "SAC: a tanh-squashed Gaussian actor acting by its samples, the entropy in its "
                        "targets and loss, a learned temperature", network=True)
    goal_paths: int = setting(0, "whole", "Reacher: each episode also stored against this many more goal paths", built=True)

    def __post_init__(self) -> None:
        found = self.problems()
        if found:
            raise ValueError("; ".join(found))  # (no class name: plain DDPG settings are read through this class)

    def problems(self) -> list[str]:
        problems = settings.problems(self)  # each field's own check (ddpg_agent.setting); here, how they combine
        if is_number(self.per_eps) and self.per_eps <= 0:
            problems.append(f"per_eps must be > 0 (a zero priority is never replayed), got {self.per_eps!r}")
        if is_number(self.ensemble_subset) and is_number(self.ensemble) and self.ensemble > 1 \
                and self.ensemble_subset > self.ensemble:
            problems.append(f"ensemble_subset must be at most ensemble ({self.ensemble}), got {self.ensemble_subset!r}")
        if self.ensemble_subset != VariantConfig.ensemble_subset and self.ensemble == 1:
            problems.append("ensemble_subset is set but does nothing without ensemble > 1 (got ensemble 1)")
        if self.batch_norm and (self.exploration == "noisy" or self.critic_layer_norm):
            problems.append("batch_norm is not combined here with exploration 'noisy' or with critic_layer_norm "
                            "(on by default: set it false; parse_config does for {\"batch_norm\": true})")
        if self.ensemble != 1 and (self.twin_critics or self.crossq or self.batch_norm):
            problems.append("ensemble is not combined here with twin_critics, crossq or batch_norm")
        if self.crossq and (self.batch_norm or self.critic_layer_norm):
            problems.append("crossq has its own normalisation: not combined with batch_norm or critic_layer_norm "
                            "(on by default: set it false; parse_config does for {\"crossq\": true})")
        if self.sac and (self.exploration != "ou" or self.target_noise or self.batch_norm):
            problems.append("sac acts by its own samples and targets: not combined with exploration 'gaussian' or "
                            "'noisy', target_noise or batch_norm")
        for name, (switch, value) in registry.needs().items():  # a variant's own settings, without it
            if getattr(self, name) != getattr(type(self), name) and getattr(self, switch) != value:
                problems.append(f"{name} is set but does nothing without {switch} {value!r} "
                                f"(got {switch} {getattr(self, switch)!r})")
        return problems

    def variants(self) -> dict[str, Any]:
        """The switches set away from plain DDPG ({} when none is)."""
        return {k: getattr(self, k) for k in registry.switches() if getattr(self, k) != getattr(type(self), k)}

    def plain(self) -> DDPGConfig:
        """The same settings as a ``DDPGConfig``; an error when a variant is switched on."""
        if self.variants():
            raise ValueError(f"the variants {self.variants()} run on variants.VariantAgent, not plain DDPG")
        return DDPGConfig(**{name: getattr(self, name) for name in PLAIN_KEYS})


# The settings a checkpoint's shapes and kind of network depend on, declared by their fields
# (``network=True``): an agent rebuilt from a run for acting takes these from run.json.
NETWORK_KEYS = settings.network_keys(VariantConfig)


@functools.cache
def _with_fields(extra: tuple[tuple[str, type, Any], ...]) -> type:
    return dataclasses.make_dataclass("VariantConfig", list(extra), bases=(VariantConfig,))


def config_class() -> type:
    """``VariantConfig``, with the config fields of the variants added by ``registry.register`` (a
    subclass, made once for each set of them)."""
    extra = tuple(spec for variant in registry.VARIANTS for spec in variant.fields)
    return _with_fields(extra) if extra else VariantConfig


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
    config = settings.from_dict(config_class(), values)
    return config if config.variants() else config.plain()


def variants_of(config: DDPGConfig) -> dict[str, Any]:
    """The variants a config switches on ({} for plain DDPG), whichever class it is."""
    return config.variants() if isinstance(config, VariantConfig) else {}


def switch_value(variant: registry.Variant) -> Any:
    """A value of a variant's switch that turns it on: its own, else the one a preset gives it, else true for a
    yes/no switch; None where only the user can say (a count of its own, such as goal_paths)."""
    if variant.value is not None:
        return variant.value
    preset = next((p[variant.switch] for p in PRESETS.values() if variant.switch in p), None)
    default = {f.name: f.default for f in fields(config_class())}.get(variant.switch)
    return preset if preset is not None else True if isinstance(default, bool) else None


def describe() -> str:
    """Each setting a --config may give: its name, default and meaning, read from the fields' metadata
    (``train.py --settings``), so the command line says what the Report's table says, from one place."""
    import json

    lines, seen = [], set()
    for cls, title in ((DDPGConfig, "DDPGConfig (ddpg_agent.py)"), (VariantConfig, "variants.VariantConfig, besides")):
        lines.append(f"{title}: name, default, meaning")
        for f in fields(cls):
            if f.name not in seen:
                default = "null (model.py's own)" if f.default is None else json.dumps(f.default)
                lines.append(f"  {f.name:<18} {default:<10} {f.metadata.get('doc', '')}")
                seen.add(f.name)
    return "\n".join(lines)


__all__ = ["NETWORK_KEYS", "PRESETS", "VariantConfig", "config_class", "describe", "parse_config", "switch_value",
           "variants_of"]
