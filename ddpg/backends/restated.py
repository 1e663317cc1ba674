"""What the fast paths restate, in one table: the parts of the loaded code they compute by hand, and
the library functions that code calls.

``fast_cpu.FastCPU`` (the update) and ``fast_steps.FastSteps`` (acting and storing, "the decisions")
compute what these parts compute without running them. ``admission`` fingerprints each part as the
agent would call it and compares it with the record; ``guard`` checks, at every entry of a fast
path, that each part and each library function is still the object it was admitted for. A part a
fast path does not restate is called as the readable code calls it, and needs no entry here.
"""

from __future__ import annotations

UPDATE, DECISIONS = "update", "decisions"
RESTATER = {UPDATE: "the fast learner", DECISIONS: "the fast decisions"}

# "Class.function": (where the agent keeps the object whose function it is: "" the agent itself,
# else its attribute; the fast paths that restate it). "Actor" and "Critic" are the classes of the
# agent's networks. The parts only ``variants.VariantAgent`` has (critic_values, smallest,
# value_loss) are checked where the agent has them: a data-only variant runs fast.
PARTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "Actor.__init__": ("actor_local", (UPDATE,)),
    "Actor.forward": ("actor_local", (UPDATE, DECISIONS)),
    "Critic.__init__": ("critic_local", (UPDATE,)),
    "Critic.forward": ("critic_local", (UPDATE,)),
    "Agent.__init__": ("", (UPDATE,)),
    "Agent.act": ("", (DECISIONS,)),
    "Agent.step": ("", (UPDATE, DECISIONS)),
    "Agent.policy": ("", (UPDATE, DECISIONS)),
    "Agent.learn_many": ("", (UPDATE,)),
    "Agent.learn": ("", (UPDATE,)),
    "Agent.td_target": ("", (UPDATE,)),
    "Agent.target_action": ("", (UPDATE,)),
    "Agent.target_value": ("", (UPDATE,)),
    "Agent.critic_values": ("", (UPDATE,)),
    "Agent.smallest": ("", (UPDATE,)),
    "Agent.critic_loss": ("", (UPDATE,)),
    "Agent.value_loss": ("", (UPDATE,)),
    "Agent.actor_loss": ("", (UPDATE,)),
    "Agent.optimise": ("", (UPDATE,)),
    "Agent.soft_update": ("", (UPDATE,)),
    "ReplayBuffer.__init__": ("memory", (UPDATE,)),
    "ReplayBuffer.sample": ("memory", (UPDATE,)),
    "ReplayBuffer.split": ("memory", (UPDATE,)),
    "ReplayBuffer.add": ("memory", (DECISIONS,)),
    "ReplayBuffer.__len__": ("memory", (DECISIONS,)),
    "OUNoise.sample": ("noise", (DECISIONS,)),
    "NStepReturns.push": ("returns", (DECISIONS,)),
    "NStepReturns.transitions": ("returns", (DECISIONS,)),
}
# The settings (DDPGConfig's fields) the fast paths read where the readable code reads them. A setting not
# here must stay at its default (the value admission --write's check ran the code with), or the readable
# learner runs: add it once fast_cpu.py or fast_steps.py handles it, then remake the record (--write).
SETTINGS = ("buffer_size", "batch_size", "gamma", "tau", "lr_actor", "lr_critic", "weight_decay", "actor_fc1", "actor_fc2",
            "critic_fc1", "critic_fc2", "learn_every", "learn_updates", "warmup", "grad_clip", "noise_sigma", "noise_theta",
            "noise_decay", "noise_min", "n_step", "critic_layer_norm")
FILES = {"Actor": "model.py", "Critic": "model.py", "Agent": "ddpg_agent.py", "ReplayBuffer": "ddpg_agent.py",
         "OUNoise": "ddpg_agent.py", "NStepReturns": "ddpg_agent.py"}
WITHOUT_DEFAULTS = {"Actor.__init__", "Critic.__init__"}  # widths: read from the networks built

# The library functions the restated parts call, by where they are looked up ("module:attribute" or
# "module:Class.attribute"), with the parts that call them: the fast paths compute what PyTorch's own
# objects compute, so each must still be PyTorch's own (``guard``).
LIBRARY: dict[str, tuple[str, ...]] = {
    "torch.nn.functional:relu": ("Actor.forward", "Critic.forward"),
    "torch:tanh": ("Actor.forward",),
    "torch:cat": ("Critic.forward",),
    "torch.nn.functional:linear": ("Actor.forward", "Critic.forward"),
    "torch.nn.functional:layer_norm": ("Critic.forward",),
    "torch.nn:Linear.forward": ("Actor.forward", "Critic.forward"),
    "torch.nn:LayerNorm.forward": ("Critic.forward",),
    "torch.nn:Identity.forward": ("Critic.forward",),
    "torch.nn:Module.__call__": ("Actor.forward", "Critic.forward"),
    "torch.nn:Module._call_impl": ("Actor.forward", "Critic.forward"),
    "torch:from_numpy": ("Agent.policy",),
    "torch:no_grad": ("Agent.policy", "Agent.td_target"),
    "torch.nn.functional:mse_loss": ("Agent.critic_loss",),
    "torch:Tensor.mean": ("Agent.actor_loss",),
    "torch:Tensor.backward": ("Agent.optimise",),
    "torch.autograd:backward": ("Agent.optimise",),
    "torch.nn.utils:clip_grad_norm_": ("Agent.optimise",),
    "torch.optim:Optimizer.zero_grad": ("Agent.optimise",),
    "torch.optim:Adam.step": ("Agent.optimise",),
    "torch:_fused_adam_": ("Agent.optimise",),
    "torch:Tensor.lerp_": ("Agent.soft_update",),
    "torch:randint": ("ReplayBuffer.sample",),
}


def parts(path: str) -> dict[str, str]:
    """The parts ``path`` (UPDATE or DECISIONS) restates: label -> where the agent keeps it."""
    return {label: where for label, (where, paths) in PARTS.items() if path in paths}


def library(labels: set[str] | dict[str, str]) -> list[str]:
    """The library functions the ``labels`` call."""
    return [name for name, callers in LIBRARY.items() if set(callers) & set(labels)]


ACTING = ("Actor.forward", "Agent.policy")  # what the fast learner's acting (``policy``) restates


__all__ = ["ACTING", "DECISIONS", "FILES", "LIBRARY", "PARTS", "RESTATER", "SETTINGS", "UPDATE", "WITHOUT_DEFAULTS", "library",
           "parts"]
