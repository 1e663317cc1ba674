"""The built-in Reacher behind Gymnasium's interface: `UnityReacher-v0`.

    import gymnasium as gym
    import reacher  # registers UnityReacher-v0 (or gym.make("reacher:UnityReacher-v0") alone)

    env = gym.make("UnityReacher-v0")                       # one arm, a gymnasium.Env
    envs = gym.make_vec("UnityReacher-v0", num_envs=20, vectorization_mode="vector_entry_point")

Both wrap `ReacherEnvironment` (same physics, same observation: its docstring has the
table), so figures measured through either interface are the same task. The vector
environment is native: all its arms live in one model and step in one compiled call,
with no subprocesses.

Spaces and episodes:
    observation: Box(-inf, inf, (33,), float32), the original's 33 values per arm;
    action: Box(-1, 1, (4,), float32), torques 150 (a0, 0, a1) on the upper segment and
        150 (a2, 0, a3) on the lower one, about world axes;
    reward: per decision, 0.01 for each of its 4 physics steps with the hand in the goal
        (0 to 0.04; an episode scores at most about 40);
    terminated: always False (the task has no terminal state);
    truncated: True at decision 1000, the original's episode length. The spec says so
        (``max_episode_steps=1000``, with ``reward_threshold=30.0``, the course's solve
        score), so ``make`` adds Gymnasium's TimeLimit at the same step; the vector
        environment takes ``max_episode_steps`` (at most 1000) as ``make_vec`` passes it.

Seeding: `reset(seed=s)` re-seeds the goals' start angles and speeds (the only random
draws of the task); the same seed and actions give the same observations.
`goal_size` and `goal_speed` (the original's reset parameters) are keyword arguments
of `make`/`make_vec`.

Vector autoreset (Gymnasium 1.x's default, `AutoresetMode.NEXT_STEP`): every arm's
episode ends at the same decision, so after a step that returns `truncated` all True,
the next `step` ignores its actions, starts new episodes for every arm and returns
their first observations with reward 0 and `terminated`/`truncated` all False.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from envkit.gym import checked_render_mode
from reacher import BRAIN_NAME
from reacher import observation as obs
from reacher.environment import ACTION_SIZE, EPISODE_DECISIONS, PHYSICS_DT, PHYSICS_STEPS_PER_DECISION, ReacherEnvironment

RENDER_FPS = 1.0 / (PHYSICS_DT * PHYSICS_STEPS_PER_DECISION)  # 12.5 decisions per simulated second

OBSERVATION_SPACE = spaces.Box(-np.inf, np.inf, (obs.OBSERVATION_SIZE,), np.float32)
ACTION_SPACE = spaces.Box(-1.0, 1.0, (ACTION_SIZE,), np.float32)


class ReacherGymEnv(gym.Env):
    """One Reacher arm as a `gymnasium.Env` (the course's version 1); see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": RENDER_FPS}

    def __init__(self, goal_size: float = 5.0, goal_speed: float = 1.0, render_mode: str | None = None,
                 width: int = 640, height: int = 480) -> None:
        self.observation_space = OBSERVATION_SPACE
        self.action_space = ACTION_SPACE
        self.render_mode = checked_render_mode(render_mode)
        self._size = (width, height)
        self._env = ReacherEnvironment(num_agents=1, seed=0, goal_size=goal_size, goal_speed=goal_speed,
                                       verbose=False, show_viewer=False)
        self._decisions = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._env.seed_goals(int(seed))
        self._decisions = 0
        info = self._env.reset(train_mode=True)[BRAIN_NAME]
        return info.vector_observations[0].astype(np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._decisions >= EPISODE_DECISIONS:
            raise RuntimeError("the episode is over (truncated at decision 1000): call reset() before step()")
        info = self._env.step(np.asarray(action, dtype=np.float64).reshape(1, ACTION_SIZE))[BRAIN_NAME]
        self._decisions += 1
        truncated = self._decisions >= EPISODE_DECISIONS
        return info.vector_observations[0].astype(np.float32), float(info.rewards[0]), False, truncated, {}

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        return self._env.render(*self._size)

    def close(self) -> None:
        self._env.close()


class ReacherVectorEnv(VectorEnv):
    """`num_envs` Reacher arms in one model as a native `gymnasium.vector.VectorEnv`."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": RENDER_FPS,
                                          "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 20, goal_size: float = 5.0, goal_speed: float = 1.0,
                 render_mode: str | None = None, width: int = 640, height: int = 480,
                 max_episode_steps: int = EPISODE_DECISIONS) -> None:
        self.render_mode = checked_render_mode(render_mode)
        if isinstance(max_episode_steps, bool) or not isinstance(max_episode_steps, int) \
                or not 1 <= max_episode_steps <= EPISODE_DECISIONS:
            raise ValueError(f"max_episode_steps must be a whole number from 1 to {EPISODE_DECISIONS} (the original's "
                             f"episode length), got {max_episode_steps!r}")
        self.max_episode_steps = max_episode_steps
        self.num_envs = int(num_envs)
        self.single_observation_space = OBSERVATION_SPACE
        self.single_action_space = ACTION_SPACE
        self.observation_space = batch_space(OBSERVATION_SPACE, self.num_envs)
        self.action_space = batch_space(ACTION_SPACE, self.num_envs)
        self._size = (width, height)
        self._env = ReacherEnvironment(num_agents=self.num_envs, seed=0, goal_size=goal_size, goal_speed=goal_speed,
                                       verbose=False, show_viewer=False)
        self._decisions = 0
        self._needs_reset = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._env.seed_goals(int(seed))
        return self._restart(), {}

    @property
    def random_state(self) -> dict[str, Any]:
        """The goals' random generator state (saved with a training run, for resuming)."""
        return self._env.random_state

    @random_state.setter
    def random_state(self, state: dict[str, Any]) -> None:
        self._env.random_state = state

    def _restart(self) -> np.ndarray:
        self._decisions = 0
        self._needs_reset = False
        return self._env.reset(train_mode=True)[BRAIN_NAME].vector_observations.astype(np.float32)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        n = self.num_envs
        if self._needs_reset:  # next-step autoreset: the actions of this call are ignored
            return self._restart(), np.zeros(n), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool), {}
        info = self._env.step(np.asarray(actions, dtype=np.float64).reshape(n, ACTION_SIZE))[BRAIN_NAME]
        self._decisions += 1
        self._needs_reset = self._decisions >= self.max_episode_steps
        truncated = np.full(n, self._needs_reset)
        return (info.vector_observations.astype(np.float32), np.asarray(info.rewards, dtype=np.float64),
                np.zeros(n, dtype=bool), truncated, {})

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        return self._env.render(*self._size)

    def close_extras(self, **kwargs: Any) -> None:
        self._env.close()
