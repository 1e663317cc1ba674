"""Each task's settings, and the one way to open a run's environment.

    python train.py --env MountainCarContinuous-v0 --out runs/mcc
    python train.py --env Pendulum-v1 --num-envs 4 --out runs/pendulum

``ddpg.loop.train``, ``ddpg.reporting.playing.run_episode`` and ``evaluate`` talk to environments
through the unityagents 0.4 interface; a Gymnasium task speaks it through the kit's adapter
(``envkit.gym_as_unity.GymEnvironment``: actions mapped onto the task's bounds, endings, episodes
and observations as its docstring says), so one training loop serves the built-in Reacher, the
Unity binary and every Gymnasium task. ``open_environment`` opens each with its task's choices:
the adapter knows no task.

``TASKS`` is the one place that holds per-task choices (hyperparameters, observation
scaling, whether each copy lives its own episodes, the solve threshold, the episode budget); a
task not listed gets ``DEFAULT``. Rewards reach the agent as the task gives them; a task's
``reward_scale`` is applied by the training loop, to what is learned, not to the scores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envkit.gym_as_unity import GymEnvironment, gymnasium_spec
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
    _register_scenes()
    task = task_for(env_id)
    limit = {} if max_episode_steps is None else {"max_episode_steps": max_episode_steps}
    return GymEnvironment(env_id, num_envs=n, seed=seed, render_mode="rgb_array" if render else None,
                          scale_observations=task.scale_observations,
                          own_episodes=task.own_episodes if own_episodes is None else own_episodes, **limit)


def environment_spec(env_id: str) -> Any:
    """Gymnasium's spec of ``env_id`` (its episode limit, its threshold), the scenes' ids among
    those it knows; ValueError naming the expected form for an id Gymnasium does not know."""
    _register_scenes()
    return gymnasium_spec(env_id)


def _register_scenes() -> None:
    """The scenes register their Gymnasium ids when imported: a run may name them before anything else did."""
    import crawler  # noqa: F401 (importing it registers UnityCrawler-v0)
    import reacher  # noqa: F401 (importing it registers UnityReacher-v0)


__all__ = ["DEFAULT", "DEFAULT_ENV", "REACHER_DECISIONS", "REACHER_ONE_ARM", "REACHER_TARGET", "TASKS", "Task",
           "environment_spec", "open_environment", "reacher_goals", "reacher_task", "task_for"]
