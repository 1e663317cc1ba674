"""What a learner changes while the agent trains runs, tried with many run-time changes (mutations).

``test_mutations.py`` edits the files before a run; a course learner also changes the agent as it
trains: a scheduler, an lr set by hand, a new optimiser, buffer, config or noise, a patched part or
library function, a direct ``agent.learn``, a variant with an edited part. Each change is made in a
small deterministic world (``_run``) on an agent attached by the default learner, and must be

* ``honoured``: the fast paths keep running and follow the change: the run differs from the
  unchanged fast run, and lies far closer to the readable learner's run with the same change;
* ``aside``: from that moment the readable code runs, with one line naming the change (``Learner:
  readable from update N`` or ``Decisions: ...``), in a run that differs from the unchanged one; or
* ``refused``: one line (a ValueError) before anything runs.

None may end in a traceback, and none may be byte-identical to the unchanged run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import ddpg_agent
from ddpg import backends
from ddpg.backends import admission
from ddpg.variants import VariantAgent, parse_config
from ddpg_agent import Agent, OUNoise, ReplayBuffer
from tests.test_mutations import SMALL, _edited_module, _use_edited_agent, _world

AT = 45  # the decision at which a mid-run change is made (about 40 updates in)


def _run(agent: Agent, change: Callable[[Agent], None] | None = None, episode: Callable[[Agent], None] | None = None
         ) -> torch.Tensor:
    """``test_mutations._world`` with ``change`` made at decision ``AT`` and ``episode`` at each episode's end."""
    return _world(agent, change=change, at=AT, episode=episode)


def _agent(learner: str = "auto", before: Callable[[Agent], None] | None = None, **config) -> Agent:
    agent = Agent(33, 4, 0, config=Agent.config_class(**{**SMALL, **config}))
    if before is not None:
        before(agent)
    backends.attach(agent, learner, threads=1)
    return agent


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


@pytest.fixture(scope="module")
def unchanged() -> torch.Tensor:
    return _run(_agent())


# ------------------------------------------------------------------ the changes
def _scheduler(agent: Agent) -> None:
    agent.schedulers = [torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.3)
                        for opt in (agent.actor_optimizer, agent.critic_optimizer)]


def _step_schedulers(agent: Agent) -> None:
    for scheduler in getattr(agent, "schedulers", []):
        scheduler.step()


def _lr(agent: Agent) -> None:
    agent.actor_optimizer.param_groups[0]["lr"] = 5e-3
    agent.critic_optimizer.param_groups[0]["lr"] = 1e-4


def _weight_decay(agent: Agent) -> None:
    agent.critic_optimizer.param_groups[0]["weight_decay"] = 0.5
    agent.actor_optimizer.param_groups[0]["weight_decay"] = 0.1


def _betas(agent: Agent) -> None:
    for opt in (agent.actor_optimizer, agent.critic_optimizer):
        opt.param_groups[0]["betas"] = (0.5, 0.9)


def _tau_in_place(agent: Agent) -> None:
    agent.config.tau = 0.3


def _new_adam(agent: Agent) -> None:
    agent.critic_optimizer = torch.optim.Adam(agent.critic_local.parameters(), lr=3e-3, fused=True)


def _new_sgd(agent: Agent) -> None:
    agent.critic_optimizer = torch.optim.SGD(agent.critic_local.parameters(), lr=0.05)


class RecentFirst(ReplayBuffer):
    """A buffer that draws from the newer half of its rows."""

    def sample(self) -> tuple[torch.Tensor, ...]:
        index = torch.randint(self.size // 2, self.size, (self.batch_size,), generator=self.generator)
        return self.split(self.data[index])


def _new_memory(agent: Agent) -> None:
    old = agent.memory
    new = RecentFirst(33, 4, old.capacity, old.batch_size, 7)
    new.data.copy_(old.data)
    new.pos, new.size = old.pos, old.size
    agent.memory = new


def _new_config(agent: Agent) -> None:
    agent.config = dataclasses.replace(agent.config, tau=0.3)


class SelfScaling(OUNoise):
    """Noise whose sample also grows its own state."""

    def sample(self, n: int = 1) -> np.ndarray:
        out = super().sample(n)
        self.state *= 1.5
        return out


def _new_noise(agent: Agent) -> None:
    agent.noise = SelfScaling(4, 11, sigma=0.2)


def _relu_large(x: torch.Tensor, inplace: bool = False) -> torch.Tensor:  # relu but on large inputs only
    return torch.where(x > 0.5, 0.5 * x, torch.clamp(x, min=0.0))


def _patch_relu(agent: Agent) -> None:
    F.relu = _relu_large  # undone by the test's monkeypatch


def _patch_td_target(agent: Agent) -> None:
    Agent.td_target = lambda self, r, ns, d: r  # undone by the test's monkeypatch


def _hook(agent: Agent) -> None:
    agent.actor_local.fc2.register_forward_hook(lambda module, inputs, out: 0.5 * out)


def _float64(agent: Agent) -> None:
    torch.set_default_dtype(torch.float64)  # set back by the test


# (id, change made before the start or at decision AT, when, expected, what the line names)
CASES = [
    ("scheduler", _scheduler, "before", "honoured", ""),
    ("lr-by-hand", _lr, "mid", "honoured", ""),
    ("weight-decay-by-hand", _weight_decay, "mid", "honoured", ""),
    ("betas-by-hand", _betas, "mid", "honoured", ""),
    ("tau-in-place", _tau_in_place, "mid", "honoured", ""),
    ("adam-replaced-before", _new_adam, "before", "honoured", ""),
    ("sgd-replaced-before", _new_sgd, "before", "readable", "SGD"),
    ("adam-replaced-mid-run", _new_adam, "mid", "aside", "the critic's optimiser was replaced"),
    ("memory-replaced", _new_memory, "mid", "aside", "replay buffer"),
    ("config-replaced", _new_config, "mid", "aside", "config"),
    ("noise-replaced", _new_noise, "mid", "decisions", "noise"),
    ("relu-patched-large-inputs", _patch_relu, "mid", "aside", "torch.nn.functional.relu"),
    ("relu-patched-before", _patch_relu, "before", "readable", "torch.nn.functional.relu"),
    ("td-target-patched-mid-run", _patch_td_target, "mid", "aside", "Agent.td_target"),
    ("hook-mid-run", _hook, "mid", "aside", "hook"),
    ("float64-mid-run", _float64, "mid", "aside", "float64"),
]


@pytest.mark.parametrize(("key", "change", "when", "expected", "named"), CASES, ids=[c[0] for c in CASES])
def test_a_change_while_training_runs(monkeypatch, capsys, unchanged, key, change, when, expected, named) -> None:
    monkeypatch.setattr(F, "relu", F.relu)
    monkeypatch.setattr(Agent, "td_target", Agent.td_target)
    dtype = torch.get_default_dtype()
    episode = _step_schedulers if key == "scheduler" else None
    try:
        capsys.readouterr()
        agent = _agent(before=change if when == "before" else None)
        attached = capsys.readouterr().out.strip()
        weights = _run(agent, change if when == "mid" else None, episode)
    finally:
        torch.set_default_dtype(dtype)
    lines = capsys.readouterr().out.strip().splitlines()
    assert weights.shape != unchanged.shape or not torch.equal(weights, unchanged), "the change did not run"
    if expected == "honoured":
        assert attached.startswith("Learner: fast.") and agent.backend is not None and not lines
        assert agent.backend.decisions is None or not agent.backend.decisions.aside
        monkeypatch.setattr(F, "relu", F.relu)
        readable = _run(_agent("readable", before=change if when == "before" else None),
                        change if when == "mid" else None, episode)
        assert _relative(weights, readable) < 0.05 * _relative(weights, unchanged), "the fast path did not follow it"
    elif expected == "readable":
        assert attached.startswith("Learner: readable.") and named.lower() in attached.lower()
        assert len(attached.splitlines()) == 1
    elif expected == "decisions":
        assert attached.startswith("Learner: fast.") and agent.backend is not None
        assert len(lines) == 1 and lines[0].startswith("Decisions: ") and named in lines[0]
    else:
        assert attached.startswith("Learner: fast.") and agent.backend is None
        assert len(lines) == 1 and lines[0].startswith("Learner: readable from update ") and named in lines[0], lines


def test_a_setting_the_fast_learner_does_not_handle_leaving_its_default_mid_run_steps_aside(monkeypatch, capsys,
                                                                                             unchanged) -> None:
    """A setting the fast paths do not handle (as a new one is) runs fast at its default, the value the record was
    checked at; set away from it while training, the readable learner takes over, with the line."""
    from ddpg.backends import restated

    monkeypatch.setattr(restated, "SETTINGS", tuple(s for s in restated.SETTINGS if s != "tau"))
    capsys.readouterr()
    agent = _agent()
    assert capsys.readouterr().out.startswith("Learner: fast.")
    weights = _run(agent, _tau_in_place)
    lines = capsys.readouterr().out.strip().splitlines()
    assert agent.backend is None and len(lines) == 1 and "the setting tau is 0.3" in lines[0]
    assert not torch.equal(weights, unchanged)


def test_a_direct_learn_between_fast_updates_is_the_readable_agents(capsys) -> None:
    """``agent.learn(agent.memory.sample())`` between training steps, the course's own way to learn, on
    the fast learner: its parameters and Adam state end where a readable agent doing the same ends."""
    ends = {}
    for learner in ("fast", "readable"):
        agent = _agent(learner)

        def direct(agent: Agent) -> None:
            agent.learn(agent.memory.sample())

        rng = np.random.default_rng(5)
        states = rng.standard_normal((2, 33))
        for t in range(40):
            actions = agent.act(states)
            next_states = np.tanh(states * 0.9 + 0.1 * actions.sum(1, keepdims=True))
            agent.step(states, actions, rng.random(2) * 0.1, next_states)
            if t > 27 and t % 3 == 0:
                direct(agent)
            states = next_states
        assert agent.n_updates >= 13
        assert learner == "readable" or agent.backend is not None
        opt_state = [v for opt in (agent.actor_optimizer, agent.critic_optimizer) for s in opt.state.values()
                     for k, v in sorted(s.items()) if k != "step"]
        steps = {float(s["step"]) for opt in (agent.actor_optimizer, agent.critic_optimizer) for s in opt.state.values()}
        ends[learner] = (torch.cat([p.detach().reshape(-1) for p in agent.actor_local.parameters()]
                                   + [p.detach().reshape(-1) for p in agent.critic_local.parameters()]),
                         torch.cat([v.reshape(-1) for v in opt_state]), steps, agent.n_updates)
    (w_fast, m_fast, s_fast, n_fast), (w_read, m_read, s_read, n_read) = ends["fast"], ends["readable"]
    assert n_fast == n_read and s_fast == s_read == {float(n_read)}
    assert _relative(w_fast, w_read) <= 1e-5 and _relative(m_fast, m_read) <= 1e-5


# ------------------------------------------------------------------ variants run the edited parts
ZERO_DISCOUNT = [("", "discounts = 0.0 * discounts")]  # at the start of td_target's body
DOUBLED_CRITIC_LOSS = [("return F.mse_loss(self.critic_local(states, actions), y)",
                        "return 2.0 * F.mse_loss(self.critic_local(states, actions), y)")]
SCALED_OPTIMISE = [("        actor_loss.backward()  # also reaches",
                    "        (0.5 * actor_loss).backward()  # also reaches")]
PENALISED_ACTOR_LOSS = [("return -self.critic_local(states, self.actor_local(states)).mean()",  # keep the actions small
                         "return -self.critic_local(states, self.actor_local(states)).mean() + self.actor_local(states).pow(2).mean()")]
NEGATED_VALUE = [("        return self.critic_target(next_states, next_actions)\n",
                  "        return -self.critic_target(next_states, next_actions)\n")]
EDITED_PART = {id(ZERO_DISCOUNT): "Agent.td_target", id(DOUBLED_CRITIC_LOSS): "Agent.critic_loss",
               id(PENALISED_ACTOR_LOSS): "Agent.actor_loss",
               id(SCALED_OPTIMISE): "Agent.optimise", id(NEGATED_VALUE): "Agent.target_value"}
VARIANT_EDITS = [
    ("twin-td-target", {"twin_critics": True}, ZERO_DISCOUNT, "runs"),
    ("td3-td-target", {"preset": "td3"}, ZERO_DISCOUNT, "runs"),
    ("ensemble-td-target", {"ensemble": 4}, ZERO_DISCOUNT, "runs"),
    ("gaussian-critic-loss", {"exploration": "gaussian"}, DOUBLED_CRITIC_LOSS, "runs"),
    ("twin-critic-loss", {"twin_critics": True}, DOUBLED_CRITIC_LOSS, "refused: Agent.critic_loss, twin_critics"),
    ("ensemble-critic-loss", {"ensemble": 4}, DOUBLED_CRITIC_LOSS, "refused: Agent.critic_loss, ensemble"),
    ("td3-optimise", {"preset": "td3"}, SCALED_OPTIMISE, "refused: Agent.optimise, policy_delay"),
    ("twin-actor-loss-scaled-optimise", {"twin_critics": True}, SCALED_OPTIMISE, "runs"),
    ("td3-actor-loss", {"preset": "td3"}, PENALISED_ACTOR_LOSS, "runs"),
    ("ensemble-actor-loss", {"ensemble": 4}, PENALISED_ACTOR_LOSS, "runs"),
    ("ensemble-target-value", {"ensemble": 4}, NEGATED_VALUE, "refused: Agent.target_value, ensemble"),
    ("td3-target-value", {"preset": "td3"}, NEGATED_VALUE, "refused: Agent.target_value, twin_critics"),
]


def _variant_run(config: dict, capsys) -> tuple[torch.Tensor, str]:
    agent = VariantAgent(33, 4, 0, config=parse_config({**SMALL, **config}))
    capsys.readouterr()
    backends.attach(agent, "auto", threads=1)
    line = capsys.readouterr().out.strip()
    return _run(agent), line


@pytest.mark.parametrize(("key", "config", "edits", "expected"), VARIANT_EDITS, ids=[v[0] for v in VARIANT_EDITS])
def test_an_edit_of_ddpg_agent_py_runs_under_every_variant_or_is_refused(tmp_path, monkeypatch, capsys, key, config,
                                                                          edits, expected) -> None:
    before, _ = _variant_run(config, capsys)
    _use_edited_agent(monkeypatch, _edited_module(tmp_path, "ddpg_agent.py", edits, f"edited_live_{key.replace('-', '_')}",
                                                    EDITED_PART[id(edits)]))
    if expected == "runs":
        after, line = _variant_run(config, capsys)
        assert line.startswith("Learner: readable.") and len(line.splitlines()) == 1
        assert not torch.equal(after, before), "the edit did not run with the variant"
        return
    part, switch = expected.removeprefix("refused: ").split(", ")
    with pytest.raises(ValueError) as refused:
        _variant_run(config, capsys)
    message = str(refused.value)
    assert part in message and switch in message and len(message.splitlines()) == 1


def test_the_learner_line_names_the_variants_code(capsys) -> None:
    _, line = _variant_run({"twin_critics": True}, capsys)
    assert "ddpg/variants/twin.py" in line and "critic_values" in line


def test_write_after_a_math_edit_with_the_fast_code_untouched_is_refused(tmp_path, monkeypatch, capsys) -> None:
    """``python -m ddpg.backends.admission --write`` after an edit of td_target that fast_cpu.py does not
    restate: the fast learner, run against the edited update from the committed checkpoints, parts
    from it, and the record is not written."""
    record = tmp_path / "record.json"
    monkeypatch.setattr(admission, "RECORD", record)
    _use_edited_agent(monkeypatch, _edited_module(tmp_path, "ddpg_agent.py", ZERO_DISCOUNT, "edited_live_write", "Agent.td_target"))
    assert admission.main(["--write"]) == 1
    out = capsys.readouterr().out
    assert "Not written" in out and not record.exists()


def test_a_float64_default_is_refused_in_one_line() -> None:
    dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with pytest.raises(ValueError, match="float64") as refused:
            backends.attach(Agent(33, 4, 0, config=ddpg_agent.DDPGConfig(**SMALL)), "auto")
    finally:
        torch.set_default_dtype(dtype)
    assert len(str(refused.value).splitlines()) == 1


def test_there_are_enough_run_time_mutations() -> None:
    assert len(CASES) + len(VARIANT_EDITS) + 2 >= 15
    assert {c[3] for c in CASES} == {"honoured", "readable", "aside", "decisions"}

