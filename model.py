"""Actor and critic networks for DDPG on Reacher (course-style constructors).

Both networks are small MLPs initialised as in the DDPG paper (Lillicrap et al. 2016):
hidden layers uniform in +-1/sqrt(fan_in), the output layer uniform in +-3e-3 so that the
initial policy and Q-values are near zero and the first updates are not dominated by
arbitrary large outputs. The critic takes the action at its second layer, as in the paper
and the course.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

FINAL_INIT = 3e-3


def hidden_init(layer: nn.Linear) -> tuple[float, float]:
    """Return the (low, high) range for a hidden layer: +-1/sqrt(fan_in).

    fan_in is the number of *inputs* of the layer (weight.size(1)); some course code used
    weight.size(0), the number of outputs, which is a bug for non-square layers.
    """
    lim = 1.0 / math.sqrt(layer.weight.size(1))
    return -lim, lim


def _init_linear(layer: nn.Linear, final: bool) -> None:
    """Initialise weights and biases of one layer in place (paper scheme)."""
    lo, hi = (-FINAL_INIT, FINAL_INIT) if final else hidden_init(layer)
    nn.init.uniform_(layer.weight, lo, hi)
    nn.init.uniform_(layer.bias, lo, hi)


class Actor(nn.Module):
    """Deterministic policy: state -> action in [-1, 1] (tanh output)."""

    def __init__(
        self,
        state_size: int,
        action_size: int,
        seed: int,
        fc1_units: int = 128,
        fc2_units: int = 128,
    ) -> None:
        super().__init__()
        # Seeding here keeps the course convention: the same seed gives the same weights.
        self.seed = torch.manual_seed(seed)
        self.fc1 = nn.Linear(state_size, fc1_units)
        self.fc2 = nn.Linear(fc1_units, fc2_units)
        self.fc3 = nn.Linear(fc2_units, action_size)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw all weights with the DDPG-paper initialisation."""
        _init_linear(self.fc1, final=False)
        _init_linear(self.fc2, final=False)
        _init_linear(self.fc3, final=True)

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        """Map a batch of states (B, state_size) to actions (B, action_size)."""
        x = F.relu(self.fc1(state))
        x = F.relu(self.fc2(x))
        return torch.tanh(self.fc3(x))


class Critic(nn.Module):
    """Q-network: (state, action) -> scalar value; the action joins the first hidden layer's output.

    With ``layer_norm`` each hidden layer's pre-activations are normalised over its units, per
    sample, before the ReLU (Ba et al. 2016). It keeps the hidden units, and so the action
    gradient the actor climbs, on one scale while the Q-values grow; unlike batch norm it has
    no running statistics and no train/eval modes, so the targets compute what learning does.
    """

    def __init__(
        self,
        state_size: int,
        action_size: int,
        seed: int,
        fcs1_units: int = 128,
        fc2_units: int = 128,
        layer_norm: bool = False,
    ) -> None:
        super().__init__()
        self.seed = torch.manual_seed(seed)
        self.fcs1 = nn.Linear(state_size, fcs1_units)
        self.fc2 = nn.Linear(fcs1_units + action_size, fc2_units)
        self.fc3 = nn.Linear(fc2_units, 1)
        self.ln1 = nn.LayerNorm(fcs1_units) if layer_norm else nn.Identity()
        self.ln2 = nn.LayerNorm(fc2_units) if layer_norm else nn.Identity()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw all weights with the DDPG-paper initialisation."""
        _init_linear(self.fcs1, final=False)
        _init_linear(self.fc2, final=False)
        _init_linear(self.fc3, final=True)

    def forward(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """Return Q(state, action) with shape (B, 1)."""
        xs = F.relu(self.ln1(self.fcs1(state)))
        x = F.relu(self.ln2(self.fc2(torch.cat((xs, action), dim=1))))
        return self.fc3(x)


# The widths a config sets, and the widths built (by this file's layer names), which the config records.
def given(**sizes: int | None) -> dict[str, int]:
    """The networks' widths a config sets (None: model.py's own default)."""
    return {name: size for name, size in sizes.items() if size is not None}


def built_widths(actor: nn.Module, critic: nn.Module) -> dict[str, int]:
    """The hidden widths of model.py's networks as built (by its layer names), for the config to record:
    a rebuilt agent (watch.py, evaluate.py, --resume) then passes them, whatever model.py's defaults are by then."""
    layers = {"actor_fc1": (actor, "fc1"), "actor_fc2": (actor, "fc2"), "critic_fc1": (critic, "fcs1"),
              "critic_fc2": (critic, "fc2")}
    widths = {key: getattr(getattr(net, name, None), "out_features", None) for key, (net, name) in layers.items()}
    return {key: width for key, width in widths.items() if isinstance(width, int)}
