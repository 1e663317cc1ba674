"""The training loop: episodes of the agent in the environment, with callbacks around them.

    from ddpg.loop import train
    scores = train(env, agent, episodes=300)                         # silent, (episodes, agents)
    scores = train(env, agent, callbacks=callbacks.standard(...))    # what train.py prints and saves

``train`` reads like Stable-Baselines3's ``learn()``: run an episode, apply the schedule, note
the score and whether the task is solved, hand the episode to the callbacks. Printing, metrics,
the run folder, value maps each live in ``ddpg.reporting.callbacks``; Ctrl-C, SIGTERM and SIGHUP stop
the loop between steps (``ddpg.signals``) and the callbacks then save what was finished.

Any environment with the unityagents 0.4 interface works (``brain_names``,
``reset(train_mode)[brain]``, ``step(actions)[brain]`` with ``vector_observations``,
``rewards``, ``local_done``, ``max_reached``): the built-in Reacher, the Unity binary, and every
Gymnasium task through ``envkit.gym_as_unity.GymEnvironment``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddpg.run_folder import agent_state, faults
from ddpg.signals import StopSignals
from ddpg.solved import GOOD_SCORE, GOOD_UPDATES, SOLVE_SCORE, SOLVE_WINDOW
from ddpg.tasks import REACHER_DECISIONS
from ddpg_agent import Agent


@dataclass(frozen=True)
class LoopSettings:
    """How long to train and when to stop, the schedule, and the reward scale."""

    episodes: int = 300  # at most this many episodes in total (a resumed run's included)
    max_t: int = REACHER_DECISIONS  # decisions per episode; a cut there is not terminal
    target_score: float | None = SOLVE_SCORE  # solved: the trailing-window average reaches it (None: never)
    window: int = SOLVE_WINDOW
    stop_when_solved: bool = True
    good_score: float | None = GOOD_SCORE  # the schedule (None: off)
    good_updates: int = GOOD_UPDATES
    reward_scale: float = 1.0  # rewards are learned times this; the scores stay the task's
    # At most this many environment steps in total (every live agent's counted; None: no
    # limit). The loop stops before a step would pass it and drops the unfinished episode,
    # as Stable-Baselines3's learn(total_timesteps) does: equal budgets compare fairly.
    max_env_steps: int | None = None
    # Each agent's episodes its own (the Crawler): one that falls or reaches its time limit restarts at
    # once (the environment's ``restart_agents``), every decision of every agent is experience, and
    # each agent-episode is scored alone. The loop then runs rounds of ``max_t`` decisions: ``episodes``
    # counts rounds, and a round is what is printed, measured and saved (``run_rounds``). None: as
    # the environment is opened (``envkit.gym_as_unity.GymEnvironment``'s ``own_episodes``; else synchronous).
    own_episodes: bool | None = None

    def __post_init__(self) -> None:
        if self.episodes < 1 or self.max_t < 1:
            raise ValueError(f"episodes and max_t must be >= 1, got {self.episodes} and {self.max_t}")
        if self.own_episodes and self.good_score is not None:
            raise ValueError("the schedule (good_score) judges synchronous episodes; with own_episodes pass good_score=None")
        if self.max_env_steps is not None and self.max_env_steps < 1:
            raise ValueError(f"max_env_steps must be >= 1 or None, got {self.max_env_steps}")


@dataclass
class Episode:
    """One finished episode, as the callbacks see it."""

    number: int  # the episode's, or the round's with own_episodes
    score: np.ndarray  # per agent; with own_episodes, each agent-episode that ended in the round (may be none)
    average: float  # trailing average of the per-episode means, this one included
    seconds: float
    trajectory: np.ndarray | None  # the first agent's states, (steps + 1, state_size), when asked for


@dataclass
class Run:
    """The loop's state: what the callbacks read, and what a resumed run restores (``loop_state``)."""

    settings: LoopSettings
    agent: Agent
    env: Any
    n_agents: int
    signals: StopSignals
    scores: list[np.ndarray] = field(default_factory=list)  # per episode; with own_episodes, one per agent-episode
    solved_at: int | None = None
    solve_time: float | None = None
    env_steps: int = 0  # transitions experienced (one per live agent per step)
    solve_steps: int | None = None
    start: float = 0.0  # perf_counter of a run begun at 0 s
    resumed_episodes: int | None = None  # episodes a resumed run began with
    stop: KeyboardInterrupt | None = None  # the signal that stopped the run
    stopping: bool = False  # the loop ends after this episode
    steps_spent: bool = False  # settings.max_env_steps ended the run (an unfinished episode dropped)
    dropped_steps: int = 0  # steps the dropped episode took before the budget ran out (0: none fitted)
    # The environment's random state before the loop's first reset: what a save of the start
    # (no episode yet) must hold, so that its resume draws the same first episode.
    env_state_at_start: Any = None
    rounds: int = 0  # with own_episodes: rounds of max_t decisions done
    # With own_episodes: each agent's episode in progress at the end of the last round or step, as
    # {"states": its observation, "score": its score so far, "decisions": its decisions so far}.
    carry: dict[str, Any] | None = None

    @classmethod
    def begin(cls, settings: LoopSettings, agent: Agent, env: Any, n_agents: int, signals: StopSignals,
              resume: dict[str, Any] | None) -> Run:
        loop = resume or {}
        return cls(settings, agent, env, n_agents, signals, [np.asarray(r, dtype=np.float64) for r in loop.get("scores", [])],
                   loop.get("solved_at"), loop.get("solve_time"), loop.get("env_steps", 0), loop.get("solve_steps"),
                   time.perf_counter() - loop.get("wall_before", 0.0), episodes_done(loop) if resume else None,
                   rounds=loop.get("rounds", 0), carry=loop.get("carry"))

    @property
    def done(self) -> int:
        """The loop's progress: episodes done, or rounds with own_episodes."""
        return self.rounds if self.settings.own_episodes else len(self.scores)

    def scores_array(self) -> np.ndarray:
        width = 1 if self.settings.own_episodes else self.n_agents
        return np.array(self.scores, dtype=np.float64).reshape(len(self.scores), width)

    def wall(self) -> float:
        return time.perf_counter() - self.start

    def loop_state(self) -> dict[str, Any]:
        """The loop's part of training_state.pt."""
        state = {"scores": [r.tolist() for r in self.scores], "solved_at": self.solved_at,
                 "solve_time": self.solve_time, "wall_before": self.wall(), "env_steps": self.env_steps,
                 "solve_steps": self.solve_steps}
        if self.settings.own_episodes:
            state["rounds"] = self.rounds
            state["carry"] = None if self.carry is None else {k: np.array(v).tolist() for k, v in self.carry.items()}
        return state


def episodes_done(loop_state: dict[str, Any]) -> int:
    """What a saved loop state (``Run.loop_state``) has done: its episodes, or its rounds with own_episodes."""
    return int(loop_state["rounds"]) if "rounds" in loop_state else len(loop_state["scores"])


class Callback:
    """Called at the start, after every episode, and at the end (also after a signal)."""

    wants_trajectory = False  # ask the loop to keep the first agent's states

    def on_start(self, run: Run) -> None: ...

    def on_episode(self, run: Run, episode: Episode) -> None: ...

    def on_end(self, run: Run) -> None: ...


def train(env: Any, agent: Agent, settings: LoopSettings | None = None, callbacks: Sequence[Callback] = (),
          resume: dict[str, Any] | None = None, **overrides: Any) -> np.ndarray:
    """Train until ``settings.episodes``, ``settings.max_env_steps`` or solved; the scores,
    (episodes, agents), complete episodes only. ``overrides``
    are ``LoopSettings`` fields; ``resume`` is the loop state of a saved run (``Run.loop_state``)."""
    settings = LoopSettings(**{**(settings.__dict__ if settings else {}), **overrides})
    opened = bool(getattr(env, "own_episodes", False))  # a Gymnasium task opened so (autoreset disabled)
    if settings.own_episodes is None:
        settings = LoopSettings(**{**settings.__dict__, "own_episodes": opened})
    elif opened and not settings.own_episodes:
        raise ValueError("the environment restarts each agent on its own (own_episodes): train with own_episodes=True, "
                         "or open it with own_episodes=False for synchronous episodes")
    brain = env.brain_names[0]
    before_reset = getattr(env, "random_state", None)
    carry = (resume or {}).get("carry") if settings.own_episodes else None
    if settings.own_episodes and not callable(getattr(env, "restart_agents", None)):
        raise ValueError(f"own_episodes needs an environment that restarts one agent at a time (restart_agents); "
                         f"{type(env).__name__} has none")
    # A resumed run whose agents were mid-episode goes on from the environment's restored state.
    info = None if carry is not None else env.reset(train_mode=True)[brain]
    n_agents = len(carry["score"]) if carry is not None else len(info.vector_observations)
    with StopSignals() as signals:
        run = Run.begin(settings, agent, env, n_agents, signals, resume)
        # What a save of the start restores: before the reset, which a resume draws again; with
        # own_episodes the carry holds the reset's observations, so the state after it.
        run.env_state_at_start = getattr(env, "random_state", None) if settings.own_episodes else before_reset
        if run.carry is None and settings.own_episodes:
            run.carry = {"states": np.asarray(info.vector_observations, dtype=np.float64),
                         "score": np.zeros(n_agents), "decisions": np.zeros(n_agents, dtype=np.int64)}
        signals.hold()  # the callbacks' start (run.json written) is not cut short either
        for callback in callbacks:
            callback.on_start(run)
        try:
            signals.release()
            if settings.own_episodes:
                run_rounds(env, brain, run, callbacks)
            else:
                run_episodes(env, brain, run, info, callbacks)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP (ddpg.signals.Stopped)
            run.stop = exc
            agent_state.settle(agent)  # let a half-handed-over update end before anything is saved
        finally:
            signals.hold()  # from here on, a signal waits: the run is being written
        for callback in callbacks:
            callback.on_end(run)
    return run.scores_array()


def run_episodes(env: Any, brain: str, run: Run, info: Any, callbacks: Sequence[Callback]) -> None:
    """Synchronous episodes: every agent starts together, and one that ends first waits for the others."""
    settings, agent, signals = run.settings, run.agent, run.signals
    first, keep = len(run.scores) + 1, any(cb.wants_trajectory for cb in callbacks)
    if run.solved_at is not None and settings.stop_when_solved:  # a resumed run that had solved: nothing to run
        first = settings.episodes + 1
    trajectory = np.empty((settings.max_t + 1, agent.state_size)) if keep else None
    for number in range(first, settings.episodes + 1):
        t0 = time.perf_counter()
        if number > first:  # the first episode uses the reset above
            info = env.reset(train_mode=True)[brain]
        score, steps = run_episode(env, brain, agent, info.vector_observations, run, trajectory)
        agent_state.settle(agent)  # every step handed over has run
        if score is None:  # the step budget ran out inside this episode
            run.steps_spent = True
            break
        # The episode is complete: a signal now waits until the callbacks have recorded
        # it (metrics, files, the saver's snapshot), so they all agree on what is done.
        signals.hold()
        if settings.good_score is not None:  # the schedule: fewer updates while the policy is good
            good = score.mean() >= settings.good_score
            agent.learn_updates = settings.good_updates if good else agent.config.learn_updates
        run.scores.append(score)
        average = float(np.mean([s.mean() for s in run.scores[-settings.window:]]))
        if (run.solved_at is None and settings.target_score is not None and number >= settings.window
                and average >= settings.target_score):
            run.solved_at, run.solve_time, run.solve_steps = number, run.wall(), run.env_steps
            run.stopping = settings.stop_when_solved
        episode = Episode(number, score, average, time.perf_counter() - t0,
                          None if trajectory is None else trajectory[:steps + 1].copy())
        for callback in callbacks:
            callback.on_episode(run, episode)
        faults.point(f"episode {number} done")
        if run.stopping:
            break
        signals.release()  # a signal that came meanwhile stops the run here


def run_rounds(env: Any, brain: str, run: Run, callbacks: Sequence[Callback]) -> None:
    """Rounds of ``max_t`` decisions in which each agent lives its own episodes (``own_episodes``).

    An agent whose episode ends (terminated: no bootstrap; at its time limit: bootstrapped) is scored,
    and restarts at once: the environment's ``restart_agents`` gives its first observation, which it
    acts on next. A round's agent-episodes join ``run.scores`` when the round ends, with the saver's
    snapshot, so a stop keeps exactly the rounds done; agents mid-episode carry over (``run.carry``).
    """
    settings, agent, signals = run.settings, run.agent, run.signals
    window, target, budget, scale = settings.window, settings.target_score, settings.max_env_steps, settings.reward_scale
    if run.solved_at is not None and settings.stop_when_solved:  # a resumed run that had solved: nothing to run
        return
    assert run.carry is not None
    for number in range(run.rounds + 1, settings.episodes + 1):
        step = agent_state.stepper(agent)  # agent.step as it is now, or a back-end that runs it on another thread
        if budget is not None and run.env_steps + run.n_agents > budget:  # not one decision left: no round
            run.steps_spent = True
            break
        t0, ended_scores = time.perf_counter(), []
        states = np.array(run.carry["states"], dtype=np.float64)
        score, decisions = np.array(run.carry["score"], dtype=np.float64), np.array(run.carry["decisions"], dtype=np.int64)
        for t in range(settings.max_t):
            if t == settings.max_t // 2:
                faults.point("mid-episode")
            if budget is not None and run.env_steps + run.n_agents > budget:
                run.steps_spent = True
                break
            actions = agent.act(states)
            info = env.step(actions)[brain]
            next_states = np.array(info.vector_observations, dtype=np.float64)
            rewards = np.asarray(info.rewards, dtype=np.float64)
            done = np.asarray(info.local_done, dtype=bool)
            truncated = done & np.asarray(info.max_reached, dtype=bool)
            step(states, actions, rewards if scale == 1.0 else rewards * scale, next_states, done & ~truncated, truncated)
            run.env_steps += run.n_agents
            score += rewards
            decisions += 1
            if done.any():
                for i in np.flatnonzero(done):
                    ended_scores.append(score[i])
                    got = len(run.scores) + len(ended_scores)
                    if run.solved_at is None and target is not None and got >= window:
                        if np.mean(([s[0] for s in run.scores[-window:]] + ended_scores)[-window:]) >= target:
                            run.solved_at, run.solve_time, run.solve_steps = got, run.wall(), run.env_steps
                            run.stopping = settings.stop_when_solved
                score[done], decisions[done] = 0.0, 0
                next_states[done] = env.restart_agents(done)
            states = next_states
            if run.stopping:
                break
        # The round is complete (or the run ends in it): a signal now waits until it is recorded.
        agent_state.settle(agent)  # every step handed over has run
        signals.hold()
        run.rounds = number
        run.scores.extend(np.array([s]) for s in ended_scores)
        run.carry = {"states": states, "score": score, "decisions": decisions}
        recent = [s[0] for s in run.scores[-window:]]
        episode = Episode(number, np.array(ended_scores), float(np.mean(recent)) if recent else float("nan"),
                          time.perf_counter() - t0, None)
        for callback in callbacks:
            callback.on_episode(run, episode)
        faults.point(f"episode {number} done")
        if run.stopping or run.steps_spent:
            break
        signals.release()


def run_episode(env: Any, brain: str, agent: Agent, observations: Any, run: Run,
                trajectory: np.ndarray | None) -> tuple[np.ndarray | None, int]:
    """One episode of every agent from ``observations``; its scores and the first agent's steps
    (scores None: ``max_env_steps`` ran out before the episode ended). An agent whose episode
    ends first waits for the others: its steps are not experience."""
    agent.reset()
    states = np.asarray(observations, dtype=np.float64)
    score, live, steps, scale = np.zeros(run.n_agents), np.ones(run.n_agents, dtype=bool), 0, run.settings.reward_scale
    budget = run.settings.max_env_steps
    if trajectory is not None:
        trajectory[0] = states[0]
    middle, step = run.settings.max_t // 2, agent_state.stepper(agent)
    for t in range(run.settings.max_t):
        if t == middle:
            faults.point("mid-episode")
        if budget is not None and run.env_steps + int(live.sum()) > budget:
            run.dropped_steps = t
            return None, steps
        actions = agent.act(states)
        info = env.step(actions)[brain]
        next_states = np.asarray(info.vector_observations, dtype=np.float64)
        rewards = np.asarray(info.rewards, dtype=np.float64)
        learned = rewards if scale == 1.0 else rewards * scale
        done = np.asarray(info.local_done, dtype=bool)
        terminated = done & ~np.asarray(info.max_reached, dtype=bool)  # a time limit is not a terminal state
        if live.all():
            step(states, actions, learned, next_states, terminated)
            run.env_steps += run.n_agents
        else:
            step(states[live], actions[live], learned[live], next_states[live], terminated[live])
            run.env_steps += int(live.sum())
        score += rewards * live
        if trajectory is not None and live[0]:
            steps += 1
            trajectory[steps] = next_states[0]
        live &= ~done
        states = next_states
        if not live.any():
            break
    return score, steps


__all__ = ["GOOD_SCORE", "GOOD_UPDATES", "Callback", "Episode", "LoopSettings", "Run", "episodes_done", "run_episode", "run_episodes",
           "run_rounds", "train"]
