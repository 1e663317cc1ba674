"""A setting changed in ``agent.config`` while training acts from its next use, or is refused by name.

Every field of the config (plain DDPG's and the variants') is walked: a field declared ``built`` (read only when the
agent is built: its networks, buffer, n-step returns) must be refused at the next decision with one line naming it;
every other field must have an entry in ``EFFECTS`` below, a check that the next decision, update or draw uses the new
value. A new setting that is neither fails the walk until it is declared one or the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields

import numpy as np
import pytest
import torch

from ddpg.variants import VariantAgent, parse_config
from ddpg.variants.config import config_class
from ddpg_agent import Agent

S, A = 6, 2
SMALL = {"buffer_size": 600, "batch_size": 16, "warmup": 32, "learn_every": 4, "learn_updates": 2}


def _agent(seed: int = 0, **settings: object) -> Agent:
    config = parse_config({**SMALL, **settings})
    cls = VariantAgent if type(config).__name__ == "VariantConfig" else Agent
    return cls(S, A, seed, config=config)


def _transitions(seed: int, steps: int, arms: int = 3) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(arms, S)), rng.uniform(-1, 1, (arms, A)), rng.uniform(0, 1, arms),
             rng.normal(size=(arms, S)), rng.random(arms) < 0.05) for _ in range(steps)]


def _run(agent: Agent, transitions: list[tuple[np.ndarray, ...]]) -> None:
    for states, actions, rewards, next_states, terminated in transitions:
        agent.act(states)
        agent.step(states, actions, rewards, next_states, terminated, np.zeros(len(states), bool))  # a vector env


def _changed_mid_run(name: str, value: object, **settings: object) -> Agent:
    """An agent past its warm-up, ``name`` set to ``value``, and one more decision stepped (no update in it)."""
    agent = _agent(**settings)
    _run(agent, _transitions(1, 40))  # 120 transitions, updates at every 4th decision from the 11th
    setattr(agent.config, name, value)
    _run(agent, _transitions(2, 1))  # decision 41: the change is taken up, no learning step
    return agent


def _spy(agent: Agent, method: str) -> list[tuple]:
    """Calls of an agent's method from now on, by their arguments."""
    calls: list[tuple] = []
    real = getattr(agent, method)

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(args + tuple(kwargs.values()))
        return real(*args, **kwargs)

    setattr(agent, method, spy)
    return calls


# ------------------------------------------------------------------ the effect of each live setting
def _gamma() -> None:
    """The next update's targets discount at the new gamma: every stored n-step return and discount is made again
    (as an agent built with it stores them), and the transitions still pending sum at it too."""
    agent = _changed_mid_run("gamma", 0.5, gamma=0.9, n_step=3)
    reference = _agent(gamma=0.5, n_step=3)
    _run(reference, _transitions(1, 40) + _transitions(2, 1))
    n = len(agent.memory)
    assert n == len(reference.memory) > 100
    for column in ("rewards", "discounts"):
        lo, hi = agent.memory.columns[column]
        np.testing.assert_allclose(agent.memory.data[:n, lo:hi], reference.memory.data[:n, lo:hi], rtol=1e-6)
    targets = _spy(agent, "td_target")
    _run(agent, _transitions(3, 3))  # decision 44: a learning step
    discounts = torch.cat([call[2] for call in targets]).flatten()
    assert len(targets) == 2 and set(np.round(discounts.numpy(), 6)) <= {0.0, 0.125}


def _batch_size() -> None:
    agent = _changed_mid_run("batch_size", 5)
    targets = _spy(agent, "td_target")
    _run(agent, _transitions(3, 3))
    assert [len(call[0]) for call in targets] == [5, 5]


def _tau() -> None:
    agent = _changed_mid_run("tau", 0.3)
    soft = _spy(agent, "soft_update")
    _run(agent, _transitions(3, 3))
    assert [call[2] for call in soft] == [0.3] * 4  # two updates, two pairs of networks


def _rate(optimizer: str, key: str, name: str) -> Callable[[], None]:
    def check() -> None:
        agent = _changed_mid_run(name, 0.0123)
        steps = []
        opt = getattr(agent, optimizer)
        real = opt.step
        opt.step = lambda *a, **k: (steps.append(opt.param_groups[0][key]), real(*a, **k))[1]  # what Adam steps with
        _run(agent, _transitions(3, 3))
        assert steps == [0.0123, 0.0123]
    return check


def _grad_clip(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = _changed_mid_run("grad_clip", 0.25)
    norms: list[float] = []
    real = torch.nn.utils.clip_grad_norm_
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", lambda p, max_norm, *a, **k: (norms.append(max_norm),
                                                                                        real(p, max_norm, *a, **k))[1])
    _run(agent, _transitions(3, 3))
    assert norms == [0.25, 0.25]


def _counted(name: str, value: int, steps: int, updates: int) -> Callable[[], None]:
    """The updates made over the next ``steps`` decisions after ``name`` was set to ``value``."""
    def check() -> None:
        agent = _changed_mid_run(name, value)
        before = agent.n_updates
        _run(agent, _transitions(3, steps))
        assert agent.n_updates - before == updates
    return check


def _noise(name: str, attribute: str, value: float) -> Callable[[], None]:
    """The exploration noise draws with the new value (what its ``sample`` and ``reset`` read), its state kept."""
    def check() -> None:
        agent = _agent()
        _run(agent, _transitions(1, 40))
        state = agent.noise.state.copy()
        setattr(agent.config, name, value)
        agent.follow_config()
        assert getattr(agent.noise, attribute) == value and np.array_equal(agent.noise.state, state)
    return check


def _target_noise(name: str) -> Callable[[], None]:
    """TD3's target smoothing off (its size or its clip at 0): the target action is the target actor's."""
    def check() -> None:
        agent = _changed_mid_run(name, 0.0, preset="td3")
        next_states = torch.randn(8, S)
        torch.testing.assert_close(agent.target_action(next_states), agent.actor_target(next_states))
        setattr(agent.config, name, 0.2 if name == "target_noise" else 0.5)
        _run(agent, _transitions(4, 1))
        assert not torch.equal(agent.target_action(next_states), agent.actor_target(next_states))
    return check


def _policy_delay() -> None:
    agent = _changed_mid_run("policy_delay", 3, preset="td3")
    before = agent.n_updates
    steps = []
    real = agent.actor_optimizer.step
    agent.actor_optimizer.step = lambda *a, **k: (steps.append(agent.n_updates), real(*a, **k))[1]
    _run(agent, _transitions(3, 12))  # three learning steps, six updates
    assert agent.n_updates - before == 6 and all(n % 3 == 0 for n in steps) and len(steps) == 2


def _ensemble_subset() -> None:
    agent = _changed_mid_run("ensemble_subset", 5, ensemble=5)
    subsets = []
    real = agent.critic_target.subset_min
    agent.critic_target.subset_min = lambda s, a, k: (subsets.append(k), real(s, a, k))[1]
    _run(agent, _transitions(3, 3))
    assert subsets == [5, 5]


EFFECTS: dict[str, Callable[..., None]] = {
    "gamma": _gamma,
    "batch_size": _batch_size,
    "tau": _tau,
    "lr_actor": _rate("actor_optimizer", "lr", "lr_actor"),
    "lr_critic": _rate("critic_optimizer", "lr", "lr_critic"),
    "weight_decay": _rate("critic_optimizer", "weight_decay", "weight_decay"),
    "grad_clip": _grad_clip,
    "learn_every": _counted("learn_every", 1, 3, 6),  # a learning step at every decision, two updates each
    "learn_updates": _counted("learn_updates", 5, 4, 5),  # one learning step of five updates
    "warmup": _counted("warmup", 10_000, 8, 0),  # not enough transitions any more: no update
    "noise_sigma": _noise("noise_sigma", "sigma", 0.7),
    "noise_theta": _noise("noise_theta", "theta", 0.3),
    "noise_decay": _noise("noise_decay", "decay", 0.5),
    "noise_min": _noise("noise_min", "scale_min", 0.01),
    "target_noise": _target_noise("target_noise"),
    "target_noise_clip": _target_noise("target_noise_clip"),
    "policy_delay": _policy_delay,
    "ensemble_subset": _ensemble_subset,
}

FIELDS = [f for f in fields(config_class())]
BUILT = [f.name for f in FIELDS if f.metadata.get("built", True)]
LIVE = [f.name for f in FIELDS if f.name not in BUILT]


def test_every_setting_is_either_refused_or_has_its_effect_checked() -> None:
    assert set(LIVE) == set(EFFECTS), (f"live settings without an effect check here: {sorted(set(LIVE) - set(EFFECTS))}; "
                                       f"checks of settings that are not live: {sorted(set(EFFECTS) - set(LIVE))}")
    assert {"buffer_size", "n_step", "actor_fc1", "critic_layer_norm", "replay", "sac"} <= set(BUILT)


@pytest.mark.parametrize("name", LIVE)
def test_a_live_setting_acts_from_its_next_use(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    check = EFFECTS[name]
    check(monkeypatch) if check is _grad_clip else check()


def _other(field_: object) -> object:
    """A value other than the default (valid or not: the refusal comes before any use)."""
    default, check = field_.default, field_.metadata.get("check")
    if isinstance(default, bool):
        return not default
    if isinstance(check, tuple):
        return next(choice for choice in check if choice != default)
    return 8 if default is None else default + 1


@pytest.mark.parametrize("name", BUILT)
def test_a_setting_read_when_the_agent_is_built_is_refused_by_name(name: str) -> None:
    agent = VariantAgent(S, A, 0, config=config_class()(**SMALL))  # every field there, plain DDPG's values
    _run(agent, _transitions(1, 12))
    before = getattr(agent.config, name)
    setattr(agent.config, name, _other(next(f for f in FIELDS if f.name == name)))
    with pytest.raises(ValueError, match=rf"^{name} changed while training") as refused:
        _run(agent, _transitions(2, 1))
    assert "\n" not in str(refused.value)
    setattr(agent.config, name, before)  # set back: training goes on
    _run(agent, _transitions(2, 1))


def test_a_name_that_is_no_setting_is_refused() -> None:
    """A misspelt setting, or a variant's on plain DDPG, would otherwise be an attribute nothing reads."""
    for name, value in (("gama", 0.9), ("twin_critics", True)):
        agent = _agent()
        setattr(agent.config, name, value)
        with pytest.raises(ValueError, match=rf"^{name}: not a setting of DDPGConfig"):
            _run(agent, _transitions(2, 1))


def test_a_saved_buffer_keeps_what_a_new_gamma_needs(capsys: pytest.CaptureFixture[str]) -> None:
    """A resumed run's rows are discounted again as the unstopped run's are; rows saved before their steps were kept
    (no "steps" in the file) keep their discount, and the agent says how many."""
    from ddpg.run_folder import agent_state

    for with_steps in (True, False):
        agent = _agent(gamma=0.9)
        _run(agent, _transitions(1, 30))
        saved = agent_state.capture(agent, with_buffer=True)
        rows = saved["buffer_rows"] if with_steps else {k: v for k, v in saved["buffer_rows"].items() if k != "steps"}
        resumed = _agent(gamma=0.9, seed=5)
        assert agent_state.restore(resumed, saved, rows)
        for a in (agent, resumed):
            a.config.gamma = 0.5
            _run(a, _transitions(2, 1))
        n = len(agent.memory)
        assert torch.equal(resumed.memory.data[:n], agent.memory.data[:n]) == with_steps
        assert ("transitions saved without their rewards one by one" in capsys.readouterr().out) != with_steps
