"""Agents that each live their own episodes (the Crawler: ``ddpg.loop.LoopSettings.own_episodes``):
the n-step returns of arms that end and restart in their rows, the loop's rounds, what it keeps,
and the environments' partial restarts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ddpg.loop import Callback, LoopSettings, train
from ddpg_agent import Agent, NStepReturns
from envkit.brain import BrainInfo, BrainParameters


def _per_arm_reference(n: int, gamma: float, rows: list[tuple[np.ndarray, ...]], arm: int) -> list[tuple[float, ...]]:
    """One arm's n-step transitions worked out alone: its steps split into episodes at each end;
    a step is stored once n steps follow it in its episode, or when its episode ends (discount 0
    after a terminal state, gamma^k otherwise), and every step left at the end bootstraps."""
    out: list[tuple[float, ...]] = []
    episode: list[tuple[float, float, float, float]] = []  # state, action, reward, next state
    done = 0  # steps of the episode stored so far

    def store(j: int, terminal: bool) -> None:
        span = episode[j:j + n]
        ret = sum(gamma ** i * r for i, (_, _, r, _) in enumerate(span))
        out.append((span[0][0], span[0][1], ret, span[-1][3], 0.0 if terminal else gamma ** len(span)))

    for states, actions, rewards, next_states, terminated, truncated in rows:
        episode.append((states[arm, 0], actions[arm, 0], rewards[arm], next_states[arm, 0]))
        if terminated[arm] or truncated[arm]:
            for j in range(done, len(episode)):
                store(j, bool(terminated[arm]))
            episode, done = [], 0
        elif len(episode) - done >= n:
            store(done, False)
            done += 1
    for j in range(done, len(episode)):  # end_episode(): a time limit for every arm
        store(j, False)
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_arms_that_restart_in_their_rows_store_each_episode_as_alone(n: int, seed: int) -> None:
    rng, arms, gamma = np.random.default_rng(seed), 4, 0.9
    returns, stored, rows = NStepReturns(n, gamma), [], []
    for t in range(40):
        states = np.full((arms, 1), 100.0 * t) + np.arange(arms)[:, None]
        actions = rng.normal(size=(arms, 1))
        rewards = rng.normal(size=arms)
        ended = rng.random(arms) < 0.2
        terminated = ended & (rng.random(arms) < 0.5)
        truncated = ended & ~terminated
        row = (states, actions, rewards, states + 0.5, terminated, truncated)
        rows.append(row)
        stored += returns.push(*row)
    stored += returns.end_episode()
    # Each stored step's state is its own (100 t + arm): sorted by it, the two lists pair up row by row. The
    # returns are summed in another order here (a matrix product there), so they agree to rounding.
    got = np.array(sorted((float(s[0]), float(a[0]), float(r), float(x[0]), float(d))
                          for block in stored for s, a, r, x, d, _ in zip(*block, strict=True)))
    want = np.array(sorted(t for arm in range(arms) for t in _per_arm_reference(n, gamma, rows, arm)))
    assert got.shape == want.shape
    np.testing.assert_array_equal(got[:, [0, 1, 3]], want[:, [0, 1, 3]])  # states, actions, next states: copied
    np.testing.assert_allclose(got[:, [2, 4]], want[:, [2, 4]], rtol=1e-12, atol=1e-12)  # returns, discounts


class CountingEnv:
    """A toy unityagents-style environment: agent i's episodes last ``lengths[i]`` decisions; it
    is terminated when its length is odd and reaches its time limit when even. The observation
    is (agent, decision in its episode, episode count); the reward is 1 per decision."""

    def __init__(self, lengths: list[int]) -> None:
        self.lengths = np.array(lengths)
        n = len(lengths)
        self.brain_names = ["toy"]
        self.brains = {"toy": BrainParameters("toy", 3, 1, 2)}
        self.t = np.zeros(n, dtype=np.int64)
        self.episodes = np.zeros(n, dtype=np.int64)
        self.restarted: list[list[int]] = []

    def _obs(self) -> np.ndarray:
        return np.stack([np.arange(len(self.t)), self.t, self.episodes], axis=1).astype(np.float64)

    def reset(self, train_mode: bool = True) -> dict[str, BrainInfo]:
        self.t[:] = 0
        n = len(self.t)
        return {"toy": BrainInfo(self._obs(), [0.0] * n, [False] * n, [False] * n, list(range(n)), np.zeros((n, 2)))}

    def step(self, actions: Any) -> dict[str, BrainInfo]:
        self.t += 1
        done = self.t >= self.lengths
        max_reached = done & (self.lengths % 2 == 0)
        n = len(self.t)
        return {"toy": BrainInfo(self._obs(), [1.0] * n, done.tolist(), max_reached.tolist(), list(range(n)),
                                 np.asarray(actions))}

    def restart_agents(self, which: np.ndarray) -> np.ndarray:
        self.restarted.append(np.flatnonzero(which).tolist())
        self.t[which] = 0
        self.episodes[which] += 1
        return self._obs()[which]


def test_rounds_keep_every_decision_and_score_each_agent_episode() -> None:
    env = CountingEnv([3, 4, 10])
    agent = Agent(3, 2, 0, n_step=1, buffer_size=1000, warmup=10_000, batch_size=4)
    scores = train(env, agent, LoopSettings(episodes=2, max_t=12, target_score=None, good_score=None, own_episodes=True))
    # 24 decisions: agent 0 ends 8 episodes of 3, agent 1 six of 4, agent 2 two of 10 (the third carries on)
    assert sorted(scores[:, 0].tolist()) == [3.0] * 8 + [4.0] * 6 + [10.0] * 2
    assert len(agent.memory) == 3 * 24  # every decision of every agent is experience
    rows = agent.memory.data[:len(agent.memory)].numpy()
    states, next_states, discounts = rows[:, 0:3], rows[:, 6:9], rows[:, -1]
    # what is stored after an episode's last decision is its last observation, not the restart's
    last = next_states[:, 1] == np.array([3, 4, 10])[next_states[:, 0].astype(int)]
    assert last.sum() == 16
    np.testing.assert_allclose(discounts[last], np.where(next_states[last, 0] == 0, 0.0, agent.config.gamma), rtol=1e-6)
    # and the next decision acts from the restart: no state is the end of an episode
    assert not (states[:, 1] == np.array([3, 4, 10])[states[:, 0].astype(int)]).any()
    assert (states[:, 1] == 0).sum() == 3 + 14  # each agent's first start, then every restart before the last decision


def test_rounds_stop_at_the_step_budget_and_when_solved() -> None:
    env = CountingEnv([2, 2])
    agent = Agent(3, 2, 0, n_step=1, buffer_size=1000, warmup=10_000, batch_size=4)
    scores = train(env, agent, LoopSettings(episodes=5, max_t=10, target_score=None, good_score=None,
                                            own_episodes=True, max_env_steps=13))
    assert len(agent.memory) == 12 and len(scores) == 6  # 6 decisions of 2 agents fit; a 7th would pass 13
    env, agent = CountingEnv([2, 2]), Agent(3, 2, 0, n_step=1, buffer_size=1000, warmup=10_000, batch_size=4)
    rounds: list[int] = []

    class Rounds(Callback):
        def on_episode(self, run: Any, episode: Any) -> None:
            rounds.append(episode.number)

    train(env, agent, LoopSettings(episodes=5, max_t=3, target_score=None, good_score=None, own_episodes=True,
                                   max_env_steps=12), callbacks=[Rounds()])
    assert rounds == [1, 2]  # the budget ends with the second round: no empty third one
    env, agent = CountingEnv([2, 2]), Agent(3, 2, 0, n_step=1, buffer_size=1000, warmup=10_000, batch_size=4)
    scores = train(env, agent, LoopSettings(episodes=5, max_t=10, target_score=2.0, window=3, good_score=None,
                                            own_episodes=True))
    assert len(scores) == 4 and len(agent.memory) == 8  # the third agent-episode solved it, at decision 4


def test_own_episodes_refuses_an_environment_that_cannot_restart_one_agent() -> None:
    env = CountingEnv([2])
    env.restart_agents = None  # type: ignore[assignment]
    agent = Agent(3, 2, 0, buffer_size=100)
    with pytest.raises(ValueError, match="restart_agents"):
        train(env, agent, LoopSettings(episodes=1, max_t=5, target_score=None, good_score=None, own_episodes=True))
    with pytest.raises(ValueError, match="good_score"):
        LoopSettings(own_episodes=True)


def test_the_crawler_restarts_one_crawler_at_a_time_in_training() -> None:
    from crawler import observation as obs
    from ddpg.tasks import open_environment

    with open_environment("UnityCrawler-v0", 3) as env:
        assert env.own_episodes
        first = env.reset()["UnityCrawler-v0"].vector_observations.copy()
        rng = np.random.default_rng(0)
        for _ in range(5):
            info = env.step(rng.uniform(-1, 1, (3, 20)))["UnityCrawler-v0"]
        moved = info.vector_observations.copy()
        again = env.restart_agents(np.array([False, True, False]))
        assert again.shape == (1, 129)  # crawler 1 back at its first pose (its last commands stay in view, as Unity's)
        assert again[0, obs.BODY_HEIGHT] == first[1, obs.BODY_HEIGHT] != moved[1, obs.BODY_HEIGHT]
        env.step(rng.uniform(-1, 1, (3, 20)))  # the others went on from where they were
        assert not np.array_equal(moved[0], first[0])
    with open_environment("UnityCrawler-v0", 2, own_episodes=False) as env:
        with pytest.raises(RuntimeError, match="own_episodes"):
            env.restart_agents(np.array([True, False]))


def test_the_crawler_vector_env_without_autoreset_asks_for_a_reset_of_what_ended() -> None:
    from gymnasium.vector import AutoresetMode

    from crawler.gym_env import CrawlerVectorEnv
    from crawler.observation import BODY_HEIGHT

    envs = CrawlerVectorEnv(num_envs=2, max_episode_steps=3, autoreset_mode=AutoresetMode.DISABLED)
    try:
        first, _ = envs.reset(seed=0)
        for _ in range(3):
            obs, _, terminated, truncated, _ = envs.step(np.zeros((2, 20), np.float32))
        assert truncated.all() and not terminated.any()
        with pytest.raises(ValueError, match="reset_mask"):
            envs.step(np.zeros((2, 20), np.float32))
        back, _ = envs.reset(options={"reset_mask": np.array([True, False])})
        assert back[0, BODY_HEIGHT] == first[0, BODY_HEIGHT] != obs[0, BODY_HEIGHT]
        np.testing.assert_array_equal(back[1], obs[1])  # crawler 1 ended too, and waits: it was not asked for
        with pytest.raises(ValueError, match="reset_mask"):
            envs.step(np.zeros((2, 20), np.float32))
        envs.reset(options={"reset_mask": np.array([False, True])})
        envs.step(np.zeros((2, 20), np.float32))  # both restarted: it steps
        with pytest.raises(ValueError, match="reset_mask must be a boolean array"):
            envs.reset(options={"reset_mask": np.array([1, 0])})
    finally:
        envs.close()
    with pytest.raises(ValueError, match="autoreset_mode"):
        CrawlerVectorEnv(num_envs=1, autoreset_mode=AutoresetMode.SAME_STEP)


def test_evaluate_scores_every_crawler_episode_on_its_own() -> None:
    import evaluate as evaluate_mod
    from ddpg.reporting.playing import run_episode

    agent = Agent(129, 20, 0, buffer_size=100)
    table = evaluate_mod.evaluate(agent, episodes=2, agents=3, env_id="UnityCrawler-v0", progress=False, each_agent=True)
    assert table.shape == (2, 3)
    env = CountingEnv([2, 5])
    played = Agent(3, 2, 0, buffer_size=100)
    # each agent's score ends with its own episode, and play goes on until every one has ended
    np.testing.assert_array_equal(run_episode(env, played, steps=50), [2.0, 5.0])


def test_the_loop_follows_how_the_environment_was_opened() -> None:
    from ddpg.tasks import open_environment

    agent = Agent(129, 20, 0, buffer_size=1000, warmup=10_000)
    with open_environment("UnityCrawler-v0", 2) as env:
        scores = train(env, agent, episodes=1, max_t=5, target_score=None, good_score=None)
        assert scores.shape[1] == 1 and len(agent.memory) == 2 * 5 - 2 * 2  # rounds: n-step 3 keeps 2 pending
        with pytest.raises(ValueError, match="own_episodes"):
            train(env, agent, episodes=1, max_t=5, target_score=None, good_score=None, own_episodes=False)
    with open_environment("UnityCrawler-v0", 2, own_episodes=False) as env:
        assert train(env, agent, episodes=1, max_t=5, target_score=None, good_score=None).shape == (1, 2)


def test_a_crawler_run_stopped_mid_round_resumes_exactly(tmp_path) -> None:
    """Ctrl-C in the middle of a round (crawlers mid-episode) and kill -9 there: each resumed run ends
    with the uninterrupted run's crawler-episodes and, bit for bit, its networks."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    import torch

    root = Path(__file__).resolve().parent.parent
    command = ["--env", "UnityCrawler-v0", "--num-envs", "3", "--max-t", "60", "--episodes", "4", "--save-every", "1",
               "--save-buffer", "--no-progress", "--quiet", "--config",
               json.dumps({"buffer_size": 100, "batch_size": 8, "warmup": 30, "learn_every": 4, "learn_updates": 2})]

    def train(out: Path, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "train.py", "--out", str(out), *command], cwd=root, capture_output=True,
                              text=True, timeout=300, env={**os.environ, **env})

    log = tmp_path / "points.log"
    assert train(tmp_path / "whole", DDPG_FAULT_LOG=str(log)).returncode == 0
    points = [line.split(" ", 1) for line in log.read_text().splitlines()]
    middles = [int(n) for n, name in points if name == "mid-episode"]
    assert len(middles) == 4  # one per round
    carry = torch.load(tmp_path / "whole" / "training_state.pt", weights_only=False)["loop"]["carry"]
    assert any(carry["decisions"]), "a crawler must be mid-episode at a round's end for this to test anything"
    for name, at in (("sigint", f"{middles[1]}:SIGINT"), ("sigkill", str(middles[2]))):
        out = tmp_path / name
        stopped = train(out, DDPG_CRASH_AT=at)
        assert stopped.returncode != 0
        resumed = subprocess.run([sys.executable, "train.py", "--resume", str(out), "--no-progress", "--quiet"], cwd=root,
                                 capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr
        assert (out / "scores.csv").read_text() == (tmp_path / "whole" / "scores.csv").read_text(), name
        a, b = torch.load(out / "checkpoint_actor.pth"), torch.load(tmp_path / "whole" / "checkpoint_actor.pth")
        assert all(torch.equal(a[k], b[k]) for k in a), name


def test_the_reward_plot_of_agent_episodes_draws_each_score_without_a_band() -> None:
    import matplotlib.pyplot as plt

    from ddpg.run_folder.plots import scores_figure

    rng = np.random.default_rng(0)
    one = scores_figure(rng.normal(size=(150, 1)), 2000.0, 100, "agent-episode")
    many = scores_figure(rng.normal(size=(150, 20)), 30.0, 100)
    try:
        assert len(one.axes[0].collections) == 0 and len(many.axes[0].collections) == 1  # the min-max band
        assert one.axes[0].get_xlabel() == "agent-episode" and many.axes[0].get_xlabel() == "episode"
    finally:
        plt.close(one)
        plt.close(many)
