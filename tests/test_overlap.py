"""The overlap learner (ddpg/backends/overlap.py): each decision's ``Agent.step`` on a worker thread
while the main thread acts on a copy of the actor. Its promises: the threads' timing changes no
number (the threaded run equals the same bookkeeping run inline), acting is one learning step
behind, what the worker raises reaches the main thread, and a run resumes bit for bit."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from ddpg.agents import make_agent
from ddpg.backends.overlap import Overlap
from ddpg.run_folder import agent_state
from ddpg.variants import parse_config
from tests._agent_helpers import resumed_as_whole

STATE, ACTION, AGENTS = 33, 4, 3
CONFIGS = {"ddpg": {}, "sac_obs_norm": {"preset": "sac", "obs_norm": True},
           "td3_prioritized": {"preset": "td3", "replay": "prioritized"}}


def _agent(config: dict, threaded: bool | None, learn_every: int = 4):
    """An agent for the synthetic decisions below: ``threaded`` None runs readable (no back-end)."""
    cfg = parse_config({"buffer_size": 2000, "batch_size": 16, "warmup": 24, "learn_every": learn_every,
                        "learn_updates": 3, **config})
    agent = make_agent("readable", (STATE, ACTION, 0), cfg)
    if threaded is not None:
        Overlap(agent, threaded=threaded)
    return agent


def _drive(agent, decisions: int = 60, seed: int = 1) -> np.ndarray:
    """Hand ``decisions`` decisions of made-up observations (the same for every agent) to the agent, as
    the loop does (through ``agent_state.stepper``), then spoil the arrays handed over, as a caller may
    once ``step`` returns; the actions."""
    rng = np.random.default_rng(seed)
    step = agent_state.stepper(agent)
    states, taken = rng.standard_normal((AGENTS, STATE)) * 3, []
    for _ in range(decisions):
        actions = agent.act(states)
        next_states = rng.standard_normal((AGENTS, STATE)) * 3
        rewards, ended = rng.uniform(-1, 1, AGENTS), rng.uniform(size=AGENTS) < 0.05  # time limits: s' bootstraps
        taken.append(actions.copy())
        kept = next_states.copy()
        step(states, actions, rewards, next_states, np.zeros(AGENTS, bool), ended)
        for handed in (states, actions, rewards, next_states):
            handed.fill(np.nan)
        states = kept
    agent_state.settle(agent)
    return np.array(taken)


def _same_state(a, b) -> None:
    for x, y in ((a.actor_local, b.actor_local), (a.critic_local, b.critic_local),
                 (a.actor_target, b.actor_target), (a.critic_target, b.critic_target)):
        sx, sy = x.state_dict(), y.state_dict()
        assert sx.keys() == sy.keys() and all(torch.equal(sx[k], sy[k]) for k in sx)
    assert a.n_updates == b.n_updates > 0 and a.t_step == b.t_step and len(a.memory) == len(b.memory)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_threads_timing_changes_no_number(name) -> None:
    """The worker's run equals the same hand-overs run at once on one thread: actions, weights, buffer."""
    torch.manual_seed(0)
    threaded = _agent(CONFIGS[name], threaded=True)
    taken = _drive(threaded)
    torch.manual_seed(0)
    inline = _agent(CONFIGS[name], threaded=False)
    np.testing.assert_array_equal(taken, _drive(inline))
    _same_state(threaded, inline)


def test_acting_is_one_learning_step_behind() -> None:
    """Until the second learning step starts, the overlap agent acts as one that never learned; the
    readable agent acts with its first learning step's actor from the next decision on."""
    torch.manual_seed(0)
    overlap = _drive(_agent({}, threaded=True), decisions=32)
    torch.manual_seed(0)
    readable = _drive(_agent({}, threaded=None), decisions=32)
    torch.manual_seed(0)
    never = _drive(_agent({"warmup": 10_000}, threaded=None), decisions=32)
    first = 12  # the first step that learns: 24 transitions stored (3-step returns: after 10 steps), at a multiple of 4
    np.testing.assert_array_equal(overlap[:first + 4], never[:first + 4])
    np.testing.assert_array_equal(readable[:first], never[:first])
    assert not np.array_equal(readable[first:first + 4], never[first:first + 4])
    assert not np.array_equal(overlap[first + 4:], never[first + 4:])


def test_what_the_worker_raises_reaches_the_main_thread() -> None:
    agent = _agent({}, threaded=True)

    def broken(experiences) -> None:
        raise RuntimeError("an update went wrong")

    agent.learn = broken
    with pytest.raises(RuntimeError, match="an update went wrong"):
        _drive(agent, decisions=40)


@pytest.mark.parametrize("task", [
    ["--env", "UnityCrawler-v0", "--num-envs", "2",
     "--config", json.dumps({"preset": "sac", "obs_norm": True, "warmup": 40, "batch_size": 16})],
    ["--agents", "2", "--config", json.dumps({"warmup": 40, "batch_size": 16})],  # Reacher: synchronous episodes
], ids=["crawler_sac", "reacher_ddpg"])
def test_a_run_on_the_overlap_learner_resumes_exactly(tmp_path, task) -> None:
    """train.py --learner overlap: recorded, and stopped then resumed it ends bit for bit as one go
    (the acting copy, a learning step behind, saved with the training state)."""
    base = [*task, "--max-t", "25", "--no-progress", "--quiet", "--save-buffer", "--learner", "overlap"]
    whole, parts = resumed_as_whole(tmp_path, base)
    for run in (whole, parts):
        assert json.loads((run / "run.json").read_text())["learner"] == "overlap"
