"""The variants: one entry each, naming the config switch that turns it on and its piece.

A piece is a small class in the variant's own module that replaces or wraps the named parts of
``ddpg_agent.Agent`` (``make_actor``, ``make_critic``, ``make_noise``, ``make_memory``,
``td_target``, ``target_action``, ``target_value``, ``critic_loss``, ``actor_loss``, ``optimise``,
...) and of ``VariantAgent`` (``make_one_critic``, ``critic_values``, ``smallest``, ``value_loss``),
calling ``super()`` for the rest. ``VariantAgent`` puts the pieces a config switches on in front
of itself, in the order below (the first wraps all the others), so adding a variant is its module,
its config fields (``config.VariantConfig``) and one line here. What the other modules need to
know of the variants is read from these entries: the switches (``switches``), the ones every
learner runs (``data_only``), each variant's own settings (``needs``), and why a CUDA graph
cannot capture one (``capture_problems``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ddpg.variants.batch_norm import BatchNormNetworks
from ddpg.variants.crossq import CrossQ
from ddpg.variants.ensemble import Ensemble
from ddpg.variants.gaussian import GaussianExploration
from ddpg.variants.goal_paths import GoalPathsPiece
from ddpg.variants.joint_input import JointInput
from ddpg.variants.noisy import NoisyExploration
from ddpg.variants.normalise import ObservationNormalisation
from ddpg.variants.prioritized import PrioritizedReplay
from ddpg.variants.sac import SoftActorCritic
from ddpg.variants.twin import PolicyDelay, TargetSmoothing, TwinCritics

# The parts a piece may replace or wrap, each named once: (the part that calls it in an update, or
# the constructor for the networks, noise and buffer; the concern it owns). A piece that replaces
# a part must call super() where another active piece's part comes after it, and a part a variant
# ``needs`` must be called by its caller, up to ``learn_many`` (``compose.problem`` refuses otherwise).
PARTS: dict[str, tuple[str, str]] = {
    "make_actor": ("__init__", "the actor network"),
    "make_critic": ("__init__", "the critic module: one critic, a pair or an ensemble"),
    "make_one_critic": ("make_critic", "one critic network"),
    "make_noise": ("__init__", "the exploration noise"),
    "make_memory": ("__init__", "the replay buffer"),
    "learn": ("learn_many", "one update from a batch, through td_target, critic_loss, actor_loss and optimise"),
    "td_target": ("learn", "the TD target y"),
    "target_action": ("td_target", "the target actor's action at s'"),
    "next_action": ("td_target", "the action at s' a target values, with what its value gains (SAC: -alpha log pi)"),
    "target_value": ("td_target", "the target critics' value at (s', a')"),
    "smallest": ("target_value", "the value a target takes from several critics' values"),
    "critic_loss": ("learn", "the loss of every critic"),
    "critic_values": ("critic_loss", "each critic's Q(s, a)"),
    "value_loss": ("critic_loss", "the loss from the critics' values and y"),
    "actor_loss": ("learn", "the actor's loss"),
    "optimise": ("learn", "the gradient steps and the targets' update"),
    "soft_update": ("optimise", "the targets' update"),
}


@dataclass(frozen=True)
class Variant:
    """``piece`` runs when the config's ``switch`` equals ``value`` (or, with no value, differs
    from its default). ``settings``: its own fields, which do nothing without it (a variant added
    by ``register`` declares them in ``fields``, built-in ones in ``VariantConfig``); ``data_only``:
    it changes what is stored, not the update, so every learner runs it; ``capture_problem``: why
    a CUDA graph cannot capture its update (None: it can); ``takes_over``: parts its piece computes itself
    for the pieces behind it (CrossQ's target, inside its critic's loss), each with the part through which a
    piece behind still takes part (``next_action``: SAC's sampled action and entropy term)."""

    switch: str
    piece: type
    value: Any = None
    settings: tuple[str, ...] = ()
    data_only: bool = False
    capture_problem: str | None = None
    fields: tuple[tuple[str, type, Any], ...] = ()  # a registered variant's own config fields: (name, type, setting)
    needs: tuple[str, ...] = ()  # its parts (PARTS) that every update must call, or it silently does nothing
    # Parts it computes itself for the pieces behind it, each with the part through which they still take part:
    # (("td_target", "next_action"),): a piece behind whose td_target it replaces composes if it gives next_action.
    takes_over: tuple[tuple[str, str], ...] = ()

    def is_on(self, config: Any) -> bool:
        now = getattr(config, self.switch, None)
        if self.value is not None:
            return now == self.value
        default = {f.name: f.default for f in fields(config)}.get(self.switch)
        return self.switch in {f.name for f in fields(config)} and now != default


VARIANTS: list[Variant] = [
    # in front of the pieces whose actor_loss replaces Agent's (CrossQ, SAC): its own skips theirs between actor steps
    Variant("policy_delay", PolicyDelay, needs=("optimise", "actor_loss")),
    Variant("obs_norm", ObservationNormalisation,
            capture_problem="observation normalisation updates its statistics at every step, which a graph replaying "
                            "while the environment steps would read mid-write (not yet made safe, nor tried on a GPU)"),
    Variant("replay", PrioritizedReplay, "prioritized", ("per_alpha", "per_beta", "per_beta_updates", "per_eps"),
            capture_problem="prioritized replay keeps its sum tree on the host and updates it after every update",
            needs=("learn", "value_loss")),
    Variant("crossq", CrossQ, True, ("renorm_warmup",), needs=("td_target", "critic_loss"),
            takes_over=(("td_target", "next_action"),)),
    Variant("sac", SoftActorCritic, needs=("td_target", "actor_loss"),
            capture_problem="SAC's update is not yet captured as a CUDA graph, nor tried on a GPU"),
    Variant("exploration", NoisyExploration, "noisy", ("noisy_sigma0",),
            capture_problem="NoisyNet draws its weight noise from a CPU generator", needs=("learn",)),
    Variant("exploration", GaussianExploration, "gaussian"),
    Variant("goal_paths", GoalPathsPiece, data_only=True),
    Variant("target_noise", TargetSmoothing, settings=("target_noise_clip",), needs=("target_action",)),
    Variant("twin_critics", TwinCritics, needs=("critic_values",)),
    Variant("ensemble", Ensemble, settings=("ensemble_subset",), needs=("critic_values",)),
    Variant("batch_norm", BatchNormNetworks),
    # behind the pieces that build their own critic (batch norm, CrossQ): compose refuses those pairs by name
    Variant("critic_action", JointInput, "first"),
]


def switches() -> tuple[str, ...]:
    """The config fields that turn a variant on, in the registry's order, each once."""
    return tuple(dict.fromkeys(v.switch for v in VARIANTS))


def data_only() -> frozenset[str]:
    """The switches of variants that change only what goes into the buffer."""
    return frozenset(v.switch for v in VARIANTS if v.data_only)


def needs() -> dict[str, tuple[str, Any]]:
    """Each variant's own setting, and the switch (with the value) without which it does nothing."""
    return {name: (v.switch, v.value) for v in VARIANTS for name in v.settings if v.value is not None}


def pieces(config: Any) -> tuple[type, ...]:
    """The pieces a config switches on, outermost first."""
    return tuple(v.piece for v in VARIANTS if v.is_on(config))


def capture_problems(config: Any) -> list[str]:
    """Why a CUDA graph cannot capture this config's update ([] when it can)."""
    return [v.capture_problem for v in VARIANTS if v.capture_problem and v.is_on(config)]


def register(variant: Variant) -> None:
    """Add a variant after the built-in ones: its piece, its switch and its config ``fields``,
    which ``config.config_class()`` (so ``parse_config``, ``train.py --config``) then takes."""
    VARIANTS.append(variant)


def unregister(variant: Variant) -> None:
    """Take a registered variant out again (tests)."""
    VARIANTS.remove(variant)


__all__ = ["PARTS", "VARIANTS", "Variant", "capture_problems", "data_only", "needs", "pieces", "register", "switches", "unregister"]
