"""Any Gymnasium task with a Box action space, driven through the interface train.py speaks.

    python train.py --env MountainCarContinuous-v0 --out runs/mcc
    python train.py --env Pendulum-v1 --num-envs 4 --out runs/pendulum

``ddpg.loop.train``, ``ddpg.playing.run_episode`` and ``evaluate`` talk to environments through the
unityagents 0.4 interface (``brain_names``, ``reset(train_mode)[brain]``,
``step(actions)[brain]`` with ``vector_observations``, ``rewards``, ``local_done``,
``max_reached``). ``GymEnvironment`` presents a Gymnasium vector environment that way, so
one training loop serves the built-in Reacher, the Unity binary and every Gymnasium task.

What the adapter does between the agent and the task, and why:
  * actions: the agent's tanh outputs in [-1, 1] are mapped linearly onto the task's
    action bounds;
  * endings: ``local_done`` is ``terminated or truncated``, ``max_reached`` is
    ``truncated and not terminated``, so the loop bootstraps through a time limit and
    stops bootstrapping at a true terminal state;
  * episodes: the loop runs synchronous episodes (one per sub-environment, the scores row
    of an episode). A sub-environment whose episode ends first waits for the others: the
    vector environment resets it by itself (Gymnasium's next-step autoreset) and the loop
    ignores its steps until every sub-environment is done. A task whose ``own_episodes`` is set
    (the Crawler) wastes none instead: autoreset is disabled, the loop restarts each
    sub-environment as soon as its episode ends (``restart_agents``, Gymnasium's partial reset)
    and scores each episode alone (``ddpg.loop.run_rounds``);
  * observations: scaled to [-1, 1] from the observation space's bounds only where
    ``TASKS`` asks for it. Rewards reach the agent as the task gives them; a task's
    ``reward_scale`` is applied by the training loop, to what is learned, not to the scores.

``TASKS`` is the one place that holds per-task choices (hyperparameters, observation
scaling, the solve threshold, the episode budget); a task not listed gets ``DEFAULT``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from envkit.brain import BrainInfo, BrainParameters
from reacher import MAX_EPISODE_STEPS as REACHER_DECISIONS
from reacher import REWARD_THRESHOLD as REACHER_TARGET

DEFAULT_ENV = "reacher"  # train.py --env: the built-in 20-arm Reacher (unityagents interface)
# What the learner's package (ddpg/) needs of the built-in Reacher, its default task, it takes from
# here: the decisions of an episode (REACHER_DECISIONS) and the course's solve score (REACHER_TARGET).


@dataclass(frozen=True)
class Task:
    """Per-task choices; every field is recorded in the run's run.json."""

    config: dict[str, Any] = field(default_factory=dict)  # DDPGConfig overrides
    target: float | None = None  # solve threshold of the 100-episode average (None: the spec's)
    episodes: int = 300  # default --episodes
    scale_observations: bool = False  # map the observation Box's finite bounds onto [-1, 1]
    good_score: float | None = None  # train.py's schedule (fewer updates while good); None: off
    reward_scale: float = 1.0  # rewards are multiplied by this for learning (scores stay the task's)
    own_episodes: bool = False  # each copy restarts as soon as its episode ends (ddpg.loop.LoopSettings.own_episodes)
    observation_labels: tuple[str, ...] = ()  # names (and units) of the observation's numbers
    action_labels: tuple[str, ...] = ()  # ...and of the action's
    why: str = ""  # the reason for the choices, printed in --help and kept in run.json


# Gymnasium tasks learn from every step (one environment step, one update), as the DDPG
# paper did, rather than Reacher's 20 updates every 20 steps of 20 arms; one-step returns, no
# layer norm and the paper's discount of 0.99, the settings these tasks were measured with.
STEP_BY_STEP = {"learn_every": 1, "learn_updates": 1, "n_step": 1, "critic_layer_norm": False, "gamma": 0.99}

DEFAULT = Task(config={**STEP_BY_STEP, "warmup": 1000}, why="defaults for an unlisted task")

TASKS: dict[str, Task] = {
    # A sparse goal (+100) behind a hill, an effort penalty (0.1 a^2 per step) on the way:
    # small uncorrelated noise almost never reaches the goal, and the penalty then teaches
    # the actor to stand still. Strongly correlated OU noise of scale ~1 (sigma 0.5, theta
    # 0.15: stationary std about 0.95, memory of ~7 steps) pushes the car one way for long
    # enough to swing up the hill within a few episodes; it decays per episode once the
    # critic has seen the goal, so the 100-episode average can pass 90.
    "MountainCarContinuous-v0": Task(
        config={**STEP_BY_STEP, "warmup": 1000, "noise_sigma": 0.5, "noise_theta": 0.15,
                "noise_decay": 0.95, "noise_min": 0.1, "actor_fc1": 64, "actor_fc2": 64,
                "critic_fc1": 64, "critic_fc2": 64},
        target=90.0, episodes=300, scale_observations=True,
        observation_labels=("position", "velocity"), action_labels=("force (-1 left, +1 right)",),
        why="sparse goal behind a hill: large, correlated, decaying OU noise; velocity (+-0.07) "
            "scaled to [-1, 1]"),
    # Gymnasium gives no threshold; -200 over 100 episodes is the usual bar for Pendulum.
    # Rewards reach -16 per step, so unscaled Q-values run into the hundreds and the critic's
    # gradient, clipped at norm 1 (right for Reacher's rewards of at most 0.04), crawls:
    # rewards are learned at a tenth. gamma 0.98 as rl-baselines3-zoo uses; small OU noise
    # decaying per episode, since the training episodes themselves must average -200.
    "Pendulum-v1": Task(
        config={**STEP_BY_STEP, "warmup": 1000, "gamma": 0.98, "noise_sigma": 0.1, "noise_decay": 0.97,
                "noise_min": 0.02},
        target=-200.0, episodes=200, scale_observations=True, reward_scale=0.1,
        observation_labels=("cos(angle)", "sin(angle)", "angular velocity (rad/s)"),
        action_labels=("torque (N m)",),
        why="no threshold in Gymnasium's spec: -200 is the customary one; rewards down to -16 per step "
            "learned at a tenth; small decaying noise; angular velocity (+-8) scaled to [-1, 1]"),
    # The built-in Reacher through Gymnasium's interface: the same task as the default, so
    # the same tuned settings (DDPGConfig's defaults) and the same schedule.
    "UnityReacher-v0": Task(target=30.0, episodes=300, good_score=33.0,
                            why="the built-in Reacher: DDPGConfig's tuned defaults and train.py's schedule"),
    # The course's optional Crawler (crawler/): 12 crawlers, 1000 decisions an episode unless one
    # falls. DDPGConfig's Reacher defaults; the threshold is ML-Agents' published benchmark (2000).
    "UnityCrawler-v0": Task(target=2000.0, episodes=500, own_episodes=True,
                            why="the built-in Crawler: DDPGConfig's defaults; each crawler restarts as soon as it falls, "
                                "scored per crawler-episode; threshold ML-Agents' benchmark 2000"),
    # A pole on a cart: +1 per step while it stands, the episode ends when it falls, 1000 steps
    # at most; the threshold is 950 over 100 episodes. As for Pendulum, Q-values near 100 make
    # the critic's clipped gradient (norm 1) crawl, so rewards are learned at a tenth. The
    # training episodes themselves must average 950, and noise on the cart's force topples the
    # pole sooner: small OU noise (sigma 0.1), decaying by 1% an episode to a hundredth. Plain
    # DDPG learned the pole and then lost it (episode averages 850 -> 700 -> 365; 2 of 3 seeds
    # solved, at 576 and 761): layer norm in the critic and the schedule (no updates after a
    # perfect 1000-step episode, as on Reacher) hold it, 5/5 at 271-357 episodes
    # (benchmarks/results/tuning_log/tuning_log.md).
    "InvertedPendulum-v5": Task(
        config={**STEP_BY_STEP, "warmup": 1000, "noise_sigma": 0.1, "noise_decay": 0.99, "noise_min": 0.01,
                "critic_layer_norm": True},
        episodes=1500, reward_scale=0.1, good_score=1000.0,
        why="+1 per step upright: rewards learned at a tenth; small OU noise decaying 1%/episode to 0.01, since "
            "the training episodes must average 950; layer norm in the critic and no updates after a perfect "
            "episode hold what it learned"),
    # Two poles on a cart: about 9.35 per step while they stand (10 less distance and velocity
    # penalties), the threshold 9100 over 100 episodes. The pendulum's recipe as it is, with the
    # schedule's bar at 9200, above the threshold and below a perfect episode: 5/5 at 315-849
    # episodes. Without layer norm and the schedule, averages stayed under 900 for 1,350-3,000
    # episodes (benchmarks/results/tuning_log/tuning_log.md).
    "InvertedDoublePendulum-v5": Task(
        config={**STEP_BY_STEP, "warmup": 1000, "noise_sigma": 0.1, "noise_decay": 0.99, "noise_min": 0.01,
                "critic_layer_norm": True},
        episodes=5000, reward_scale=0.1, good_score=9200.0,
        why="about 9.35 per step upright: rewards learned at a tenth; small OU noise decaying 1%/episode to 0.01; "
            "layer norm in the critic and no updates after an episode of 9200 or more"),
    # Gymnasium's two-joint reacher: 50-step episodes, a new target each, the reward minus the
    # fingertip's distance to it (and 0.1 a^2); the threshold -3.75 over 100 episodes. Small OU
    # noise decaying by 0.1% an episode (to 0.02 of it), since the training episodes themselves
    # must average -3.75. What closed the last gap was the horizon: with gamma 0.99 (and layer
    # norm) the average stalled at -4.5 to -4.9 from episode 2,000 to 4,000; with 0.95, a horizon
    # of about 20 steps inside the 50-step episode, it passed -3.75 (benchmarks/results/tuning_log/tuning_log.md).
    "Reacher-v5": Task(
        config={**STEP_BY_STEP, "warmup": 1000, "noise_sigma": 0.1, "noise_decay": 0.999, "noise_min": 0.02,
                "critic_layer_norm": True, "gamma": 0.95},
        episodes=4000,
        why="50-step episodes, a new target each: gamma 0.95 (a horizon of ~20 steps), small OU noise decaying "
            "0.1%/episode to 0.02, layer norm in the critic; budget 4000 episodes (200,000 steps)"),
}


# The course's version 1: the built-in Reacher with one arm (train.py --agents 1). One arm
# gathers a twentieth of the experience per step, and the 20-arm defaults learn nothing on
# it: with the critic's learning rate at 1e-3 the single arm's 25-episode averages stayed
# below 4 for 176-200 episodes, with 20 or 10 updates every 20 steps. A slower critic (3e-4), a
# slower actor (3e-4), slower targets (tau 3e-3), half the OU noise and gamma 0.95 learn
# steadily. What one arm lacks most is goals: goal paths (ddpg/variants/goal_paths.py) store
# each episode again against more goal paths, and with them 20 updates every 20 steps (one per
# decision). Four paths solved each of seeds 0-9 earlier than none (median 142 episodes against
# 188), at about 1.5 times the wall-clock; nine, with no more updates per episode, solved seven
# of them earlier still (median 136 episodes against 142 with four) and fell less after a first
# 30 (Report.md, "One arm"). The schedule stays off: one arm's episodes are too noisy to call a
# policy good from one of them.
REACHER_ONE_ARM = Task(
    config={"lr_critic": 3e-4, "lr_actor": 3e-4, "tau": 3e-3, "noise_sigma": 0.1, "learn_updates": 20,
            "n_step": 1, "warmup": 2560, "critic_layer_norm": False, "gamma": 0.95, "goal_paths": 9},
    target=30.0, episodes=500, good_score=None,
    why="one arm: slower critic, actor and targets, half the OU noise, gamma 0.95; each episode stored again "
        "against 9 more goal paths, and one update per step")


def reacher_task(n_agents: int) -> Task | None:
    """The built-in Reacher's settings for ``n_agents`` arms: the one-arm version's own
    (``REACHER_ONE_ARM``), else None (DDPGConfig's defaults, tuned on 20 arms)."""
    return REACHER_ONE_ARM if n_agents == 1 else None


def reacher_goals() -> Any:
    """What relabelling Reacher's goals needs of the scene (``reacher/goals.py``: the hand, a goal's
    path, its reward), for the goal paths variant; imported when asked for (it loads MuJoCo)."""
    from reacher import goals

    return goals


def task_for(env_id: str) -> Task:
    """The settings of ``env_id`` (``DEFAULT`` for a task not in ``TASKS``)."""
    return TASKS.get(env_id, DEFAULT)


def open_environment(env_id: str = DEFAULT_ENV, n: int = 20, seed: int = 0, render: bool = False,
                     unity: str | None = None, verbose: bool = False, own_episodes: bool | None = None,
                     max_episode_steps: int | None = None) -> Any:
    """The one way to open a run's environment: the built-in Reacher with ``n`` arms
    (``env_id`` "reacher"), the Unity binary at ``unity`` instead (through the genuine
    unityagents client; it fixes the number of arms), or ``n`` copies of a Gymnasium task
    (rendering frames for videos with ``render``); ``verbose`` prints the built-in Reacher's
    description as Unity did; ``own_episodes``: a Gymnasium task's copies restart one at a time
    (None: as ``TASKS`` says), each episode cut at ``max_episode_steps`` (None: the task's limit).
    ValueError for an unknown task; RuntimeError
    or ImportError when the Unity binary cannot be driven."""
    if env_id == DEFAULT_ENV:
        from reacher.launch import make_env

        if unity is not None:
            return make_env(unity, num_agents=n, seed=seed)
        return make_env("builtin", num_agents=n, seed=seed, verbose=verbose)
    limit = {} if max_episode_steps is None else {"max_episode_steps": max_episode_steps}
    return GymEnvironment(env_id, num_envs=n, seed=seed, render_mode="rgb_array" if render else None,
                          own_episodes=own_episodes, **limit)


def environment_spec(env_id: str) -> Any:
    """Gymnasium's spec of ``env_id`` (its episode limit, its threshold); ValueError naming the
    expected form for an id Gymnasium does not know."""
    import gymnasium as gym

    import crawler  # noqa: F401 (importing it registers UnityCrawler-v0)
    import reacher  # noqa: F401 (importing it registers UnityReacher-v0)
    try:
        return gym.spec(env_id)
    except gym.error.Error as exc:
        raise ValueError(f"unknown Gymnasium environment {env_id!r} ({exc}); expected an id such as "
                         f"MountainCarContinuous-v0, Pendulum-v1 or Reacher-v5") from None


class GymEnvironment:
    """A Gymnasium task behind the unityagents 0.4 interface (see the module docstring).

    ``GymEnvironment(env_id, num_envs, seed)``: ``num_envs`` copies of the task (the task's
    native vector environment when it registers one, such as ``UnityReacher-v0``, else
    Gymnasium's ``SyncVectorEnv``), seeded ``seed, seed + 1, ...`` at the first reset (a
    native vector environment takes ``seed`` alone).
    ``make_kwargs`` go to ``gymnasium.make_vec`` (e.g. ``goal_size`` for UnityReacher-v0).
    """

    def __init__(self, env_id: str, num_envs: int = 1, seed: int = 0, render_mode: str | None = None,
                 scale_observations: bool | None = None, own_episodes: bool | None = None, **make_kwargs: Any) -> None:
        import gymnasium as gym
        from gymnasium.vector import AutoresetMode

        spec = environment_spec(env_id)
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        mode = "vector_entry_point" if spec.vector_entry_point is not None else "sync"
        kwargs = dict(make_kwargs)
        if render_mode is not None:
            kwargs["render_mode"] = render_mode
            # Offscreen frames need no window: keep pygame's SDL (classic control) off the display.
            os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        self.env_id, self.spec, self.num_envs, self.seed = env_id, spec, int(num_envs), int(seed)
        self._native = mode == "vector_entry_point"
        self.own_episodes = bool(task_for(env_id).own_episodes if own_episodes is None else own_episodes)
        if self.own_episodes:  # the loop restarts each copy itself (restart_agents)
            if self._native:
                kwargs["autoreset_mode"] = AutoresetMode.DISABLED
            else:
                kwargs["vector_kwargs"] = {**kwargs.get("vector_kwargs", {}), "autoreset_mode": AutoresetMode.DISABLED}
        self.envs = gym.make_vec(env_id, num_envs=self.num_envs, vectorization_mode=mode, **kwargs)
        try:
            self._check_spaces(gym)
        except ValueError:
            self.envs.close()
            raise
        box = self.envs.single_action_space
        self._action_mid = ((box.high + box.low) / 2.0).astype(np.float64)
        self._action_half = ((box.high - box.low) / 2.0).astype(np.float64)
        obs_box = self.envs.single_observation_space
        if scale_observations is None:
            scale_observations = task_for(env_id).scale_observations
        self.scale_observations = bool(scale_observations)
        if self.scale_observations:
            finite = np.isfinite(obs_box.low) & np.isfinite(obs_box.high)
            mid = np.where(finite, (obs_box.high + obs_box.low) / 2.0, 0.0)
            half = np.where(finite, (obs_box.high - obs_box.low) / 2.0, 1.0)
            self._obs_mid, self._obs_half = mid.astype(np.float64), half.astype(np.float64)
        self.state_size = int(np.prod(obs_box.shape))
        self.action_size = int(np.prod(box.shape))
        self.brain_names = [env_id]
        self.brains = {env_id: BrainParameters(
            brain_name=env_id, vector_observation_space_size=self.state_size, num_stacked_vector_observations=1,
            vector_action_space_size=self.action_size)}
        self._seeded = False
        self._observations: np.ndarray | None = None

    def _check_spaces(self, gym: Any) -> None:
        act, obs = self.envs.single_action_space, self.envs.single_observation_space
        if not isinstance(act, gym.spaces.Box) or not np.all(np.isfinite(act.low) & np.isfinite(act.high)):
            raise ValueError(f"{self.env_id} has action space {act}; DDPG needs a bounded Box of continuous actions")
        if not isinstance(obs, gym.spaces.Box):
            raise ValueError(f"{self.env_id} has observation space {obs}; expected a Box (a vector of numbers)")

    # ------------------------------------------------------------- unityagents interface
    def reset(self, train_mode: bool = True, **_: Any) -> dict[str, BrainInfo]:
        """Start an episode in every sub-environment (seeded at the first call only)."""
        seed = None
        if not self._seeded:  # a native vector environment takes one seed, Gymnasium's sync one a list
            seed = self.seed if self._native else [self.seed + i for i in range(self.num_envs)]
        observations, _info = self.envs.reset(seed=seed)
        self._seeded = True
        n = self.num_envs
        return {self.env_id: self._info(observations, np.zeros(n), np.zeros(n, bool), np.zeros(n, bool))}

    def step(self, vector_action: Any) -> dict[str, BrainInfo]:
        """One decision of every sub-environment; ``vector_action`` in [-1, 1], (num_envs, action_size)."""
        actions = np.asarray(vector_action, dtype=np.float64).reshape(self.num_envs, self.action_size)
        scaled = (self._action_mid + self._action_half * np.clip(actions, -1.0, 1.0))
        scaled = scaled.reshape((self.num_envs, *self.envs.single_action_space.shape))
        observations, rewards, terminated, truncated, _info = self.envs.step(
            scaled.astype(self.envs.single_action_space.dtype))
        terminated, truncated = np.asarray(terminated, bool), np.asarray(truncated, bool)
        return {self.env_id: self._info(observations, np.asarray(rewards, np.float64), terminated | truncated,
                                        truncated & ~terminated)}

    def restart_agents(self, which: Any) -> np.ndarray:
        """Restart the chosen copies (a boolean mask over them) now, the others going on; their first
        observations as the agent sees them. Only with ``own_episodes`` (autoreset disabled)."""
        if not self.own_episodes:
            raise RuntimeError(f"{self.env_id} was opened with synchronous episodes (autoreset); "
                               "restart_agents needs own_episodes=True")
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[np.asarray(which)] = True
        observations, _info = self.envs.reset(options={"reset_mask": mask})
        return self.observation_to_agent(np.reshape(observations, (self.num_envs, self.state_size)))[mask]

    def observation_to_agent(self, observations: np.ndarray) -> np.ndarray:
        """Observations in the task's units (..., state_size) as the agent sees them."""
        states = np.asarray(observations, dtype=np.float64)
        return (states - self._obs_mid) / self._obs_half if self.scale_observations else states

    def observation_from_agent(self, states: np.ndarray) -> np.ndarray:
        """The inverse of ``observation_to_agent``: back to the task's units."""
        states = np.asarray(states, dtype=np.float64)
        return states * self._obs_half + self._obs_mid if self.scale_observations else states

    def _info(self, observations: np.ndarray, rewards: np.ndarray, done: np.ndarray,
              max_reached: np.ndarray) -> BrainInfo:
        states = self.observation_to_agent(np.reshape(observations, (self.num_envs, self.state_size)))
        return BrainInfo(vector_observations=states, rewards=rewards.tolist(), local_done=done.tolist(),
                         max_reached=max_reached.tolist(), agents=list(range(self.num_envs)),
                         previous_vector_actions=np.zeros((self.num_envs, self.action_size)))

    @property
    def fps(self) -> float:
        """Frames per second of real time in the task's videos (its ``render_fps``)."""
        return float(self.envs.metadata.get("render_fps") or 30)

    def render(self, width: int = 640, height: int = 480) -> np.ndarray:
        """The first sub-environment's frame (its own size: Gymnasium fixes it at ``make``)."""
        frames = self.envs.render()
        if frames is None:
            raise RuntimeError(f"{self.env_id} was made without render_mode='rgb_array'; nothing to render")
        return np.asarray(frames[0])

    @property
    def random_state(self) -> dict[str, Any]:
        """The sub-environments' random generators, saved with a run so a resumed run meets
        the starts the uninterrupted one would."""
        if self._native:  # e.g. UnityReacher-v0: one generator for all its arms
            return {"seeded": self._seeded, "native": self.envs.random_state}
        return {"seeded": self._seeded, "np_random": [e.unwrapped.np_random.bit_generator.state for e in self.envs.envs]}

    @random_state.setter
    def random_state(self, state: dict[str, Any]) -> None:
        if self._native:
            self.envs.random_state = state["native"]
        else:
            for env, saved in zip(self.envs.envs, state["np_random"], strict=True):
                env.unwrapped.np_random.bit_generator.state = saved
        self._seeded = bool(state["seeded"])

    def close(self) -> None:
        self.envs.close()

    def __enter__(self) -> GymEnvironment:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


__all__ = ["DEFAULT", "DEFAULT_ENV", "REACHER_DECISIONS", "REACHER_ONE_ARM", "REACHER_TARGET", "TASKS", "GymEnvironment",
           "Task", "environment_spec", "open_environment", "reacher_goals", "reacher_task", "task_for"]
