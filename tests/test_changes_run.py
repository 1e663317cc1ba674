"""What a learner changes at run time is what trains: the default learner (``auto`` on the CPU, what
``train.py``, ``make run`` and the notebook's ``attach(agent)`` take) runs the agent's own ``act``,
``step`` and ``learn`` on its own modules and optimisers, so a change to any of them, made at any
moment, changes the run, and what the agent's code refuses is refused where the code refuses it.

Each change below is one a course learner makes (a frozen layer, a gradient hook, a wrapped or
swapped module, a rebound library function, weights loaded with ``assign=True``, an optimiser
setting). Each is made after the agent is built and attached, between two training runs of the
same seed, and what it must do is checked: the run differs from the unchanged one, and a frozen
or hooked tensor stays where the change holds it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import model
from ddpg.agents import make_agent
from ddpg.loop import train
from ddpg_agent import Agent, DDPGConfig
from tests._agent_helpers import QUICK_LEARNING, FakeEnv

EPISODES, STEPS = 2, 60


def _agent(capsys: pytest.CaptureFixture[str] | None = None) -> Agent:
    torch.manual_seed(0)
    agent = make_agent("auto", (33, 4, 0), DDPGConfig(**QUICK_LEARNING))
    if capsys is not None:
        assert capsys.readouterr().out.startswith("Learner: readable.")
    return agent


def _train(agent: Agent) -> np.ndarray:
    """Two short episodes of two fake arms (a few dozen updates); the scores."""
    torch.manual_seed(1)
    return train(FakeEnv(num_agents=2, seed=1, episode_len=STEPS), agent, episodes=EPISODES, max_t=STEPS,
                 stop_when_solved=False)


def _weights(agent: Agent) -> torch.Tensor:
    nets = (agent.actor_local, agent.critic_local, agent.actor_target, agent.critic_target)
    return torch.cat([p.detach().reshape(-1) for net in nets for p in net.parameters()])


@pytest.fixture(scope="module")
def unchanged() -> torch.Tensor:
    agent = _agent()
    _train(agent)
    assert agent.n_updates > 10
    return _weights(agent)


def _class_swapped(module: nn.Module, forward: Callable[..., torch.Tensor]) -> None:
    module.__class__ = type(f"My{type(module).__name__}", (type(module),), {"forward": forward})


# Each: (name, the change made to a built agent, a check of what it must do after training or None).
CHANGES: list[tuple[str, Callable[[Agent], object], Callable[[Agent, object], None] | None]] = [
    ("a frozen actor layer", lambda a: (a.actor_local.fc1.requires_grad_(False),
                                        a.actor_local.fc1.weight.detach().clone())[1],
     lambda a, before: torch.testing.assert_close(a.actor_local.fc1.weight, before, rtol=0, atol=0)),
    ("the whole actor frozen", lambda a: (a.actor_local.requires_grad_(False),
                                          [p.detach().clone() for p in a.actor_local.parameters()])[1],
     lambda a, before: [torch.testing.assert_close(p, q, rtol=0, atol=0)
                        for p, q in zip(a.actor_local.parameters(), before, strict=True)]),
    ("a gradient hook that zeroes a critic weight's gradient",
     lambda a: (a.critic_local.fc3.weight.register_hook(lambda g: g * 0.0), a.critic_local.fc3.weight.detach().clone())[1],
     lambda a, before: torch.testing.assert_close(a.critic_local.fc3.weight, before, rtol=0, atol=0)),
    ("a post-accumulate-grad hook", lambda a: _count_accumulations(a),
     lambda a, counts: _accumulated_once_per_update(a, counts)),
    ("a submodule wrapped with dropout", lambda a: setattr(a.actor_local, "fc2", nn.Sequential(a.actor_local.fc2,
                                                                                               nn.Dropout(0.2))), None),
    ("a layer norm's eps", lambda a: setattr(a.critic_local.ln1, "eps", 0.5), None),
    ("the layer norms removed", lambda a: [setattr(n, name, nn.Identity()) for n in (a.critic_local, a.critic_target)
                                           for name in ("ln1", "ln2")], None),
    ("weight_norm on one layer of the actor and its target",
     lambda a: [nn.utils.parametrizations.weight_norm(net.fc3) for net in (a.actor_local, a.actor_target)], None),
    ("the actor's class swapped", lambda a: _class_swapped(a.actor_local, lambda self, s: 0.5 * model.Actor.forward(self, s)),
     None),
    ("an optimiser's class swapped", lambda a: _count_steps(a), lambda a, steps: _stepped_every_update(a, steps)),
    ("weights loaded with assign=True", lambda a: _assign_new_actor(a), lambda a, new: _acts_with(a, new)),
    ("amsgrad set mid-run", lambda a: a.critic_optimizer.param_groups[0].update(amsgrad=True), None),
    ("a new learning rate", lambda a: a.actor_optimizer.param_groups[0].update(lr=0.05), None),
    ("tau in the config", lambda a: setattr(a.config, "tau", 0.3), None),
]


def _count_accumulations(agent: Agent) -> list[int]:
    counts = [0]

    def halve(p: torch.Tensor) -> None:  # counts, and changes what the step sees
        counts[0] += 1
        p.grad.mul_(0.5)

    agent.critic_local.fcs1.weight.register_post_accumulate_grad_hook(halve)
    return counts


def _accumulated_once_per_update(agent: Agent, counts: list[int]) -> None:
    assert counts[0] == agent.n_updates  # the critic's own loss only: the actor's backward pass leaves it alone


def _count_steps(agent: Agent) -> list[int]:
    steps = [0]
    base = type(agent.critic_optimizer)

    def step(self: torch.optim.Optimizer, closure: object = None) -> object:
        steps[0] += 1
        for group in self.param_groups:
            group["lr"] = 0.02  # and it changes what the steps do
        return base.step(self, closure)

    agent.critic_optimizer.__class__ = type("Counted", (base,), {"step": step})
    return steps


def _stepped_every_update(agent: Agent, steps: list[int]) -> None:
    assert steps[0] == agent.n_updates > 0


def _assign_new_actor(agent: Agent) -> dict[str, torch.Tensor]:
    new = {k: v * 2.0 for k, v in agent.actor_local.state_dict().items()}
    agent.actor_local.load_state_dict(new, assign=True)
    return new


def _acts_with(agent: Agent, new: dict[str, torch.Tensor]) -> None:
    states = np.random.default_rng(3).standard_normal((5, 33)).astype(np.float32)
    assert np.array_equal(agent.act(states, add_noise=False),
                          np.clip(agent.actor_local(torch.from_numpy(states)).detach().numpy(), -1, 1))
    assert agent.actor_local.fc1.weight is not None and not torch.equal(agent.actor_local.fc1.weight, new["fc1.weight"] / 2)


@pytest.mark.parametrize(("name", "change", "check"), CHANGES, ids=[c[0] for c in CHANGES])
def test_a_change_at_run_time_trains(name, change, check, unchanged, capsys) -> None:
    agent = _agent(capsys)
    held = change(agent)
    _train(agent)
    after = _weights(agent)
    assert after.shape != unchanged.shape or not torch.equal(after, unchanged), f"{name} did not change the run"
    if check is not None:
        check(agent, held)


@pytest.mark.parametrize("where", ["torch.relu", "model.F.relu"])
def test_a_rebound_library_function_runs(where, unchanged, monkeypatch) -> None:
    """A library function rebound before or after the agent is built is what its forward passes call."""
    agent = _agent()
    if where == "torch.relu":
        monkeypatch.setattr(F, "relu", lambda x, inplace=False: torch.clamp(x, 0.0, 0.5))
    else:
        monkeypatch.setattr(model, "F", type("F", (), {"relu": staticmethod(lambda x: torch.clamp(x, 0.0, 0.5))}))
    _train(agent)
    assert not torch.equal(_weights(agent), unchanged)


def test_what_the_code_refuses_is_refused_where_the_code_refuses_it() -> None:
    """Gradients switched off globally, or a network changed without its target (weight_norm on the
    actor alone): the agent's own code raises, and no learner carries on as if it had trained."""
    agent = _agent()
    with torch.set_grad_enabled(False), pytest.raises(RuntimeError, match="does not require grad"):
        _train(agent)
    agent = _agent()
    nn.utils.parametrizations.weight_norm(agent.actor_local.fc3)
    with pytest.raises(RuntimeError, match="same number of tensors"):  # the soft update pairs the parameters
        _train(agent)


def test_an_edit_of_the_agents_methods_runs(unchanged, monkeypatch) -> None:
    """A part of the update replaced on the class (as an edit of ddpg_agent.py does) runs: the
    critic's loss as written plus a penalty on its values trains another run."""
    written = Agent.critic_loss
    monkeypatch.setattr(Agent, "critic_loss",
                        lambda self, s, a, y: written(self, s, a, y) + 0.1 * self.critic_local(s, a).pow(2).mean())
    agent = _agent()
    _train(agent)
    assert not torch.equal(_weights(agent), unchanged)
